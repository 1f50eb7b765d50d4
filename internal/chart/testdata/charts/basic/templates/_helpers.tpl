{{/* Expand the name of the chart. */}}
{{- define "basic.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "basic.fullname" -}}
{{- if contains (include "basic.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "basic.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "basic.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "basic.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.labels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "basic.countdown" -}}
{{- if gt (int .) 0 -}}
{{ . }} {{ include "basic.countdown" (sub (int .) 1) }}
{{- else -}}
liftoff
{{- end -}}
{{- end }}
