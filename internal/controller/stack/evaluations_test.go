package stack_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/config/sopstest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// A reconcile parses its stack once, evaluates it once, and decrypts its
// SOPS file once: the reconcile that plans and applies (the inputs'
// declared variables, init, identity, plan, the saved plan's check and
// apply share one parsed and loaded stack), and those that plan and find
// nothing to change.
func TestReconcileEvaluatesStackOnce(t *testing.T) {
	key := sopstest.NewKey(t)
	sopstest.UseKeys(t, key)
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	dir := filepath.Join(t.TempDir(), "stack")
	appChart(t, filepath.Join(dir, "charts", "app"))
	secret := sopstest.Encrypt(t, "secrets.enc.yaml", []byte("message: from-sops\n"), key)
	stack := fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "api" {
  chart  = "./charts/app"
  values = [yamldecode(sops_file("secrets.enc.yaml"))]
}
`, ns)
	for name, content := range map[string][]byte{"stack.hcl": []byte(stack), "secrets.enc.yaml": secret} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	push(t, reg, dir, "live")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:live", nil))

	before, reconciled := config.ReadCounts(), reconcileResults(t)
	stop := startController(t, ns, nil)
	st := waitStack(t, c, ns, "shop", 90*time.Second, "applied", func(st *v1alpha1.Stack) bool {
		return revisionsOf(st) == "api:1:deployed" && isCond("Ready", metav1.ConditionTrue, "")(st)
	})
	if m := configMessage(t, c, ns, "api"); m != "from-sops" {
		t.Fatalf("api message %q%s", m, describe(st))
	}
	// Reconciles that plan again and find nothing to change.
	waitReconciles(t, c, ns, 2, "shop")
	stop()

	got := config.ReadCounts().Sub(before)
	results := reconcileResults(t)
	total := 0.0
	for result, n := range results {
		n -= reconciled[result]
		results[result] = n
		if n > 0 && !slices.Contains([]string{"applied", "uptodate", "idle"}, result) {
			t.Fatalf("a reconcile ended %s: the evaluations cannot be told apart (results %v)", result, results)
		}
		total += n
	}
	t.Logf("%v reconciles (%v): %d parses, %d evaluations, %d SOPS decryptions", total, results, got.Parses, got.Evaluations, got.Decryptions)
	if results["applied"] < 1 || results["uptodate"] < 1 {
		t.Fatalf("reconciles %v: want one that applied and one that found nothing to change", results)
	}
	if float64(got.Parses) != total || float64(got.Evaluations) != total || float64(got.Decryptions) != total {
		t.Fatalf("%v reconciles (%v) parsed the stack %d times, evaluated it %d times and decrypted its SOPS file %d times: want once each per reconcile",
			total, results, got.Parses, got.Evaluations, got.Decryptions)
	}
}

// reconcileResults are the controller's Stack reconciles so far, by
// result (the convoy_controller_reconciles_total counter of this
// process's registry, which every in-process controller shares).
func reconcileResults(t *testing.T) map[string]float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "convoy_controller_reconciles_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" {
					out[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}
