package planner

import (
	"context"
	"fmt"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// crdReplacement plans a CRD of crds/ under crds = "create_replace": a
// create when the cluster lacks it; else the replace, dry run, compared
// with the live CRD (its status.storedVersions included) as a summary of
// the schema's changes (plan.CompareCRDs), or nothing when it is the
// same. A replace the API server refuses (a version removed that
// status.storedVersions lists) stays in the plan, with the refusal as its
// reason: the plan says what apply will fail on, and impact what it
// could lose.
func (c *computer) crdReplacement(ctx context.Context, rd *release.Renderer, crd, live *unstructured.Unstructured, ch *plan.ObjectChange) error {
	if live == nil {
		ch.Reason = `crds/: created before the release's other objects (crds = "create_replace")`
		return nil
	}
	var after *unstructured.Unstructured
	var refused error
	if err := c.do(ctx, func() error {
		var err error
		after, err = c.view(rd).DryRunReplace(ctx, crd)
		if err != nil && apierrors.IsInvalid(err) {
			refused, err = err, nil
		}
		return err
	}); err != nil {
		return err
	}
	want := crd.Object
	if after != nil {
		want = after.Object
	} else if _, ok, _ := unstructured.NestedMap(want, "spec", "conversion"); !ok {
		// Refused: compared as rendered, with the API server's one
		// default that would otherwise show as a change.
		want = crd.DeepCopy().Object
		_ = unstructured.SetNestedField(want, map[string]any{"strategy": "None"}, "spec", "conversion")
	}
	change := plan.CompareCRDs(live.Object, want)
	if change == nil {
		ch.Action, ch.Reason = plan.ObjectNoOp, `crds/: as in the cluster (crds = "create_replace")`
		return nil
	}
	ch.Action, ch.CRD = plan.ObjectUpdate, change
	ch.Reason = `crds/: replaced before the release's other objects (crds = "create_replace")`
	if refused != nil {
		ch.Reason = fmt.Sprintf(`crds/: replaced (crds = "create_replace"), but the API server refuses it: %v`, refused)
	}
	return nil
}

// crdsReason is why a release that changes in nothing else is upgraded:
// crds/ it replaces differ from the cluster's.
func crdsReason(crds []*plan.ObjectChange) (plan.Reason, bool) {
	n := 0
	for _, o := range crds {
		if o.Action != plan.ObjectNoOp {
			n++
		}
	}
	if n == 0 {
		return plan.Reason{}, false
	}
	return plan.Reason{Kind: plan.ReasonCRDs, Detail: fmt.Sprintf(`%d %s of crds/ to create or replace (crds = "create_replace")`, n, plural(n, "CRD", "CRDs"))}, true
}

// replacedKinds are the group/kinds whose CRDs of crds/ the plan creates
// or replaces (crds = "create_replace"): the release's objects of those
// kinds cannot be compared before (the API server refuses fields only the
// new CRD declares).
func replacedKinds(r *chart.Rendered, crds []*plan.ObjectChange) map[string]bool {
	changing := map[string]bool{}
	for _, o := range crds {
		if o.Action != plan.ObjectNoOp {
			changing[o.Ref.Name] = true
		}
	}
	if len(changing) == 0 {
		return nil
	}
	out := map[string]bool{}
	for _, f := range r.CRDs {
		objs, _ := kube.ParseUnmapped(string(f.Data))
		for _, o := range objs {
			if !changing[o.GetName()] {
				continue
			}
			group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
			out[group+"/"+kind] = true
		}
	}
	return out
}

// uncomparedChange lists an object of a kind whose CRD is replaced first.
func uncomparedChange(ref kube.Ref, live *unstructured.Unstructured, template string) *plan.ObjectChange {
	ch := objectChange(ref, plan.ObjectCreate)
	if live != nil {
		ch.Action = plan.ObjectUpdate
	}
	ch.Template = template
	ch.Reason = `applied after its CRD is replaced (crds = "create_replace"); not compared before`
	return ch
}
