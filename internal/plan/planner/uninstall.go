package planner

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/convoy-sh/convoy/internal/plan"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// removed plans the uninstall of releases that carry this stack's label
// but are no longer in its files, on every cluster the stack uses. Cluster
// blocks that reach the same cluster are one cluster. A release whose
// newest record belongs to another stack (or to no stack) is not this
// stack's to uninstall, whatever its older records say.
func (c *computer) removed(ctx context.Context) ([]*plan.ReleaseChange, error) {
	st := c.in.Stack
	specs := st.UsedClusters()
	type key struct {
		cluster         kube.ClusterID
		namespace, name string
	}
	inStack := map[key]bool{}
	for _, r := range st.Releases {
		rd, err := c.renderer(ctx, r.Cluster)
		if err != nil {
			return nil, err
		}
		inStack[key{rd.ClusterID(), r.Namespace, r.Name}] = true
	}
	var out []*plan.ReleaseChange
	seen := map[kube.ClusterID]bool{}
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		rd, err := c.renderer(ctx, specs[name])
		if err != nil {
			return nil, err
		}
		id := rd.ClusterID()
		if seen[id] {
			continue
		}
		seen[id] = true
		recs, err := c.labelled(ctx, rd)
		if err != nil {
			return nil, err
		}
		candidates := map[key]bool{}
		for _, r := range recs {
			if k := (key{id, r.Namespace, r.Name}); !inStack[k] {
				candidates[k] = true
			}
		}
		for _, k := range slices.SortedFunc(maps.Keys(candidates), func(a, b key) int {
			return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
		}) {
			hist, interrupted, err := c.observe(ctx, rd, k.namespace, k.name, true)
			if err != nil {
				return nil, err
			}
			if len(hist) == 0 {
				continue
			}
			last := hist[len(hist)-1]
			if !c.stackOwns(last) || last.Info.Status == release.StatusUninstalled {
				continue
			}
			if !c.in.Destroy {
				// A destroy uninstalls a release a rename has not taken yet
				// under its old name.
				if by, err := c.renamedBy(ctx, id, name, last); err != nil || by != nil {
					if err != nil {
						return nil, err
					}
					continue // renamed: the plan of by carries it
				}
			}
			rc, err := c.orphan(ctx, rd, name, last)
			if err != nil {
				return nil, fmt.Errorf("removed release %s/%s: %w", last.Namespace, last.Name, err)
			}
			noteInterrupted(rc, interrupted)
			out = append(out, rc)
		}
	}
	return out, nil
}

// destroy plans the uninstall of a release of the stack (convoy destroy):
// a no-op when it is not installed, or when its newest record belongs to
// another stack.
func (c *computer) destroy(ctx context.Context, inst *config.ReleaseInstance) (*plan.ReleaseChange, error) {
	noop, rd, hist, interrupted, err := c.begin(ctx, inst, true)
	if err != nil {
		return nil, err
	}
	noop.Action = plan.ActionNoOp
	if len(hist) == 0 {
		return noop, nil
	}
	last := hist[len(hist)-1]
	noop.Observed = plan.Observed{LastRevision: last.Version, LastStatus: string(last.Info.Status)}
	if last.Info.Status == release.StatusUninstalled {
		return noop, nil
	}
	// What apply would not take over, destroy leaves alone.
	probe := &plan.ReleaseChange{}
	c.ownership(probe, inst, last)
	switch {
	case probe.Owner != "":
		noop.Warnings = append(noop.Warnings, fmt.Sprintf("revision %d belongs to stack %q: destroy leaves it alone", last.Version, probe.Owner))
		return noop, nil
	case probe.Takeover != nil && !probe.Takeover.Allowed:
		noop.Warnings = append(noop.Warnings, fmt.Sprintf("revision %d: %s: destroy leaves it alone", last.Version, probe.Takeover.By()))
		return noop, nil
	}
	rc, err := c.uninstall(ctx, rd, noop.Cluster, last)
	if err != nil {
		return nil, err
	}
	rc.Addr, rc.DependsOn = noop.Addr, noop.DependsOn
	rc.Reasons = []plan.Reason{{Kind: plan.ReasonDestroy}}
	noteInterrupted(rc, interrupted)
	rc.Sensitive = resolve.SensitiveValues(inst)
	rc.Uninstall.DisableHooks = inst.DisableHooks
	rc.Uninstall.Timeout = inst.Timeout
	return rc, nil
}

func (c *computer) uninstall(ctx context.Context, rd *release.Renderer, cluster string, r *release.Release) (*plan.ReleaseChange, error) {
	rc := &plan.ReleaseChange{
		Addr: plan.RemovedAddr(cluster, r.Namespace, r.Name), Name: r.Name, Namespace: r.Namespace, Cluster: cluster,
		Action:    plan.ActionUninstall,
		Reasons:   []plan.Reason{{Kind: plan.ReasonRemoved, Detail: "the stack's files no longer declare it"}},
		Observed:  plan.Observed{LastRevision: r.Version, LastStatus: string(r.Info.Status)},
		Uninstall: &plan.UninstallSettings{Wait: true},
	}
	rc.Chart.Before = chartRef(r.Chart)
	for _, h := range r.Hooks {
		for _, ev := range h.Events {
			if ev == chart.HookPreDelete || ev == chart.HookPostDelete {
				run := plan.HookRun{Name: h.Name, Kind: h.Kind, Path: h.Path, Events: []string{string(ev)}, Weight: h.Weight}
				if obj := hookObject(rd, h.Manifest, r.Namespace); obj != nil {
					run.Ref, run.Object = plan.ObjectRef(kube.RefOf(obj)), deployedView(obj, nil)
				}
				rc.Hooks = append(rc.Hooks, run)
			}
		}
	}
	objs, _, err := rd.StoredObjects(r)
	if err != nil {
		rc.Warnings = append(rc.Warnings, fmt.Sprintf("the recorded manifest of revision %d cannot be read: %v", r.Version, err))
		return rc, nil
	}
	for _, o := range slices.Backward(objs) {
		ref := kube.RefOf(o)
		if release.IsKept(o) {
			ch := objectChange(ref, plan.ObjectNoOp)
			ch.Reason = "kept (helm.sh/resource-policy: keep)"
			rc.Objects = append(rc.Objects, ch)
			continue
		}
		var live *unstructured.Unstructured
		if err := c.do(ctx, func() error {
			var err error
			live, err = c.live(ctx, rd, ref)
			return err
		}); err != nil {
			return nil, err
		}
		if live == nil {
			continue
		}
		rc.Observed.Objects = append(rc.Observed.Objects, observeContent(ref, live))
		ch := objectChange(ref, plan.ObjectDelete)
		ch.Before = maskObject(liveView(live), nil, secretPaths(ref.Kind))
		rc.Objects = append(rc.Objects, ch)
	}
	if err := c.impact(ctx, rd, rc); err != nil {
		return nil, err
	}
	return rc, nil
}
