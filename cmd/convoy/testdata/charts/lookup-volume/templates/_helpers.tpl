{{- define "lookup-volume.volumeName" -}}
{{- with (lookup "v1" "PersistentVolumeClaim" .Release.Namespace .Release.Name) -}}
{{- .spec.volumeName -}}
{{- end -}}
{{- end -}}
