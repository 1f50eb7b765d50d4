package planstore

import (
	"context"
	"errors"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrNoStoredPlan: the Stack has no current plan, or its plan objects hold
// another one (a newer plan is being written).
var ErrNoStoredPlan = errors.New("the Stack has no stored plan")

// StoredPlanText reads the text of the Stack's current plan from its plan
// ConfigMap (masked already): for readers who may not read its Secret.
func StoredPlanText(ctx context.Context, c client.Reader, st *v1alpha1.Stack) (string, error) {
	if st.Status.Plan == nil || st.Status.Plan.Digest == "" {
		return "", ErrNoStoredPlan
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, types.NamespacedName{Namespace: st.Namespace, Name: ObjectName(st.Name)}, &cm); err != nil {
		return "", err
	}
	if cm.Data[planDigestKey] != st.Status.Plan.Digest {
		return "", ErrNoStoredPlan
	}
	return cm.Data[planTextKey], nil
}
