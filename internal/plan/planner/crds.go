package planner

import (
	"context"
	"fmt"

	"github.com/convoy-sh/convoy/internal/plan"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crdChanges lists the CRDs of the chart's crds/ directories as the
// release's crds policy has them applied: by default created when the
// cluster lacks them, left alone when it has them, as Helm does (crds/ is
// installed, never upgraded or deleted); none with skip; with
// create_replace created or replaced, on install and upgrade
// (crdReplacement).
func (c *computer) crdChanges(ctx context.Context, rd *release.Renderer, r *chart.Rendered, action plan.Action, policy release.CRDPolicy) ([]*plan.ObjectChange, error) {
	install := action == plan.ActionInstall
	var out []*plan.ObjectChange
	for _, f := range r.CRDs {
		objs, err := rd.Parse(string(f.Data), "")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		for _, o := range objs {
			ref := kube.RefOf(o)
			var live *unstructured.Unstructured
			if err := c.do(ctx, func() error {
				var err error
				live, err = c.live(ctx, rd, ref)
				return err
			}); err != nil {
				return nil, err
			}
			ch := objectChange(ref, plan.ObjectCreate)
			ch.Template = f.Name
			switch {
			case policy == release.CRDsSkip:
				ch.Action, ch.Reason = plan.ObjectNoOp, `crds/: not installed (crds = "skip")`
			case policy == release.CRDsCreateReplace:
				if err := c.crdReplacement(ctx, rd, o, live, ch); err != nil {
					return nil, err
				}
			case live != nil && install:
				ch.Action, ch.Reason = plan.ObjectNoOp, "crds/: exists, left as it is (Helm installs crds/ only when absent)"
			case live != nil:
				ch.Action, ch.Reason = plan.ObjectNoOp, "crds/: not upgraded (Helm installs crds/ only on install, never upgrades them)"
			case !install:
				ch.Action, ch.Reason = plan.ObjectNoOp, "crds/: absent, but Helm installs crds/ only on install: not created by an upgrade"
			default:
				ch.Reason = "crds/: installed before the release's other objects"
			}
			out = append(out, ch)
		}
	}
	return out, nil
}

// unservedObjects lists the objects of a rendering whose kinds the cluster
// does not serve yet, without a comparison (there is nothing to compare
// with): kinds the chart's crds/ define are served once those are
// installed; others only if something installs their CRD first.
func unservedObjects(rd *release.Renderer, r *chart.Rendered, namespace string, policy release.CRDPolicy) []*plan.ObjectChange {
	defined := map[string]bool{} // group/kind defined by the chart's crds/ (none when skipped)
	for _, f := range r.CRDs {
		if policy == release.CRDsSkip {
			break
		}
		objs, _ := kube.ParseUnmapped(string(f.Data))
		for _, o := range objs {
			group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
			defined[group+"/"+kind] = true
		}
	}
	// An unserved kind makes the mapper read discovery again: ask once per
	// kind, not once per object.
	servedKinds := map[schema.GroupVersionKind]bool{}
	served := func(gvk schema.GroupVersionKind) bool {
		ok, asked := servedKinds[gvk]
		if !asked {
			ok = rd.Served(gvk)
			servedKinds[gvk] = ok
		}
		return ok
	}
	var out []*plan.ObjectChange
	for _, m := range r.Manifests {
		objs, err := kube.ParseUnmapped(m.Document())
		if err != nil {
			continue
		}
		for _, o := range objs {
			gvk := o.GroupVersionKind()
			ref := kube.Ref{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()}
			isServed := served(gvk)
			if !isServed && ref.Namespace == "" {
				ref.Namespace = namespace // scope unknown: namespaced, as most custom kinds
			}
			ch := objectChange(ref, plan.ObjectCreate)
			ch.Template = m.Path
			switch {
			case isServed:
				ch.Reason = "applied after the chart's CRDs are installed; not compared before"
			case defined[gvk.Group+"/"+gvk.Kind]:
				ch.Reason = fmt.Sprintf("kind %s is defined by the chart's crds/, installed first", gvk.Kind)
			default:
				ch.Reason = fmt.Sprintf("kind %s is not served by the cluster: apply fails unless its CRD is installed first (by a release this one depends on)", gvk.GroupKind())
			}
			out = append(out, ch)
		}
	}
	return out
}

// hasCRDsRecord says whether a record lists the CRDs of its crds/
// (release.CRDsAnnotation): one without (written before it was, or whose
// CRDs could not be read) cannot be proven unchanged without a rendering.
func hasCRDsRecord(rec *release.Release) bool {
	_, ok := release.CRDsOf(rec)
	return ok
}

// crdsUnchanged plans the CRDs of an unchanged release's crds/ from the
// deployed record's list of them and the cluster's CRDs' metadata, as
// crdChanges plans them when the release renders as deployed: under
// skip and create every one is left as it is (what the cluster holds
// says only why); under create_replace each must be as the deploy left
// it (uid and resourceVersion), else the release is planned in full
// ("crds-changed"), which dry-runs the replace.
func (c *computer) crdsUnchanged(ctx context.Context, rd *release.Renderer, req *release.Request, deployed *release.Release) ([]*plan.ObjectChange, string, error) {
	recorded, ok := release.CRDsOf(deployed)
	if !ok || len(recorded) == 0 {
		return nil, "", nil
	}
	out := make([]*plan.ObjectChange, len(recorded))
	changed := false
	err := c.do(ctx, func() error {
		for i, crd := range recorded {
			ch := objectChange(crd.Ref(), plan.ObjectNoOp)
			ch.Template = crd.File
			out[i] = ch
			if req.CRDs == release.CRDsSkip {
				ch.Reason = `crds/: not installed (crds = "skip")`
				continue
			}
			live, err := c.liveApplied(ctx, rd, crd.Ref())
			if err != nil {
				return err
			}
			switch {
			case req.CRDs == release.CRDsCreateReplace:
				if live == nil || live.UID != crd.UID || live.ResourceVersion != crd.ResourceVersion {
					changed = true
					return nil
				}
				ch.Reason = `crds/: as in the cluster (crds = "create_replace")`
			case live != nil:
				ch.Reason = "crds/: not upgraded (Helm installs crds/ only on install, never upgrades them)"
			default:
				ch.Reason = "crds/: absent, but Helm installs crds/ only on install: not created by an upgrade"
			}
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	if changed {
		return nil, "crds-changed", nil
	}
	return out, "", nil
}
