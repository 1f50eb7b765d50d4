{{- define "errors.inner" -}}
value: {{ .Values.nope.deeper }}
{{- end }}
{{- define "errors.loop" -}}
{{ include "errors.loop" . }}
{{- end }}
{{- define "errors.needs" -}}
{{ required "needed inside include" .Values.needed }}
{{- end }}
{{- define "errors.countdown" -}}
{{- if gt (int .) 0 -}}
{{ include "errors.countdown" (sub (int .) 1) }}
{{- else -}}
bottom
{{- end -}}
{{- end }}
