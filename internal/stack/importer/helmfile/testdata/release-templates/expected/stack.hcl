# Imported from helmfile.yaml by `convoy import helmfile`.
#
# Left by hand (3): templates are kept as comments (LEFT BY HAND) where they stood.
#   - helmfile.yaml: the local chart /opt/charts/local (release local) is an absolute path: the stack reads it as written, from this machine only
#   - helmfile.yaml:46: {{- if eq .Environment.Name "prod" }} ...: if block
#   - helmfile.yaml:50: {{`{{ .Release.Labels.tier }}`}}: .Release.Labels.tier has no translation (in a release template, rendered per release: {{ .Release.Labels.tier }})

variable "enabled" {
  default     = null
  description = "environment value enabled (from helmfile environments)"
}

# {{ env "API_KEY" }}: set CONVOY_VAR_API_KEY (or --var API_KEY=...)
variable "API_KEY" {
  type        = string
  default     = ""
  description = "the environment variable API_KEY (helmfile env)"
  sensitive   = true
}

# {{ requiredEnv "OAUTH_CLIENT_SECRET" }}: set CONVOY_VAR_OAUTH_CLIENT_SECRET (or --var OAUTH_CLIENT_SECRET=...)
variable "OAUTH_CLIENT_SECRET" {
  type        = string
  description = "the environment variable OAUTH_CLIENT_SECRET (helmfile requiredEnv)"
  sensitive   = true
}

# {{ requiredEnv "REPLICAS" }}: set CONVOY_VAR_REPLICAS (or --var REPLICAS=...)
variable "REPLICAS" {
  type        = string
  description = "the environment variable REPLICAS (helmfile requiredEnv)"
}

environment "default" {
  vars = {
    enabled = true
  }
}

environment "prod" {
}

repository "bitnami" {
  url = "https://charts.bitnami.com/bitnami"
}

release "web" {
  name      = "web"
  namespace = "apps"
  chart     = "bitnami/nginx"
  values = [
    fileexists("values/web/common.yaml") ? file("values/web/common.yaml") : "",
    {
      replicas     = var.REPLICAS
      clientSecret = var.OAUTH_CLIENT_SECRET
      apiKey       = (var.API_KEY == null || var.API_KEY == "" || var.API_KEY == false || var.API_KEY == 0 ? "none" : var.API_KEY)
      motd         = join(",", ["a", "b"])
      debug        = !var.enabled
      both         = (var.enabled && var.enabled)
      isProd       = (environment.name == "prod")
      notProd      = (environment.name != "prod")
      either       = (var.enabled || false)
    },
    fileexists("secrets/web.yaml") ? sops_file("secrets/web.yaml") : "",
  ]
  count = var.enabled == true ? 1 : 0
}

release "api" {
  namespace = "apps"
  chart     = "bitnami/nginx"
  values = [
    fileexists("values/api/common.yaml") ? file("values/api/common.yaml") : "",
    fileexists("values/api/${environment.name}.yaml") ? file("values/api/${environment.name}.yaml") : "",
    fileexists("secrets/api.yaml") ? sops_file("secrets/api.yaml") : "",
  ]
}

release "local" {
  chart     = "/opt/charts/local"
  namespace = "apps"
}

release "flagged" {
  namespace = "apps"
  chart     = "bitnami/nginx"
  values = [
    # LEFT BY HAND (helmfile.yaml:50, .Release.Labels.tier has no translation (in a release template, rendered per release: {{ .Release.Labels.tier }})):
    # - values/{{`{{ .Release.Name }}`}}/{{`{{ .Release.Labels.tier }}`}}.yaml
    {
      first = 1
      # LEFT BY HAND (helmfile.yaml:46, if block):
      # {{- if eq .Environment.Name "prod" }}
      # replicas: 3
      # {{- end }}
      last = 2
    },
    fileexists("secrets/flagged.yaml") ? sops_file("secrets/flagged.yaml") : "",
  ]
}
