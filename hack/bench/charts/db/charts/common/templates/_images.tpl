{{- define "common.images.image" -}}
{{- $registry := .imageRoot.registry -}}
{{- with .global }}{{ with .imageRegistry }}{{ $registry = . }}{{ end }}{{ end -}}
{{- $sep := ":" -}}
{{- $term := .imageRoot.tag | toString -}}
{{- if .imageRoot.digest }}{{ $sep = "@" }}{{ $term = .imageRoot.digest | toString }}{{ end -}}
{{- if $registry }}{{ printf "%s/%s%s%s" $registry .imageRoot.repository $sep $term }}{{ else }}{{ printf "%s%s%s" .imageRoot.repository $sep $term }}{{ end -}}
{{- end -}}
{{- define "common.resources.preset" -}}
{{- $presets := dict "nano" (dict "requests" (dict "cpu" "100m" "memory" "128Mi") "limits" (dict "cpu" "150m" "memory" "192Mi")) "small" (dict "requests" (dict "cpu" "500m" "memory" "512Mi") "limits" (dict "cpu" "750m" "memory" "768Mi")) -}}
{{- toYaml (index $presets .type) -}}
{{- end -}}
