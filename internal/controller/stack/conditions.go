package stack

import (
	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/status"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The condition types and reasons are status's (shared with the
// Pipeline reconciler and cmd/convoy); the names here keep the Stack
// reconciler's code as it was.
const (
	CondReady            = status.CondReady
	CondReconciling      = status.CondReconciling
	CondStalled          = status.CondStalled
	CondPlanned          = status.CondPlanned
	CondApprovalRequired = status.CondApprovalRequired
	CondDrifted          = status.CondDrifted
)

const (
	ReasonUpToDate           = status.ReasonUpToDate
	ReasonApplied            = status.ReasonApplied
	ReasonApprovalRequired   = status.ReasonApprovalRequired
	ReasonApprovalMismatch   = status.ReasonApprovalMismatch
	ReasonDrifted            = status.ReasonDrifted
	ReasonDriftCorrected     = status.ReasonDriftCorrected
	ReasonNoDrift            = status.ReasonNoDrift
	ReasonLocked             = status.ReasonLocked
	ReasonSourceFailed       = status.ReasonSourceFailed
	ReasonPlanFailed         = status.ReasonPlanFailed
	ReasonApplyFailed        = status.ReasonApplyFailed
	ReasonInvalid            = status.ReasonInvalid
	ReasonSuspended          = status.ReasonSuspended
	ReasonPlanned            = status.ReasonPlanned
	ReasonStale              = status.ReasonStale
	ReasonWaiting            = status.ReasonWaiting
	ReasonNoSource           = status.ReasonNoSource
	ReasonPlanTooLarge       = status.ReasonPlanTooLarge
	ReasonForbidden          = status.ReasonForbidden
	ReasonVerificationFailed = status.ReasonVerificationFailed
)

func setCond(st *v1alpha1.Stack, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&st.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: st.Generation,
	})
}

func removeCond(st *v1alpha1.Stack, typ string) {
	meta.RemoveStatusCondition(&st.Status.Conditions, typ)
}

// ready sets Ready with no stall.
func ready(st *v1alpha1.Stack, status metav1.ConditionStatus, reason, msg string) {
	setCond(st, CondReady, status, reason, msg)
	removeCond(st, CondStalled)
	removeCond(st, CondReconciling)
}

// stalled says the Stack cannot progress until its spec or inputs change.
func stalled(st *v1alpha1.Stack, reason, msg string) {
	setCond(st, CondReady, metav1.ConditionFalse, reason, msg)
	setCond(st, CondStalled, metav1.ConditionTrue, reason, msg)
	removeCond(st, CondReconciling)
}

// retrying says the reconcile failed and will be retried.
func retrying(st *v1alpha1.Stack, reason, msg string) {
	setCond(st, CondReady, metav1.ConditionFalse, reason, msg)
	setCond(st, CondReconciling, metav1.ConditionTrue, reason, msg)
	removeCond(st, CondStalled)
}

// isStalled says whether the Stack is Stalled for reason.
func isStalled(st *v1alpha1.Stack, reason string) bool {
	c := meta.FindStatusCondition(st.Status.Conditions, CondStalled)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == reason
}
