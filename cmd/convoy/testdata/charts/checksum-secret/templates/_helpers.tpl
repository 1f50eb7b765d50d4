{{- /* The live password, else a new one: every call outside a live Secret generates another. */ -}}
{{- define "checksum-secret.password" -}}
{{- $live := lookup "v1" "Secret" .Release.Namespace (printf "%s-auth" .Release.Name) -}}
{{- if and $live $live.data (hasKey $live.data "password") -}}
{{- index $live.data "password" | b64dec -}}
{{- else -}}
{{- randAlphaNum 16 -}}
{{- end -}}
{{- end -}}
