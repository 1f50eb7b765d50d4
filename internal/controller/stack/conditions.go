package stack

import (
	"github.com/convoy-sh/convoy/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	setCond(st, v1alpha1.CondReady, status, reason, msg)
	removeCond(st, v1alpha1.CondStalled)
	removeCond(st, v1alpha1.CondReconciling)
}

// stalled says the Stack cannot progress until its spec or inputs change.
func stalled(st *v1alpha1.Stack, reason, msg string) {
	setCond(st, v1alpha1.CondReady, metav1.ConditionFalse, reason, msg)
	setCond(st, v1alpha1.CondStalled, metav1.ConditionTrue, reason, msg)
	removeCond(st, v1alpha1.CondReconciling)
}

// retrying says the reconcile failed and will be retried.
func retrying(st *v1alpha1.Stack, reason, msg string) {
	setCond(st, v1alpha1.CondReady, metav1.ConditionFalse, reason, msg)
	setCond(st, v1alpha1.CondReconciling, metav1.ConditionTrue, reason, msg)
	removeCond(st, v1alpha1.CondStalled)
}

// isStalled says whether the Stack is Stalled for reason.
func isStalled(st *v1alpha1.Stack, reason string) bool {
	c := meta.FindStatusCondition(st.Status.Conditions, v1alpha1.CondStalled)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == reason
}
