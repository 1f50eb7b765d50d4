// Package plantest holds plans for the tests of the plan packages.
package plantest

import (
	"time"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/addrs"
)

// Sample is a plan that exercises every part of the renderers.
func Sample() *plan.Plan {
	api := addrs.Release{Name: "api"}.Instance(addrs.StringKey("eu"))
	app := &plan.ChartRef{Name: "app", Version: "1.2.0", AppVersion: "2.0"}
	return &plan.Plan{
		FormatVersion: plan.FormatVersion, Stack: "shop", ConfigHash: "sha256:0123", CreatedAt: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC),
		Releases: []*plan.ReleaseChange{
			{
				Addr: plan.InstanceAddr(addr("db")), Name: "db", Namespace: "shop", Action: plan.ActionInstall, Chart: plan.ChartChange{After: app},
				Reasons:   []plan.Reason{{Kind: plan.ReasonNew, Detail: "not installed"}},
				Values:    plan.Compare(map[string]any{}, map[string]any{"password": "hunter2-canary", "size": int64(10)}),
				Hooks:     []plan.HookRun{{Name: "db-init", Kind: "Job", Path: "app/templates/init.yaml", Events: []string{"post-install"}}},
				Objects:   []*plan.ObjectChange{{Ref: plan.ObjectRef{Group: "", Version: "v1", Kind: "Secret", Namespace: "shop", Name: "db-auth"}, Action: plan.ObjectCreate}},
				Sensitive: []string{"hunter2-canary"},
			},
			{
				Addr: plan.InstanceAddr(api), Name: "api-eu", Namespace: "shop", Action: plan.ActionUpgrade, DependsOn: []addrs.ReleaseInstance{addr("db")},
				Reasons: []plan.Reason{{Kind: plan.ReasonChart, Detail: "app 1.1.0 → app 1.2.0"}, {Kind: plan.ReasonValues, Detail: "1 value changed"}},
				Chart:   plan.ChartChange{Before: &plan.ChartRef{Name: "app", Version: "1.1.0"}, After: app},
				Values:  plan.Compare(map[string]any{"replicas": int64(2)}, map[string]any{"replicas": int64(3)}),
				Objects: []*plan.ObjectChange{
					{Ref: plan.ObjectRef{Group: "", Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "api-eu"}, Action: plan.ObjectUpdate, Template: "app/templates/cm.yaml",
						Diff: plan.Compare(map[string]any{"data": map[string]any{"app.conf": "a = 1\nb = 2\n"}}, map[string]any{"data": map[string]any{"app.conf": "a = 1\nb = 3\n"}})},
					{Ref: plan.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "api-eu"}, Action: plan.ObjectUpdate,
						Diff: plan.Compare(map[string]any{"spec": map[string]any{"replicas": int64(2)}}, map[string]any{"spec": map[string]any{"replicas": int64(3)}})},
					{Ref: plan.ObjectRef{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "migrate"}, Action: plan.ObjectReplace, Reason: "spec.template: field is immutable",
						Diff: plan.Compare(map[string]any{"spec": map[string]any{"image": "m:1"}}, map[string]any{"spec": map[string]any{"image": "m:2"}})},
					{Ref: plan.ObjectRef{Group: "", Version: "v1", Kind: "Service", Namespace: "shop", Name: "api-eu"}, Action: plan.ObjectNoOp},
					{Ref: plan.ObjectRef{Group: "", Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "old"}, Action: plan.ObjectDelete},
				},
				Drift: []*plan.ObjectDrift{{Ref: plan.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "api-eu"}, Corrected: true,
					Diff: withManager(plan.Compare(map[string]any{"spec": map[string]any{"replicas": int64(2)}}, map[string]any{"spec": map[string]any{"replicas": int64(5)}}), "kubectl")}},
				Observed: plan.Observed{LastRevision: 4, LastStatus: "deployed"},
			},
			{Addr: plan.InstanceAddr(addr("web")), Name: "web", Namespace: "shop", Action: plan.ActionUpgrade, KnownAfterApply: true,
				Reasons: []plan.Reason{{Kind: plan.ReasonDependency, Detail: `reads outputs of release.api["eu"], which change in this plan`}}, Chart: plan.ChartChange{Before: app}, DependsOn: []addrs.ReleaseInstance{api}},
			{Addr: plan.InstanceAddr(addr("cache")), Name: "cache", Namespace: "shop", Action: plan.ActionNoOp, Chart: plan.ChartChange{Before: app, After: app}},
			{Addr: plan.RemovedAddr("", "shop", "legacy"), Name: "legacy", Namespace: "shop", Action: plan.ActionUninstall, Chart: plan.ChartChange{Before: app},
				Reasons:  []plan.Reason{{Kind: plan.ReasonRemoved, Detail: "the stack's files no longer declare it"}},
				Objects:  []*plan.ObjectChange{{Ref: plan.ObjectRef{Group: "", Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "legacy"}, Action: plan.ObjectDelete}},
				Warnings: []string{"the recorded manifest mentions hunter2-canary"}},
		},
	}
}

func withManager(d *plan.Diff, manager string) *plan.Diff {
	for _, c := range d.Changes {
		c.Manager = manager
	}
	return d
}

func addr(name string) addrs.ReleaseInstance { return addrs.Release{Name: name}.Instance(addrs.NoKey) }

// Addr is the plan address of release.NAME.
func Addr(name string) plan.ReleaseAddr { return plan.InstanceAddr(addr(name)) }

// Ref parses an object identity as printed: "apps/v1 Deployment ns/name"
// (test input only: it panics on anything else).
func Ref(s string) plan.ObjectRef {
	r, err := plan.ParseObjectRef(s)
	if err != nil {
		panic("plantest.Ref: " + err.Error())
	}
	return r
}
