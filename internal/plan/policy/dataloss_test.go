package policy_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/addrs"
)

// TestDenyDataLossUnmounted: the production policy "no data loss" denies
// each way a release's pods stop mounting their data, from the impact the
// planner computes (plan.ComputeImpact).
func TestDenyDataLossUnmounted(t *testing.T) {
	dec := func(s string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	workload := func(kind, volumes, vct string) map[string]any {
		return dec(`{"apiVersion":"apps/v1","kind":"` + kind + `","metadata":{"name":"db","namespace":"apps"},"spec":{"replicas":1,
		  "selector":{"matchLabels":{"app":"db"}},"template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"db","image":"db:1",
		  "volumeMounts":[{"name":"data","mountPath":"/data"}]}],"volumes":` + volumes + `}},"volumeClaimTemplates":` + vct + `}}`)
	}
	sts := plan.ObjectRef{Group: "apps", Version: "v1", Kind: "StatefulSet", Namespace: "apps", Name: "db"}
	deploy := plan.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "apps", Name: "db"}
	pvc := plan.ObjectRef{Version: "v1", Kind: "PersistentVolumeClaim", Namespace: "apps", Name: "data"}
	claimVol := `[{"name":"data","persistentVolumeClaim":{"claimName":"data"}}]`
	template := `[{"metadata":{"name":"data"},"spec":{"resources":{"requests":{"storage":"8Gi"}}}}]`
	claim := dec(`{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data","namespace":"apps"}}`)
	change := func(ref plan.ObjectRef, action plan.ObjectAction, before, after map[string]any) *plan.ObjectChange {
		c := &plan.ObjectChange{Ref: ref, Action: action, Before: before, After: after}
		if after != nil {
			c.Diff = plan.Compare(before, after)
		}
		return c
	}
	for name, objs := range map[string][]*plan.ObjectChange{
		"claim mount removed":     {change(deploy, plan.ObjectUpdate, workload("Deployment", claimVol, `[]`), workload("Deployment", `[]`, `[]`))},
		"claim volume → emptyDir": {change(deploy, plan.ObjectUpdate, workload("Deployment", claimVol, `[]`), workload("Deployment", `[{"name":"data","emptyDir":{}}]`, `[]`))},
		"volumeClaimTemplates entry removed": {change(sts, plan.ObjectReplace, workload("StatefulSet", `[]`, template),
			workload("StatefulSet", `[{"name":"data","emptyDir":{}}]`, `[]`))},
		"claim left unreferenced": {change(deploy, plan.ObjectUpdate, workload("Deployment", claimVol, `[]`), workload("Deployment", `[]`, `[]`)),
			change(pvc, plan.ObjectNoOp, claim, claim)},
	} {
		t.Run(name, func(t *testing.T) {
			a, _ := addrs.ParseReleaseInstance("release.redis")
			rc := &plan.ReleaseChange{Addr: plan.InstanceAddr(a), Name: "redis", Namespace: "apps", Action: plan.ActionUpgrade, Objects: objs}
			rc.Impact = plan.ComputeImpact(rc, plan.ImpactFacts{Claims: map[plan.ObjectRef][]string{sts: {"data-db-0"}}})
			set := mustCompile(t, `policy "no-data-loss" {
  condition = "release.impact == null || !has(release.impact.data_loss)"
  message   = "no data loss in production"
}`)
			res, err := set.Evaluate(context.Background(), &plan.Plan{Stack: "s", Environment: "production", Releases: []*plan.ReleaseChange{rc}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 || res[0].Level != plan.PolicyDeny || res[0].Policy != "no-data-loss" || res[0].Release != "release.redis" {
				t.Errorf("results %+v, want release.redis denied by no-data-loss", res)
			}
		})
	}
}
