package ctl

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApproveRequest says which Stack's plan to approve.
type ApproveRequest struct {
	Namespace, Name string
	// Plan, when set, must be the digest of the Stack's current plan:
	// what the user reviewed is what they approve.
	Plan string
	// AllowPolicies override the denials of the policies that deny the
	// plan (spec.allowPolicies).
	AllowPolicies []string
}

// Approved is an approval recorded on a Stack.
type Approved struct {
	// Digest is the plan approved.
	Digest string
	// By is the user the approval was recorded as.
	By string
	// Approval is who approved the plan, this approval included, and how
	// many approvals it needs.
	Approval v1alpha1.ApprovalStatus
	// Complete: the plan has the approvals it needs; the controller
	// applies it.
	Complete bool
}

// WhoAmI is the username the API server knows c's credentials by (a
// SelfSubjectReview): what an approval written with c must name.
func WhoAmI(ctx context.Context, c client.Client) (string, error) {
	var r authenticationv1.SelfSubjectReview
	if err := c.Create(ctx, &r); err != nil {
		return "", fmt.Errorf("who am I (authentication.k8s.io/v1 SelfSubjectReview): %w", err)
	}
	if r.Status.UserInfo.Username == "" {
		return "", fmt.Errorf("who am I (authentication.k8s.io/v1 SelfSubjectReview): the API server names no user")
	}
	return r.Status.UserInfo.Username, nil
}

// ApprovePlan records an approval of the Stack's current plan as the user
// c authenticates as: an entry {digest, approvedBy, approvedAt} in
// spec.approvals.entries (entries of older plans are dropped), and
// spec.approvedPlan set to the digest. The write carries the
// resourceVersion read as a precondition, so that the plan approved is the
// plan read. The admission policy refuses it unless the user has the verb
// approve on the Stack.
func ApprovePlan(ctx context.Context, c client.Client, req ApproveRequest) (*Approved, error) {
	var st v1alpha1.Stack
	key := types.NamespacedName{Namespace: req.Namespace, Name: req.Name}
	what := "convoy.dev/v1alpha1 Stack " + key.String()
	if err := c.Get(ctx, key, &st); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &ApproveError{what + " not found"}
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	p := st.Status.Plan
	switch {
	case p == nil || p.Digest == "":
		return nil, &ApproveError{what + " has no plan yet"}
	case !p.HasChanges:
		return nil, &ApproveError{fmt.Sprintf("%s: plan %s changes nothing", what, p.Digest)}
	case st.Status.LastAppliedPlan == p.Digest:
		return nil, &ApproveError{fmt.Sprintf("%s: plan %s is applied already", what, p.Digest)}
	case req.Plan != "" && req.Plan != p.Digest:
		return nil, &ApproveError{fmt.Sprintf("%s: the current plan is %s (%s), not %s", what, p.Digest, p.Summary, req.Plan)}
	}
	if err := checkOverrides(key.String(), p, req.AllowPolicies); err != nil {
		return nil, err
	}
	who, err := WhoAmI(ctx, c)
	if err != nil {
		return nil, err
	}
	if a, _ := st.Spec.ApprovalOf(p.Digest); slices.Contains(a.ApprovedBy, who) {
		return nil, &ApproveError{fmt.Sprintf("%s: %s approved plan %s already (%d of %d approvals): another user must approve it", what, who, p.Digest, len(a.ApprovedBy), a.Required)}
	}
	orig := st.DeepCopy()
	approvals := st.Spec.Approvals.DeepCopy()
	if approvals == nil {
		approvals = &v1alpha1.Approvals{}
	}
	// Approvals of other plans approve nothing any more.
	approvals.Entries = slices.DeleteFunc(approvals.Entries, func(e v1alpha1.ApprovalEntry) bool { return e.Digest != p.Digest })
	approvals.Entries = append(approvals.Entries, v1alpha1.ApprovalEntry{Digest: p.Digest, ApprovedBy: who, ApprovedAt: &metav1.Time{Time: time.Now().Truncate(time.Second)}})
	st.Spec.Approvals = approvals
	st.Spec.ApprovedPlan = p.Digest
	st.Spec.AllowPolicies = req.AllowPolicies
	// The resourceVersion precondition: approve the plan that was read.
	if err := c.Patch(ctx, &st, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	a, complete := st.Spec.ApprovalOf(p.Digest)
	return &Approved{Digest: p.Digest, By: who, Approval: a, Complete: complete}, nil
}
