package plan_test

import (
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
)

func TestChangesServedKinds(t *testing.T) {
	crd := plan.ObjectRef{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}
	api := plan.ObjectRef{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService", Name: "v1.metrics.example.com"}
	cm := plan.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "settings"}
	release := func(action plan.Action, objs ...*plan.ObjectChange) *plan.ReleaseChange {
		return &plan.ReleaseChange{Action: action, Objects: objs}
	}
	obj := func(ref plan.ObjectRef, action plan.ObjectAction) *plan.ObjectChange {
		return &plan.ObjectChange{Ref: ref, Action: action}
	}
	for _, tc := range []struct {
		name string
		rc   *plan.ReleaseChange
		want bool
	}{
		{"a ConfigMap installed", release(plan.ActionInstall, obj(cm, plan.ObjectCreate)), false},
		{"a CRD installed", release(plan.ActionInstall, obj(cm, plan.ObjectCreate), obj(crd, plan.ObjectCreate)), true},
		{"a CRD changed", release(plan.ActionUpgrade, obj(crd, plan.ObjectUpdate)), true},
		{"an APIService deleted", release(plan.ActionUninstall, obj(api, plan.ObjectDelete)), true},
		{"a CRD left as it is (crds/ on upgrade)", release(plan.ActionUpgrade, obj(crd, plan.ObjectNoOp), obj(cm, plan.ObjectUpdate)), false},
		{"an unchanged release with a CRD", release(plan.ActionNoOp, obj(crd, plan.ObjectUpdate)), false},
		{"a forgotten release with a CRD", release(plan.ActionForget, obj(crd, plan.ObjectDelete)), false},
		{"objects known after apply", &plan.ReleaseChange{Action: plan.ActionUpgrade, KnownAfterApply: true}, true},
		{"a CRD as a hook", &plan.ReleaseChange{Action: plan.ActionInstall, Hooks: []plan.HookRun{{Name: "w", Kind: "CustomResourceDefinition"}}}, true},
	} {
		p := &plan.Plan{Releases: []*plan.ReleaseChange{release(plan.ActionInstall, obj(cm, plan.ObjectCreate)), tc.rc}}
		if got := p.ChangesServedKinds(); got != tc.want {
			t.Errorf("%s: ChangesServedKinds() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
