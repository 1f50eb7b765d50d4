package testfiles

// AppDeployment is a chart template of one Deployment named after the
// release, of .Values.replicas pods running nginx, whose pods carry
// devcluster's never-ready label when .Values.neverReady is true (they run
// but never become ready, so a wait on the release fails). The test charts
// of internal/controller and internal/run/gate share it; their other
// templates differ (a ConfigMap of .Values.message; a Secret of
// .Values.token), as do the other inline charts of that shape
// (internal/run's objects chart has a post-install hook and no never-ready
// switch; cmd/convoy's slow chart holds its pods unready for a while
// instead).
const AppDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels:
        app: {{ .Release.Name }}
        {{- if .Values.neverReady }}
        devcluster.convoy.dev/never-ready: "true"
        {{- end }}
    spec:
      containers:
        - name: web
          image: "nginx:1.27"
`
