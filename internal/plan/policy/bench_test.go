package policy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/policy"
	"github.com/convoy-sh/convoy/internal/stack/addrs"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// benchPolicies compiles the twenty policies of hack/bench/policies.
func benchPolicies(b *testing.B) *policy.Set {
	b.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "hack", "bench", "policies", "fleet.hcl"))
	if err != nil {
		b.Fatal(err)
	}
	cfg, diags := config.LoadSources(b.TempDir(), map[string][]byte{"p.hcl": src})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	set, diags := policy.Compile(cfg.SortedPolicies(), policy.Options{})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	return set
}

// fleetPlan is n releases, changed of them upgrading six objects each (a
// Deployment, a Service, a ConfigMap, an HPA, a PDB, a ServiceAccount), the
// others unchanged.
func fleetPlan(n, changed int) *plan.Plan {
	p := &plan.Plan{Stack: "fleet"}
	for i := range n {
		a, _ := addrs.ParseReleaseInstance(fmt.Sprintf("release.web[%d]", i))
		rc := &plan.ReleaseChange{Addr: plan.InstanceAddr(a), Name: fmt.Sprintf("web-%04d", i), Namespace: "fleet", Action: plan.ActionNoOp,
			Chart: plan.ChartChange{Before: &plan.ChartRef{Name: "web", Version: "1.0.0"}, After: &plan.ChartRef{Name: "web", Version: "1.0.0"}}}
		if i < changed {
			rc.Action = plan.ActionUpgrade
			rc.Saved = &plan.SavedRelease{Rendered: &chart.Rendered{Values: map[string]any{"image": map[string]any{"tag": "6.1"}, "replicaCount": int64(2)}}}
			deploy := func(replicas int64) map[string]any {
				return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": rc.Name, "labels": map[string]any{"app": rc.Name}},
					"spec": map[string]any{"replicas": replicas, "template": map[string]any{"spec": map[string]any{
						"containers": []any{map[string]any{"name": "web", "image": "ghcr.io/stefanprodan/podinfo:6.1", "resources": map[string]any{"limits": map[string]any{"cpu": "1"}}}}}}}}
			}
			simple := func(kind string) map[string]any {
				return map[string]any{"kind": kind, "metadata": map[string]any{"name": rc.Name}, "spec": map[string]any{"type": "ClusterIP", "minReplicas": int64(1)}}
			}
			rc.Objects = []*plan.ObjectChange{
				{Ref: plan.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "fleet", Name: rc.Name}, Action: plan.ObjectUpdate, Before: deploy(2), After: deploy(3),
					Diff: &plan.Diff{Changes: []*plan.Change{{Path: "spec.replicas", Op: plan.FieldChange, Before: int64(2), After: int64(3)}}}},
			}
			for _, k := range []string{"Service", "ConfigMap", "HorizontalPodAutoscaler", "PodDisruptionBudget", "ServiceAccount"} {
				rc.Objects = append(rc.Objects, &plan.ObjectChange{Ref: plan.ObjectRef{Version: "v1", Kind: k, Namespace: "fleet", Name: rc.Name}, Action: plan.ObjectNoOp, Before: simple(k), After: simple(k)})
			}
		}
		p.Releases = append(p.Releases, rc)
	}
	return p
}

// Twenty object-level policies over 1,000 releases, 100 of them changed.
func BenchmarkEvaluate1000Releases100Changed(b *testing.B) {
	set := benchPolicies(b)
	p := fleetPlan(1000, 100)
	b.ResetTimer()
	for b.Loop() {
		res, err := set.Evaluate(context.Background(), p)
		if err != nil || len(res) != 0 {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

// Compiling them: once per run.
func BenchmarkCompile20(b *testing.B) {
	for b.Loop() {
		benchPolicies(b)
	}
}
