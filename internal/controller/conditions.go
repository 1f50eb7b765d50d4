package controller

import (
	"github.com/convoy-sh/convoy/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types (kstatus: Ready, Reconciling and Stalled; the rest are
// convoy's own).
const (
	CondReady            = "Ready"
	CondReconciling      = "Reconciling"
	CondStalled          = "Stalled"
	CondPlanned          = "Planned"
	CondApprovalRequired = "ApprovalRequired"
	CondDrifted          = "Drifted"
)

// Reasons.
const (
	ReasonUpToDate         = "UpToDate"
	ReasonApplied          = "Applied"
	ReasonApprovalRequired = "ApprovalRequired"
	ReasonApprovalMismatch = "ApprovalMismatch"
	ReasonDrifted          = "Drifted"
	ReasonDriftCorrected   = "DriftCorrected"
	ReasonNoDrift          = "NoDrift"
	ReasonLocked           = "Locked"
	ReasonSourceFailed     = "SourceFailed"
	ReasonPlanFailed       = "PlanFailed"
	ReasonApplyFailed      = "ApplyFailed"
	ReasonInvalid          = "Invalid"
	ReasonSuspended        = "Suspended"
	ReasonPlanned          = "Planned"
	ReasonStale            = "PlanStale"
	ReasonWaiting          = "Waiting"
	// ReasonNoSource: a Stack without spec.source waits for a Pipeline.
	ReasonNoSource = "NoSource"
	// ReasonPlanTooLarge: the saved plan is over --max-plan-size.
	ReasonPlanTooLarge = "PlanTooLarge"
	// ReasonForbidden: the Stack's identity may not make a request its
	// plan or apply needs (a service account's Role lacks it).
	ReasonForbidden = "Forbidden"
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
