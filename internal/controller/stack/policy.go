package stack

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/planstore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReasonPolicyDenied: the plan is denied by policies; nothing is applied,
// whatever the approval mode, until it is approved with an override of
// each (convoy approve --allow-policy).
const ReasonPolicyDenied = "PolicyDenied"

// allowedFor are the overrides of policies that apply to the plan of
// digest: spec.allowPolicies, when spec.approvedPlan names that plan.
func allowedFor(st *v1alpha1.Stack, digest string) []string {
	if st.Spec.ApprovedPlan != digest {
		return nil
	}
	return st.Spec.AllowPolicies
}

// deniedStill are the policies that deny the plan and that no override of
// its approval covers.
func deniedStill(st *v1alpha1.Stack, p *v1alpha1.PlanStatus) []string {
	allowed := allowedFor(st, p.Digest)
	var out []string
	for _, name := range p.DeniedBy {
		if !slices.Contains(allowed, name) {
			out = append(out, name)
		}
	}
	return out
}

// policyDenied records a plan that policies deny: Ready=False with reason
// PolicyDenied naming them, approval required (with the override). The
// event is sent once, when the plan is made.
func (r *reconciler) policyDenied(sr *stackRun, p *v1alpha1.PlanStatus, denied []string, requeue time.Duration) outcome {
	st := sr.st
	msg := fmt.Sprintf("plan %s (%s) is denied by %s %s: nothing applied; the plan's ConfigMap %s shows why. To apply it anyway: convoy approve %s -n %s --allow-policy %s",
		p.Digest, p.Summary, plural(len(denied), "policy", "policies"), strings.Join(denied, ", "), planstore.ObjectName(st.Name), st.Name, st.Namespace, strings.Join(denied, " --allow-policy "))
	clearError(st)
	setCond(st, v1alpha1.CondApprovalRequired, metav1.ConditionTrue, ReasonPolicyDenied, msg)
	ready(st, metav1.ConditionFalse, ReasonPolicyDenied, msg)
	return outcome{result: "policy_denied", requeue: requeue}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
