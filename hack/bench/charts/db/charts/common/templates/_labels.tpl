{{- define "common.labels.standard" -}}
{{- $default := dict "app.kubernetes.io/name" (include "common.names.name" .context) "helm.sh/chart" (printf "%s-%s" .context.Chart.Name .context.Chart.Version) "app.kubernetes.io/instance" .context.Release.Name "app.kubernetes.io/managed-by" .context.Release.Service -}}
{{- with .context.Chart.AppVersion -}}{{- $_ := set $default "app.kubernetes.io/version" . -}}{{- end -}}
{{- toYaml (merge (default dict .customLabels) $default) -}}
{{- end -}}
{{- define "common.labels.matchLabels" -}}
{{- toYaml (dict "app.kubernetes.io/name" (include "common.names.name" .context) "app.kubernetes.io/instance" .context.Release.Name) -}}
{{- end -}}
