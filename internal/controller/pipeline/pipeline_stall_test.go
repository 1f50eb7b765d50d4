package pipeline_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/testfiles"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// slowTestStack writes a stack of three environments (staging, prod-a,
// prod-b) of one release in namespace var.ns whose
// test hook takes a while, as real tests do: its pod runs for testFor
// (the devcluster's kubelet starts it that late), then succeeds.
func slowTestStack(t *testing.T, testFor string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "stack")
	testfiles.Write(t, filepath.Join(dir, "charts", "slow"), map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: slow\nversion: 0.1.0\n",
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  greeting: hello
`,
		"templates/test.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-test
  annotations:
    helm.sh/hook: test
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations:
        devcluster.convoy.dev/ready-after: "` + testFor + `"
    spec:
      restartPolicy: Never
      containers:
        - name: check
          image: registry.example/busybox:1
          command: ["wget", "{{ .Release.Name }}:80"]
`,
	})
	hcl := `
stack "app" {}
environment "staging" {}
environment "prod-a" {}
environment "prod-b" {}
variable "ns" {}
release "app" {
  chart            = "./charts/slow"
  namespace        = var.ns
  create_namespace = true
}
`
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The shape: three Stacks without a source, a Pipeline following
// semver ">=1.0.0" with staging (bake 5s, a test gate) and production
// (maxParallel 1), the controller with its default flags. While
// staging's test runs, the Pipeline's status says so (the gate runs
// apart from its reconciles, which go on writing the status); then
// 1.0.0 leaves staging and reaches production one Stack at a time.
func TestPipelineLeavesStaging(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	for _, name := range []string{"app-staging", "app-prod-a", "app-prod-b"} {
		create(t, c, &v1alpha1.Stack{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1alpha1.StackSpec{
				Approval: v1alpha1.ApprovalAuto, Interval: &metav1.Duration{Duration: 30 * time.Second},
				// One stack, one environment per Stack (a stack and
				// environment is reconciled by one Stack).
				Environment: strings.TrimPrefix(name, "app-"),
				Vars:        map[string]string{"ns": ns + "-" + strings.TrimPrefix(name, "app-")},
			},
		})
		t.Cleanup(func() {
			_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), ns+"-"+strings.TrimPrefix(name, "app-"), metav1.DeleteOptions{})
		})
	}
	one := int32(1)
	create(t, c, &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: v1alpha1.PipelineSpec{
			Source: "oci://" + reg.Host + "/stacks/app",
			Follow: v1alpha1.Follow{Semver: ">=1.0.0"},
			Stages: []v1alpha1.Stage{
				{Name: "staging", Stacks: v1alpha1.StackRefs("app-staging"), Bake: &metav1.Duration{Duration: 5 * time.Second},
					Gates: []v1alpha1.Gate{{Test: &v1alpha1.TestGate{}}}},
				{Name: "production", Stacks: v1alpha1.StackRefs("app-prod-a", "app-prod-b"), MaxParallel: &one},
			},
		},
	})
	log := watchStacks(t, ns)
	// convoy controller's defaults.
	startController(t, ns, func(o *controller.Options) {
		o.QPS, o.Burst, o.Concurrency = run.DefaultQPS, run.DefaultBurst, 4
	})
	d1 := push(t, reg, slowTestStack(t, "20s"), "1.0.0")

	const gate = "gate spec.stages[0].gates[0] (test)"
	p := waitPipeline(t, c, ns, "app", 2*time.Minute, "saying staging's test gate runs", func(p *v1alpha1.Pipeline) bool {
		rc := meta.FindStatusCondition(p.Status.Conditions, "Reconciling")
		return rc != nil && rc.Status == metav1.ConditionTrue && strings.Contains(rc.Message, gate+" running since")
	})
	if !stageIs("staging", v1alpha1.PhaseBaking, d1)(p) || !strings.Contains(p.Status.Stages[0].Message, gate+" running since") {
		t.Fatalf("while the gate runs:%s", describePipeline(p))
	}

	p = waitPipeline(t, c, ns, "app", 3*time.Minute, "verified on 1.0.0 in both stages",
		both(stageIs("staging", v1alpha1.PhaseVerified, d1), stageIs("production", v1alpha1.PhaseVerified, d1)))
	if rc := meta.FindStatusCondition(p.Status.Conditions, "Ready"); rc == nil || rc.Status != metav1.ConditionTrue || meta.FindStatusCondition(p.Status.Conditions, "Reconciling") != nil {
		t.Fatalf("verified everywhere, but:%s", describePipeline(p))
	}
	if n, busy := log.maxInProgress(d1, "app-prod-a", "app-prod-b"); n != 1 {
		t.Fatalf("maxParallel 1: %d production Stacks in progress at once (%s)", n, busy)
	}
}

// A Pipeline whose registry never answers: its reconcile stops at its
// deadline and still writes its status, saying so.
func TestPipelineReconcilePastItsDeadlineWritesItsStatus(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	silent := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(silent.Close)
	create(t, c, &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Name: "app-staging", Namespace: ns}})
	create(t, c, &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: v1alpha1.PipelineSpec{
			Source: "oci://" + strings.TrimPrefix(silent.URL, "http://") + "/stacks/app",
			Follow: v1alpha1.Follow{Semver: ">=1.0.0"},
			Stages: []v1alpha1.Stage{{Name: "staging", Stacks: v1alpha1.StackRefs("app-staging")}},
		},
	})
	startController(t, ns, func(o *controller.Options) { o.PipelineTimeout = 3 * time.Second })
	waitPipeline(t, c, ns, "app", 60*time.Second, "saying its reconcile ran past its deadline", func(p *v1alpha1.Pipeline) bool {
		rc := meta.FindStatusCondition(p.Status.Conditions, "Reconciling")
		return rc != nil && rc.Status == metav1.ConditionTrue && strings.Contains(rc.Message, "the reconcile ran past its deadline of 3s") &&
			p.Status.ObservedGeneration == p.Generation
	})
}
