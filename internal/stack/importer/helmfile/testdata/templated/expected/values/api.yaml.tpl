replicas: ${var.replicas}
host: api.${var.domain}
env: ${jsonencode(tostring(environment.name))}
fullname: ${release.name}-${release.namespace}
tag: ${var.IMAGE_TAG}
# LEFT BY HAND (values/api.yaml.gotmpl:6, if block):
# {{- if eq .Environment.Name "prod" }}
# resources:
#   limits: {cpu: 1}
# {{- end }}
extra: ${chomp(yamlencode(var.extra))}
literal: "$${not.hcl}"
