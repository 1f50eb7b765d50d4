package v1alpha1

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApproveVerb is the verb on stacks.convoy.dev (pipelines.convoy.dev for
// a stage) that approving needs: the admission policy `convoy controller
// install` adds refuses a change of a Stack's approval fields (a
// Pipeline's spec.approvals) by a user the API server's authorizer does
// not allow it.
const ApproveVerb = "approve"

// Approvals are who approved which plans of a Stack, and how many
// distinct users one plan needs.
type Approvals struct {
	// Required is how many distinct users must approve one plan digest
	// before it is applied (default 1).
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	Required *int32 `json:"required,omitempty"`
	// Entries are the approvals given. The admission policy lets a user
	// add only entries whose approvedBy is their own username.
	//
	// +kubebuilder:validation:MaxItems=100
	// +listType=map
	// +listMapKey=digest
	// +listMapKey=approvedBy
	Entries []ApprovalEntry `json:"entries,omitempty"`
}

// ApprovalEntry is one user's approval of one plan.
type ApprovalEntry struct {
	// Digest is the plan approved (status.plan.digest).
	//
	// +kubebuilder:validation:Pattern=`^sha256:[0-9a-f]{64}$`
	Digest string `json:"digest"`
	// ApprovedBy is the username of the request that added the entry
	// (system:serviceaccount:NS:NAME for a service account); the admission
	// policy refuses any other.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ApprovedBy string `json:"approvedBy"`
	// ApprovedAt is when, by the approver's clock.
	ApprovedAt *metav1.Time `json:"approvedAt,omitempty"`
}

// ApprovalStatus says who approved a plan.
type ApprovalStatus struct {
	// Digest is the plan.
	Digest string `json:"digest,omitempty"`
	// Required is how many distinct users it needs.
	Required int32 `json:"required,omitempty"`
	// ApprovedBy are the users who approved it, sorted.
	ApprovedBy []string `json:"approvedBy,omitempty"`
	// Unrecorded: approved by spec.approvedPlan alone, without an entry
	// (a Stack approved before entries were recorded, or by a tool that
	// sets approvedPlan): whoever set it had the approve verb, but who
	// that was is not recorded.
	Unrecorded bool `json:"unrecorded,omitempty"`
}

// RequiredApprovals is spec.approvals.required, 1 when unset.
func (s *StackSpec) RequiredApprovals() int {
	if s.Approvals == nil || s.Approvals.Required == nil || *s.Approvals.Required < 1 {
		return 1
	}
	return int(*s.Approvals.Required)
}

// ApprovalOf says who approved the plan of digest, and whether that is
// enough for it to be applied: required distinct users in
// spec.approvals.entries, or, when one approval is required and no entry
// names the digest, spec.approvedPlan naming it (Unrecorded).
func (s *StackSpec) ApprovalOf(digest string) (ApprovalStatus, bool) {
	a := ApprovalStatus{Digest: digest, Required: int32(s.RequiredApprovals())}
	if s.Approvals != nil {
		for _, e := range s.Approvals.Entries {
			if e.Digest == digest && e.ApprovedBy != "" && !slices.Contains(a.ApprovedBy, e.ApprovedBy) {
				a.ApprovedBy = append(a.ApprovedBy, e.ApprovedBy)
			}
		}
	}
	slices.Sort(a.ApprovedBy)
	if len(a.ApprovedBy) == 0 && a.Required == 1 && digest != "" && s.ApprovedPlan == digest {
		a.Unrecorded = true
		return a, true
	}
	return a, len(a.ApprovedBy) >= int(a.Required)
}
