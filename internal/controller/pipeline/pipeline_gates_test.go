package pipeline_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPipelineHealthGates: a cel gate is evaluated over the live objects
// of each Stack of its stage and a prometheus gate fails closed when its
// address does not answer — each failure names the gate and says why, and
// halts the pipeline.
func TestPipelineHealthGates(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	for _, env := range []string{"staging", "prod-a"} {
		create(t, c, newStack(ns, env, "", func(st *v1alpha1.Stack) { st.Spec.Environment = env }))
		t.Cleanup(func() {
			_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), ns+"-"+env, metav1.DeleteOptions{})
		})
	}
	// An address nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	create(t, c, &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "gated", Namespace: ns},
		Spec: v1alpha1.PipelineSpec{
			Source:   "oci://" + reg.Host + "/stacks/app",
			Follow:   v1alpha1.Follow{Semver: ">=1.0.0"},
			Interval: &metav1.Duration{Duration: 2 * time.Second},
			Stages: []v1alpha1.Stage{
				{Name: "staging", Stacks: v1alpha1.StackRefs("staging"), Gates: []v1alpha1.Gate{
					{CEL: `objects.all(o, o.kind != 'ConfigMap' || o.data.version.startsWith('1.0.'))`},
				}},
				{Name: "production", Stacks: v1alpha1.StackRefs("prod-a"), Gates: []v1alpha1.Gate{
					{Prometheus: &v1alpha1.PrometheusGate{Address: dead, Query: `sum(rate(http_requests_total{code=~"5.."}[5m]))`, Max: 0.01}},
				}},
			},
		},
	})
	startController(t, ns, nil)

	// 1.0.0: the cel gate holds on staging's ConfigMap; production's
	// Prometheus does not answer, so its stage fails.
	d1 := push(t, reg, promotedStack(t, ns, "1.0.0", false), "1.0.0")
	p := waitPipeline(t, c, ns, "gated", 3*time.Minute, "staging verified, production failed on 1.0.0",
		both(stageIs("staging", v1alpha1.PhaseVerified, d1), stageIs("production", v1alpha1.PhaseFailed, d1)))
	g := p.Status.Stages[1].FailedGate
	if g == nil || g.Gate != "spec.stages[1].gates[0] (prometheus)" || !strings.Contains(g.Output, l.Addr().String()) || !strings.Contains(g.Output, "refused") {
		t.Fatalf("production's failed gate:%s", describePipeline(p))
	}
	if got := stackDigest(t, c, ns, "prod-a"); got != d1 {
		t.Fatalf("prod-a runs %s, not 1.0.0's %s", got, d1)
	}

	// 1.1.0 makes the cel expression false on staging's ConfigMap: the
	// stage fails naming the object; production keeps 1.0.0.
	d2 := push(t, reg, promotedStack(t, ns, "1.1.0", false), "1.1.0")
	p = waitPipeline(t, c, ns, "gated", 3*time.Minute, "staging failed on 1.1.0", stageIs("staging", v1alpha1.PhaseFailed, d2))
	g = p.Status.Stages[0].FailedGate
	if g == nil || g.Gate != "spec.stages[0].gates[0] (cel)" || !strings.Contains(g.Output, "Stack staging") ||
		!strings.Contains(g.Output, "is false") || !strings.Contains(g.Output, "v1 ConfigMap "+ns+"-staging/app-config") {
		t.Fatalf("staging's failed gate:%s", describePipeline(p))
	}
	if got := stackDigest(t, c, ns, "staging"); got != d2 {
		t.Fatalf("staging runs %s, not 1.1.0's %s", got, d2)
	}
	settlePipeline(t, c, ns, "gated", 3)
	if got := stackDigest(t, c, ns, "prod-a"); got != d1 {
		t.Fatalf("prod-a runs %s after staging failed, not 1.0.0's %s", got, d1)
	}
}
