package controllertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/testfiles"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Team is a namespace with a service account "deployer" whose Role
// allows everything on the core and apps kinds of that namespace, and
// nothing anywhere else: a tenant as a platform team sets one up.
func Team(t *testing.T, c client.Client) string {
	t.Helper()
	ns := Cluster.Namespace(t)
	Create(t, c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns}})
	Create(t, c, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"", "apps"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
	})
	Create(t, c, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "deployer"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: ns}},
	})
	return ns
}

// TestedChart writes a chart with test hooks into dir: a bare Pod (the
// shape helm create gives a test) and a Job that pass and, with failTest,
// a pod that fails (the devcluster's kubelet fails pods labelled
// devcluster.convoy.dev/fail).
func TestedChart(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: tested\nversion: 0.1.0\n",
		"values.yaml": "failTest: false\nversion: none\n",
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  version: {{ .Values.version | quote }}
`,
		"templates/test-job.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-test-connection
  annotations:
    helm.sh/hook: test
    helm.sh/hook-weight: "1"
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: check
          image: registry.example/busybox:1
          command: ["wget", "{{ .Release.Name }}:80"]
`,
		"templates/tests/test-pod.yaml": `apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test-pod
  annotations:
    helm.sh/hook: test
spec:
  restartPolicy: Never
  containers:
    - name: wget
      image: registry.example/busybox:1
      command: ["wget", "{{ .Release.Name }}:80"]
`,
		"templates/test-fail.yaml": `{{- if .Values.failTest }}
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test-fail
  labels:
    devcluster.convoy.dev/fail: "true"
  annotations:
    helm.sh/hook: test
    helm.sh/hook-weight: "2"
spec:
  restartPolicy: Never
  containers:
    - name: check
      image: registry.example/busybox:1
      command: ["false"]
{{- end }}
`,
	}
	testfiles.Write(t, dir, files)
}

// PromotedStack writes a stack of one release per environment (staging,
// prod-a, prod-b), each in its own namespace, at a version whose test
// hook fails or passes.
func PromotedStack(t *testing.T, ns, version string, failTest bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "stack")
	TestedChart(t, filepath.Join(dir, "charts", "tested"))
	hcl := fmt.Sprintf(`
stack "shop" {}
environment "staging" {}
environment "prod-a" {}
environment "prod-b" {}
release "app" {
  chart            = "./charts/tested"
  namespace        = "%s-${environment.name}"
  create_namespace = true
  values           = [{ failTest = %t, version = %q }]
}
`, ns, failTest, version)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// GetPipeline reads a Pipeline or fails t.
func GetPipeline(t *testing.T, c client.Client, ns, name string) *v1alpha1.Pipeline {
	t.Helper()
	var p v1alpha1.Pipeline
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// DescribePipeline is the Pipeline's status as a test's failure shows
// it.
func DescribePipeline(p *v1alpha1.Pipeline) string {
	var b strings.Builder
	for _, c := range p.Status.Conditions {
		fmt.Fprintf(&b, "\n  %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	if l := p.Status.Latest; l != nil {
		fmt.Fprintf(&b, "\n  latest %s %s", l.Tag, l.Digest)
	}
	for _, s := range p.Status.Stages {
		fmt.Fprintf(&b, "\n  stage %s: %s %s (%s) verified %s", s.Name, s.Phase, s.Digest, s.Message, s.Verified)
		if g := s.FailedGate; g != nil {
			fmt.Fprintf(&b, "\n    gate %s: %s", g.Gate, g.Output)
		}
	}
	for _, s := range p.Status.Stacks {
		fmt.Fprintf(&b, "\n  stack %s/%s: %s ready=%t", s.Namespace, s.Name, s.Digest, s.Ready)
	}
	return b.String()
}

// WaitPipeline waits until ok holds for the Pipeline.
func WaitPipeline(t *testing.T, c client.Client, ns, name string, timeout time.Duration, what string, ok func(*v1alpha1.Pipeline) bool) *v1alpha1.Pipeline {
	t.Helper()
	var p *v1alpha1.Pipeline
	devtest.Eventually(t, timeout, func() bool {
		p = GetPipeline(t, c, ns, name)
		return ok(p)
	}, func() string {
		return fmt.Sprintf("Pipeline %s/%s: not %s after %s:%s", ns, name, what, timeout, DescribePipeline(p))
	})
	return p
}

// StageIs holds when the Pipeline's stage name is in phase at digest.
func StageIs(name string, phase v1alpha1.StagePhase, digest string) func(*v1alpha1.Pipeline) bool {
	return func(p *v1alpha1.Pipeline) bool {
		for _, s := range p.Status.Stages {
			if s.Name == name {
				return s.Phase == phase && s.Digest == digest
			}
		}
		return false
	}
}
