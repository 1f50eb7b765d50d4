package planner

import (
	"context"
	"fmt"

	"github.com/convoy-sh/convoy/internal/kube"
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
func (c *computer) crdReplacement(ctx context.Context, kc *kube.Client, crd, live *unstructured.Unstructured, ch *plan.ObjectChange) error {
	if live == nil {
		ch.Reason = `crds/: created before the release's other objects (crds = "create_replace")`
		return nil
	}
	var after *unstructured.Unstructured
	var refused error
	if err := c.do(ctx, func() error {
		var err error
		after, err = kc.ReplaceCRD(ctx, crd, true)
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
