{{- define "common-lib.fullname" -}}
{{ .Release.Name }}-{{ .Chart.Name }}
{{- end }}
{{- define "common-lib.labels" -}}
app.kubernetes.io/part-of: {{ .Chart.Name }}
lib-env: {{ .Values.global.env | default "none" }}
{{- end }}
