{{- define "errors.inner" -}}
value: {{ .Values.nope.deeper }}
{{- end }}
{{- define "errors.loop" -}}
{{ include "errors.loop" . }}
{{- end }}
{{- define "errors.needs" -}}
{{ required "needed inside include" .Values.needed }}
{{- end }}
