package planner

import (
	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// HookRuns lists the hooks an install or upgrade of a release in
// namespace runs, in execution order, each with its object (as the
// engine applies it, masked with red) for policies and the plan's
// object list. A hook whose manifest does not parse (a kind the cluster
// does not serve yet) keeps the namespace it was given.
func HookRuns(rd *release.Renderer, r *chart.Rendered, namespace string, action plan.Action, red *sensitive.Redactor) []plan.HookRun {
	events := []chart.HookEvent{chart.HookPreUpgrade, chart.HookPostUpgrade}
	if action == plan.ActionInstall {
		events = []chart.HookEvent{chart.HookPreInstall, chart.HookPostInstall}
	}
	parsed := map[*chart.Hook]*unstructured.Unstructured{}
	var out []plan.HookRun
	for _, ev := range events {
		for _, h := range chart.HooksFor(r.Hooks, ev) {
			run := plan.HookRun{Name: h.Name, Kind: h.Kind, Path: h.Path, Events: []string{string(ev)}, Weight: h.Weight}
			obj, seen := parsed[h]
			if !seen {
				obj = hookObject(rd, h.Manifest, namespace)
				parsed[h] = obj
			}
			if obj != nil {
				run.Ref = plan.ObjectRef(kube.RefOf(obj))
				run.Object = deployedView(obj, red)
			}
			out = append(out, run)
		}
	}
	return out
}

// hookObject is a hook's object as the engine parses it to run it (nil
// when its manifest holds no single object).
func hookObject(rd *release.Renderer, manifest, namespace string) *unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	var err error
	if rd != nil {
		objs, err = rd.Parse(manifest, namespace)
	}
	if rd == nil || err != nil {
		objs, err = kube.ParseUnmapped(manifest)
	}
	if err != nil || len(objs) != 1 {
		return nil
	}
	return objs[0]
}
