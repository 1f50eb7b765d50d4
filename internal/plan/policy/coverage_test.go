package policy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"
	"github.com/convoy-sh/convoy/internal/stack/addrs"
)

// coveragePlan is an install of release.hooked that runs a hook Job
// before and after it (one object, two events) and applies a ConfigMap,
// and an unchanged release.kept whose deployed revision applied a
// Deployment (kept for policies) and a Service the plan kept nothing of.
func coveragePlan() *plan.Plan {
	hooked, _ := addrs.ParseReleaseInstance("release.hooked")
	kept, _ := addrs.ParseReleaseInstance("release.kept")
	job := plan.ObjectRef{Group: "batch", Version: "v1", Kind: "Job", Namespace: "apps", Name: "migrate"}
	jobObj := map[string]any{"kind": "Job", "spec": map[string]any{"template": map[string]any{}}}
	return &plan.Plan{
		Stack: "shop",
		Releases: []*plan.ReleaseChange{
			{
				Addr: plan.InstanceAddr(hooked), Name: "hooked", Namespace: "apps", Action: plan.ActionInstall,
				Hooks: []plan.HookRun{
					{Name: "migrate", Kind: "Job", Path: "c/templates/job.yaml", Events: []string{"pre-install"}, Ref: job, Object: jobObj},
					{Name: "migrate", Kind: "Job", Path: "c/templates/job.yaml", Events: []string{"post-install"}, Ref: job, Object: jobObj},
					{Name: "broken", Kind: "Job", Path: "c/templates/broken.yaml", Events: []string{"post-install"}}, // unreadable: no Ref
				},
				Objects: []*plan.ObjectChange{{
					Ref: plan.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: "config"}, Action: plan.ObjectCreate,
					After: map[string]any{"kind": "ConfigMap"},
				}},
			},
			{
				Addr: plan.InstanceAddr(kept), Name: "kept", Namespace: "apps", Action: plan.ActionNoOp,
				Objects: []*plan.ObjectChange{
					{
						Ref: plan.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "apps", Name: "pg-exporter"}, Action: plan.ObjectNoOp,
						Deployed: map[string]any{"spec": map[string]any{"replicas": int64(1)}},
					},
					{Ref: plan.ObjectRef{Version: "v1", Kind: "Service", Namespace: "apps", Name: "pg"}, Action: plan.ObjectNoOp},
				},
			},
		},
	}
}

// TestHookAndUnchangedObjects: policies over objects see each hook object
// once, with object.hook naming its events ("" for release objects), and
// the objects an unchanged release's deployed revision applied, as
// no-ops whose before and after are that object.
func TestHookAndUnchangedObjects(t *testing.T) {
	for name, tc := range map[string]struct {
		cond string
		want []string // "release object [hook]" of each violation
	}{
		"hook objects":        {`object.hook == ''`, []string{"release.hooked batch/v1 Job apps/migrate [pre-install,post-install]"}},
		"hook events":         {`!object.hook.split(',').exists(e, e == 'pre-install')`, []string{"release.hooked batch/v1 Job apps/migrate [pre-install,post-install]"}},
		"hook after":          {`object.hook == '' || object.after.kind != 'Job' || object.action != 'create' || object.before != null`, []string{"release.hooked batch/v1 Job apps/migrate [pre-install,post-install]"}},
		"ordinary objects":    {`object.hook != ''`, []string{"release.hooked v1 ConfigMap apps/config []", "release.kept apps/v1 Deployment apps/pg-exporter []"}},
		"unchanged, deployed": {`!(object.action == 'no-op' && object.after.spec.replicas == 1 && object.before == object.after && object.changes.size() == 0)`, []string{"release.kept apps/v1 Deployment apps/pg-exporter []"}},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := mustCompile(t, `policy "p" {
  condition = <<-EOT
    `+tc.cond+`
  EOT
}`).Evaluate(context.Background(), coveragePlan())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range res {
				if strings.Contains(r.Message, "failed to evaluate") {
					t.Errorf("evaluation error: %s", r.Message)
				}
				got = append(got, r.Release+" "+r.Object+" ["+r.Hook+"]")
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("violations %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEvaluateRelease: apply evaluates one release as it rendered it,
// with the policies over releases and objects, none over the plan.
func TestEvaluateRelease(t *testing.T) {
	set := mustCompile(t, `
policy "o" { condition = "object.kind != 'Job'" }
policy "r" { condition = "release.values == null || release.values.image != 'latest'" }
policy "p" { condition = "plan.stack != 'shop'" }
`)
	if !set.ReadsReleases() || !set.ReadsObjects() {
		t.Fatal("the set reads releases and objects")
	}
	p := coveragePlan()
	res, err := set.EvaluateRelease(context.Background(), p, p.Releases[0], sensitive.New(nil))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res {
		got = append(got, r.Policy+" "+r.Object)
	}
	if want := "o batch/v1 Job apps/migrate"; strings.Join(got, "|") != want {
		t.Errorf("results %q, want %q", got, want)
	}
	if plans := mustCompile(t, `policy "p" { condition = "plan.stack != 'shop'" }`); plans.ReadsReleases() || plans.ReadsObjects() {
		t.Error("a policy over the plan reads neither releases nor objects")
	}
}
