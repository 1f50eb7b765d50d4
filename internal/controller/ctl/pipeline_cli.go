package ctl

import (
	"context"
	"fmt"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PromoteError says why a Pipeline's stage cannot be approved.
type PromoteError struct{ msg string }

func (e *PromoteError) Error() string { return e.msg }

// Promote approves a manual stage of a Pipeline for the digest it awaits
// approval for (want, when given, must be that digest): it records
// {stage, digest, approvedBy} in spec.approvals, approvedBy the user c
// authenticates as, and returns the digest. Only one approval per stage is
// kept: a new one replaces the stage's older one. The admission policy
// refuses it unless the user has the verb approve on the Pipeline.
func Promote(ctx context.Context, c client.Client, namespace, name, stage, want string) (string, error) {
	var p v1alpha1.Pipeline
	key := types.NamespacedName{Namespace: namespace, Name: name}
	what := "convoy.dev/v1alpha1 Pipeline " + key.String()
	if err := c.Get(ctx, key, &p); err != nil {
		if apierrors.IsNotFound(err) || isNoMatch(err) {
			return "", &PromoteError{what + " not found"}
		}
		return "", fmt.Errorf("%s: %w", what, err)
	}
	var spec *v1alpha1.Stage
	for i := range p.Spec.Stages {
		if p.Spec.Stages[i].Name == stage {
			spec = &p.Spec.Stages[i]
		}
	}
	if spec == nil {
		var names []string
		for _, s := range p.Spec.Stages {
			names = append(names, s.Name)
		}
		return "", &PromoteError{fmt.Sprintf("%s has no stage %q (stages: %v)", what, stage, names)}
	}
	var st *v1alpha1.StageStatus
	for i := range p.Status.Stages {
		if p.Status.Stages[i].Name == stage {
			st = &p.Status.Stages[i]
		}
	}
	switch {
	case spec.Approval != v1alpha1.ApprovalManual:
		return "", &PromoteError{fmt.Sprintf("%s: stage %s has approval auto: nothing to approve", what, stage)}
	case st == nil || st.Phase != v1alpha1.PhaseAwaitingApproval:
		phase := "not reconciled yet"
		if st != nil {
			phase = fmt.Sprintf("%s on %s", st.Phase, orDash(st.Digest))
		}
		return "", &PromoteError{fmt.Sprintf("%s: stage %s is not awaiting approval (%s)", what, stage, phase)}
	case want != "" && want != st.Digest:
		return "", &PromoteError{fmt.Sprintf("%s: stage %s awaits approval for %s, not %s", what, stage, st.Digest, want)}
	}
	who, err := WhoAmI(ctx, c)
	if err != nil {
		return "", err
	}
	orig := p.DeepCopy()
	var kept []v1alpha1.StageApproval
	for _, a := range p.Spec.Approvals {
		if a.Stage != stage {
			kept = append(kept, a)
		}
	}
	p.Spec.Approvals = append(kept, v1alpha1.StageApproval{Stage: stage, Digest: st.Digest, ApprovedBy: who})
	// The resourceVersion precondition: approve what was read.
	if err := c.Patch(ctx, &p, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return st.Digest, nil
}

// ListPipelines lists the Pipelines of a namespace ("": all).
func ListPipelines(ctx context.Context, c client.Client, namespace string) ([]v1alpha1.Pipeline, error) {
	var l v1alpha1.PipelineList
	if err := listIn(ctx, c, &l, namespace, "Pipeline type (pipelines.convoy.dev)"); err != nil {
		return nil, err
	}
	return l.Items, nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
