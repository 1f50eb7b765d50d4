# Imported from helmfile.yaml.gotmpl by `convoy import helmfile`.
#
# Left by hand (9): templates are kept as comments (LEFT BY HAND) where they stood.
#   - environments.yaml.gotmpl:10: {{ requiredEnv "TAG" }}: an environment block sees only environment.name, not variables
#   - helmfile.yaml.gotmpl:8: {{ if .Values.x }}x: y{{ end }}: if block
#   - helmfile.yaml.gotmpl:11: helmDefaults: kubeContext is not imported
#   - helmfile.yaml.gotmpl:17: {{- if eq .Environment.Name "prod" }} ...: if block
#   - helmfile.yaml.gotmpl:40: {{- if .Values.debug }} ...: if block
#   - helmfile.yaml.gotmpl:43: {{ .Values.x | b64enc }}: the function b64enc has no translation
#   - helmfile.yaml.gotmpl:46: {{- toYaml .Values.extraValues | nindent 8 }}: it splices YAML into what surrounds it: merge it by hand
#   - helmfile.yaml.gotmpl:49: {{ range $i, $e := list 1 2 }} ...: range block
#   - values/api.yaml.gotmpl:6: {{- if eq .Environment.Name "prod" }} ...: if block

variable "domain" {
  default     = null
  description = "environment value domain (from helmfile environments)"
}

variable "owner" {
  default     = null
  description = "environment value owner (from helmfile environments)"
}

variable "replicas" {
  default     = null
  description = "environment value replicas (from helmfile environments)"
}

variable "apiEnabled" {
  default     = null
  description = "helmfile value apiEnabled (no environment sets it)"
}

variable "dbVersion" {
  default     = null
  description = "helmfile value dbVersion (no environment sets it)"
}

variable "extra" {
  default     = null
  description = "helmfile value extra (no environment sets it)"
}

variable "resources" {
  default     = null
  description = "helmfile value resources (no environment sets it)"
}

variable "timeout" {
  default     = null
  description = "helmfile value timeout (no environment sets it)"
}

# {{ requiredEnv "IMAGE_TAG" }}: set CONVOY_VAR_IMAGE_TAG (or --var IMAGE_TAG=...)
variable "IMAGE_TAG" {
  type        = string
  description = "the environment variable IMAGE_TAG (helmfile requiredEnv)"
}

# {{ env "TAG" }}: set CONVOY_VAR_TAG (or --var TAG=...)
variable "TAG" {
  type        = string
  default     = ""
  description = "the environment variable TAG (helmfile env)"
}

environment "default" {
  vars = {
    domain   = "dev.example.com"
    replicas = 1
  }
}

environment "prod" {
  vars = {
    domain   = "example.com"
    replicas = 3
    owner    = "${environment.name}-team"
    # LEFT BY HAND (environments.yaml.gotmpl:10, an environment block sees only environment.name, not variables):
    # tag: {{ requiredEnv "TAG" }}
  }
}

# {{/* repositories come from the platform team */}}
# LEFT BY HAND (helmfile.yaml.gotmpl:17, if block):
# {{- if eq .Environment.Name "prod" }}
# - name: extra
#   url: https://extra.example.com
# {{- end }}
repository "charts" {
  url = "https://charts.example.com/${environment.name}"
}

release "db" {
  namespace = "shop-${environment.name}"
  chart     = "charts/db"
  version   = (var.dbVersion == null || var.dbVersion == "" || var.dbVersion == false || var.dbVersion == 0 ? "1.0.0" : var.dbVersion)
  labels = {
    tier  = "data"
    owner = upper(format("%s-%s", "team", environment.name))
  }
  wait = true
}

release "api" {
  name       = "api"
  namespace  = "shop-${environment.name}"
  chart      = "charts/api"
  depends_on = [release.db]
  values = [
    templatefile("values/api.yaml.tpl", { var = { IMAGE_TAG = var.IMAGE_TAG, domain = var.domain, extra = var.extra, replicas = var.replicas }, environment = { name = environment.name }, release = { name = "api", namespace = "shop-${environment.name}" } }),
    file("values/${environment.name}.yaml"),
    {
      image = {
        tag  = (var.TAG == null || var.TAG == "" || var.TAG == false || var.TAG == 0 ? "latest" : var.TAG)
        pull = "${var.replicas}"
      }
    },
    {
      # LEFT BY HAND (helmfile.yaml.gotmpl:43, the function b64enc has no translation):
      # - weird: {{ .Values.x | b64enc }}
    },
    {
      resources = var.resources
    },
  ]
  # LEFT BY HAND (helmfile.yaml.gotmpl:40, if block):
  # {{- if .Values.debug }}
  # debug: true
  # {{- end }}
  # LEFT BY HAND (helmfile.yaml.gotmpl:46, it splices YAML into what surrounds it: merge it by hand):
  # {{- toYaml .Values.extraValues | nindent 8 }}
  count   = var.apiEnabled ? 1 : 0
  timeout = "${var.timeout}s"
  wait    = true
}

# LEFT BY HAND (helmfile.yaml.gotmpl:49, range block):
# {{ range $i, $e := list 1 2 }}
#   - name: worker-{{ $i }}
#     chart: charts/worker
# {{ end }}
release "jobs" {
  name  = "jobs"
  chart = "charts/jobs"
  count = 0
  wait  = true
}

# LEFT BY HAND (helmfile.yaml.gotmpl:8, if block):
# {{ if .Values.x }}x: y{{ end }}
