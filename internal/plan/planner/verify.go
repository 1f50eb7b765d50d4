package planner

import (
	"context"
	"fmt"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A saved plan carries what it observed of each release and each affected
// object (plan.Observed); apply refuses it when an observation no longer
// holds. The observations are made here (observe*) and checked here
// (Verify), so that what a plan relies on and what its check compares
// are one definition.

// observeAbsent: ref did not exist.
func observeAbsent(ref kube.Ref) plan.ObservedObject {
	return plan.ObservedObject{Ref: plan.ObjectRef(ref), Kind: plan.ObservedAbsent}
}

// observeContent observes live (nil: absent) by its content without
// status and bookkeeping: objects a plan deletes or does not apply.
func observeContent(ref kube.Ref, live *unstructured.Unstructured) plan.ObservedObject {
	if live == nil {
		return observeAbsent(ref)
	}
	return plan.ObservedObject{Ref: plan.ObjectRef(ref), Kind: plan.ObservedContent, ResourceVersion: live.GetResourceVersion(), Hash: ContentHash(live)}
}

// observeShape observes live by the fields applied (the object as the
// plan's rendering applies it) sets.
func observeShape(ref kube.Ref, live *unstructured.Unstructured, applied map[string]any) plan.ObservedObject {
	return plan.ObservedObject{Ref: plan.ObjectRef(ref), Kind: plan.ObservedShape, ResourceVersion: live.GetResourceVersion(), Hash: ShapeHash(live, applied)}
}

// observeApplied observes what convoy's field manager applied of an
// object (nil: absent), from its metadata.
func observeApplied(ref kube.Ref, a *kube.Applied) plan.ObservedObject {
	if a == nil {
		return observeAbsent(ref)
	}
	return plan.ObservedObject{Ref: plan.ObjectRef(ref), Kind: plan.ObservedApplied, ResourceVersion: a.ResourceVersion, Hash: AppliedHash(ref, a)}
}

// ObservedView is what Verify reads of a cluster. A saved plan is
// verified against reads made now, never against a cache a moment
// behind (a plan's ClusterView may read through shared informers):
// VerifyView reads a real cluster so; planner/plannertest's View holds one in
// memory.
type ObservedView interface {
	// Histories are the records of a namespace by release name, oldest
	// first.
	Histories(ctx context.Context, namespace string) (map[string][]*release.Release, error)
	// Live is the live object (nil: absent).
	Live(ctx context.Context, ref kube.Ref) (*unstructured.Unstructured, error)
	// Applied is what convoy's field manager applied of the live object
	// (nil: absent).
	Applied(ctx context.Context, ref kube.Ref) (*kube.Applied, error)
	// Prefetch says which objects Applied will be asked of (a hint).
	Prefetch(ctx context.Context, refs []kube.Ref)
}

// VerifyCluster is a cluster as Verify reads it: its view, and the
// renderer of its release engine, which parses saved renderings as the
// cluster serves their kinds.
type VerifyCluster struct {
	View     ObservedView
	Renderer *release.Renderer
}

// Verify compares what a saved plan observed with what the clusters show
// now (clusterOf returns a cluster block's) and returns what moved, each
// change once, in the plan's order: a release with a newer (or
// differently finished) revision, an affected object created, deleted or
// edited since. Status updates and fields apply does not set do not
// count: an object whose resourceVersion moved is compared as it was
// observed (plan.ObservationKind). A cluster that cannot be read is an
// error, never a verdict.
func Verify(ctx context.Context, p *plan.Plan, clusterOf func(cluster string) (VerifyCluster, error)) ([]string, error) {
	var moved []string
	seen := map[string]bool{}
	note := func(msg string) {
		if msg != "" && !seen[msg] {
			seen[msg] = true
			moved = append(moved, msg)
		}
	}
	if err := prefetchObserved(ctx, p, clusterOf); err != nil {
		return nil, err
	}
	histories := map[string]map[string][]*release.Release{}
	for _, r := range p.Releases {
		c, err := clusterOf(r.Cluster)
		if err != nil {
			return nil, err
		}
		key := r.Cluster + "/" + r.Namespace
		hs, ok := histories[key]
		if !ok {
			if hs, err = c.View.Histories(ctx, r.Namespace); err != nil {
				return nil, fmt.Errorf("verify the plan: %w", err)
			}
			histories[key] = hs
		}
		if r.Rename != nil {
			note(renameChange(r, hs))
		} else {
			note(revisionChange(r, hs[r.Name]))
		}
		shapes := savedShapes(c.Renderer, r)
		for _, ob := range r.Observed.Objects {
			msg, err := objectMoved(ctx, c, ob, shapes[ob.Ref])
			if err != nil {
				return nil, fmt.Errorf("verify the plan: %w", err)
			}
			note(msg)
		}
	}
	return moved, nil
}

// prefetchObserved tells each cluster's view which objects Verify will
// read.
func prefetchObserved(ctx context.Context, p *plan.Plan, clusterOf func(cluster string) (VerifyCluster, error)) error {
	refs := map[string][]kube.Ref{}
	var order []string
	seen := map[string]map[plan.ObjectRef]bool{}
	for _, r := range p.Releases {
		if _, ok := seen[r.Cluster]; !ok {
			seen[r.Cluster] = map[plan.ObjectRef]bool{}
			order = append(order, r.Cluster)
		}
		for _, ob := range r.Observed.Objects {
			if !seen[r.Cluster][ob.Ref] {
				seen[r.Cluster][ob.Ref] = true
				refs[r.Cluster] = append(refs[r.Cluster], KubeRef(ob.Ref))
			}
		}
	}
	for _, name := range order {
		if len(refs[name]) == 0 {
			continue
		}
		c, err := clusterOf(name)
		if err != nil {
			return err
		}
		c.View.Prefetch(ctx, refs[name])
	}
	return nil
}

// revisionChange says how a release's newest record (hist's last) differs
// from the one the plan saw; "" when it does not.
func revisionChange(r *plan.ReleaseChange, hist []*release.Release) string {
	rev, status := 0, ""
	if len(hist) > 0 {
		last := hist[len(hist)-1]
		rev, status = last.Version, string(last.Info.Status)
	}
	if rev == r.Observed.LastRevision && status == r.Observed.LastStatus {
		return ""
	}
	what := fmt.Sprintf("release %s (namespace %s)", r.Name, r.Namespace)
	switch {
	case r.Observed.LastRevision == 0:
		return fmt.Sprintf("%s was installed since the plan (now revision %d, %s)", what, rev, status)
	case rev == 0:
		return fmt.Sprintf("%s was uninstalled since the plan (the plan saw revision %d, %s)", what, r.Observed.LastRevision, r.Observed.LastStatus)
	case rev != r.Observed.LastRevision:
		return fmt.Sprintf("%s has a new revision %d (%s) since the plan saw revision %d (%s)", what, rev, status, r.Observed.LastRevision, r.Observed.LastStatus)
	}
	return fmt.Sprintf("%s revision %d is now %s; the plan saw it %s", what, rev, status, r.Observed.LastStatus)
}

// renameChange says what changed since a saved plan saw a renamed
// release: the old release's newest record, and the new name's own.
func renameChange(r *plan.ReleaseChange, histories map[string][]*release.Release) string {
	rn := r.Rename
	old := &plan.ReleaseChange{Name: rn.From, Namespace: r.Namespace, Observed: plan.Observed{LastRevision: rn.FromRevision, LastStatus: rn.FromStatus}}
	if msg := revisionChange(old, histories[rn.From]); msg != "" {
		return msg
	}
	own := &plan.ReleaseChange{Name: r.Name, Namespace: r.Namespace, Observed: plan.Observed{LastRevision: rn.ToRevision, LastStatus: rn.ToStatus}}
	return revisionChange(own, histories[r.Name])
}

// savedShapes are the objects the saved rendering applies, by reference,
// with the ownership metadata apply adds and without the fields
// ignore_changes leaves to others (what a shape was observed against).
func savedShapes(rd *release.Renderer, r *plan.ReleaseChange) map[plan.ObjectRef]map[string]any {
	out := map[plan.ObjectRef]map[string]any{}
	if rd == nil || r.Saved == nil || r.Saved.Rendered == nil {
		return out
	}
	ignore := RequestOf(r.Name, r.Namespace, r.Saved.Settings).IgnoreChanges
	for _, m := range r.Saved.Rendered.Manifests {
		objs, err := rd.Parse(m.Document(), r.Namespace)
		if err != nil {
			continue // kinds not served yet: compared by content
		}
		for _, o := range release.WithOwnership(objs, r.Name, r.Namespace) {
			out[ObjectRef(kube.RefOf(o))] = ignore.Strip(o).Object
		}
	}
	return out
}

// objectMoved says how an observed object changed since the plan ("": it
// did not, in what the plan relies on). The metadata answers most: an
// object absent, created, at the same resourceVersion, or observed by
// what convoy applied of it; the others are read whole and compared as
// observed.
func objectMoved(ctx context.Context, c VerifyCluster, ob plan.ObservedObject, shape map[string]any) (string, error) {
	ref := KubeRef(ob.Ref)
	absent := ob.Kind == plan.ObservedAbsent
	a, err := c.View.Applied(ctx, ref)
	switch {
	case err != nil:
		return "", err
	case a == nil && absent:
		return "", nil
	case a == nil:
		return fmt.Sprintf("%s was deleted since the plan", ob.Ref), nil
	case absent:
		return fmt.Sprintf("%s was created since the plan", ob.Ref), nil
	case a.ResourceVersion == ob.ResourceVersion:
		return "", nil
	case ob.Kind == plan.ObservedApplied:
		// An edit of a field convoy set moved it to another manager; a
		// recreation changed the uid.
		if ob.Hash != "" && AppliedHash(ref, a) == ob.Hash {
			return "", nil
		}
		return edited(ob, a.ResourceVersion), nil
	}
	live, err := c.View.Live(ctx, ref)
	switch {
	case err != nil:
		return "", err
	case live == nil:
		return fmt.Sprintf("%s was deleted since the plan", ob.Ref), nil
	case live.GetResourceVersion() == ob.ResourceVersion:
		return "", nil
	}
	got := ContentHash(live)
	if ob.Kind == plan.ObservedShape {
		got = ""
		if shape != nil {
			got = ShapeHash(live, shape)
		}
	}
	if ob.Hash != "" && got == ob.Hash {
		return "", nil // nothing apply touches changed: status, bookkeeping, others' fields
	}
	return edited(ob, live.GetResourceVersion()), nil
}

func edited(ob plan.ObservedObject, now string) string {
	return fmt.Sprintf("%s was edited since the plan (resourceVersion %s, now %s)", ob.Ref, ob.ResourceVersion, now)
}
