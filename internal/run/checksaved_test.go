package run_test

import (
	"context"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/run"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Checking a saved plan (run.CheckSavedPlan: the controller's check of an
// approved plan) writes nothing, not even the labels a plan found missing
// on the record of an unchanged release; applying the plan, under the
// stack's lock, writes them.
func TestCheckSavedPlanWritesNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	dir := objectsStack(t, ns, "s3cret-check", "")
	o := run.Options{Source: run.Source{Dir: dir}, Clusters: run.ClusterOptions{Kubeconfig: cluster.Kubeconfig()}}
	if applied, err := runApply(ctx, o, run.ApplyRequest{Command: "convoy apply"}); err != nil || applied.Failed() {
		t.Fatalf("apply: %v %+v", err, applied)
	}
	// A record without convoy's labels (helm wrote it, or an older
	// convoy): the plan finds the release unchanged and the labels
	// missing.
	secrets := cluster.Client().CoreV1().Secrets(ns)
	const key = "sh.helm.release.v1.api.v1"
	patch := `{"metadata":{"labels":{"` + release.FingerprintLabel + `":null,"` + release.AppliedLabel + `":null}}}`
	if _, err := secrets.Patch(ctx, key, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	pl, err := runPlan(ctx, o, run.PlanRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var api *plan.ReleaseChange
	for _, rc := range pl.Plan.Releases {
		if rc.Name == "api" {
			api = rc
		}
	}
	if api == nil || api.Action != plan.ActionNoOp || api.Relabel[release.FingerprintLabel] == "" {
		t.Fatalf("the plan of api: %+v, want a no-op that labels its record", api)
	}
	b, err := run.EncodePlan(pl)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := run.DecodePlan(b, "plan.cvp")
	if err != nil {
		t.Fatal(err)
	}
	before, err := secrets.Get(ctx, key, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if err := runVerify(ctx, o, saved); err != nil {
		t.Fatalf("check: %v", err)
	}
	after, err := secrets.Get(ctx, key, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion || after.Labels[release.FingerprintLabel] != "" {
		t.Fatalf("checking the plan wrote the record (resourceVersion %s, now %s; fingerprint label %q)",
			before.ResourceVersion, after.ResourceVersion, after.Labels[release.FingerprintLabel])
	}

	if applied, err := runApply(ctx, o, run.ApplyRequest{Saved: saved}); err != nil || applied.Failed() {
		t.Fatalf("apply the saved plan: %v %+v", err, applied)
	}
	after, err = secrets.Get(ctx, key, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := after.Labels[release.FingerprintLabel]; got != api.Relabel[release.FingerprintLabel] {
		t.Errorf("after the apply, the record's fingerprint label is %q, want %q", got, api.Relabel[release.FingerprintLabel])
	}
}
