package planner

import (
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// AtApply is rc, a release the plan could not render (its values read
// outputs known only after apply), as apply has just rendered it (prep):
// what policies see of it before anything of it is applied. Nothing is
// asked of the cluster: each object is a create when the revision it
// replaces had none of its identity, else an update (or a no-op) whose
// before is the object as that revision applied it (not the live
// object, and after is the rendered object, not a dry run); what that
// revision had and this one lacks is a delete; the hooks are those the
// deploy runs. Everything is masked with red.
func AtApply(rd *release.Renderer, rc *plan.ReleaseChange, prep *release.Prepared, red *sensitive.Redactor) *plan.ReleaseChange {
	out := *rc
	req := prep.Request
	out.Action = plan.ActionUpgrade
	if prep.IsInstall {
		out.Action = plan.ActionInstall
	}
	out.Chart.After = chartRef(prep.Rendered.Chart)
	out.Saved = &plan.SavedRelease{Rendered: prep.Rendered, Settings: SettingsOf(req)}
	out.ValuesBefore = valuesBefore(prep.Deployed, red)
	out.Impact = nil

	current := prep.Objects
	if current == nil { // built only once the chart's CRDs are installed
		for _, m := range prep.Rendered.Manifests {
			objs, err := kube.ParseUnmapped(m.Document())
			if err != nil {
				continue
			}
			for _, o := range objs {
				if o.GetNamespace() == "" {
					o.SetNamespace(req.Namespace) // scope unknown: namespaced, as most custom kinds
				}
				current = append(current, o)
			}
		}
	}
	previous := release.WithOwnership(prep.Previous, prep.PreviousOwner(), req.Namespace)
	prevBy := map[string]*unstructured.Unstructured{}
	for _, o := range previous {
		prevBy[identityKey(kube.RefOf(o))] = o
	}
	mask := func(o *unstructured.Unstructured) map[string]any { return deployedView(o, red) }
	out.Objects = nil
	inCurrent := map[string]bool{}
	for _, o := range current {
		ref := kube.RefOf(o)
		inCurrent[identityKey(ref)] = true
		ch := objectChange(ref, plan.ObjectCreate)
		ch.Template = prep.TemplateOf(ref)
		ch.After = mask(o)
		if prev := prevBy[identityKey(ref)]; prev != nil {
			ch.Before = mask(prev)
			ch.Action = plan.ObjectNoOp
			if d := plan.Compare(ch.Before, ch.After); !d.Empty() {
				ch.Action, ch.Diff = plan.ObjectUpdate, d
			}
		} else {
			ch.Diff = plan.Compare(map[string]any{}, ch.After)
		}
		out.Objects = append(out.Objects, ch)
	}
	for _, o := range previous {
		ref := kube.RefOf(o)
		if inCurrent[identityKey(ref)] || release.IsKept(o) {
			continue
		}
		ch := objectChange(ref, plan.ObjectDelete)
		ch.Before = mask(o)
		out.Objects = append(out.Objects, ch)
	}
	out.Hooks = nil
	if !req.DisableHooks {
		out.Hooks = HookRuns(rd, prep.Rendered, req.Namespace, out.Action, red)
	}
	return &out
}
