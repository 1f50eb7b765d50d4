package v1alpha1

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DeepCopyInto copies s into out.
func (s *Stack) DeepCopyInto(out *Stack) {
	*out = *s
	out.TypeMeta = s.TypeMeta
	s.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	s.Spec.DeepCopyInto(&out.Spec)
	s.Status.DeepCopyInto(&out.Status)
}

// DeepCopy copies s.
func (s *Stack) DeepCopy() *Stack {
	if s == nil {
		return nil
	}
	out := new(Stack)
	s.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (s *Stack) DeepCopyObject() runtime.Object { return s.DeepCopy() }

// DeepCopyInto copies s into out.
func (s *StackSpec) DeepCopyInto(out *StackSpec) {
	*out = *s
	out.Vars = maps.Clone(s.Vars)
	out.VarsFrom = slices.Clone(s.VarsFrom)
	if s.Interval != nil {
		d := *s.Interval
		out.Interval = &d
	}
	out.Clusters = slices.Clone(s.Clusters)
	out.AllowPolicies = slices.Clone(s.AllowPolicies)
	out.Approvals = s.Approvals.DeepCopy()
	if s.Notifications != nil {
		out.Notifications = make([]Notification, len(s.Notifications))
		for i := range s.Notifications {
			s.Notifications[i].DeepCopyInto(&out.Notifications[i])
		}
	}
	if s.SourceSecretRef != nil {
		r := *s.SourceSecretRef
		out.SourceSecretRef = &r
	}
	if s.Retry != nil {
		r := *s.Retry
		if s.Retry.Attempts != nil {
			n := *s.Retry.Attempts
			r.Attempts = &n
		}
		if s.Retry.Backoff != nil {
			d := *s.Retry.Backoff
			r.Backoff = &d
		}
		out.Retry = &r
	}
	out.Verify = s.Verify.DeepCopy()
	out.decodeErrors = slices.Clone(s.decodeErrors)
}

// DeepCopyInto copies n into out.
func (n *Notification) DeepCopyInto(out *Notification) {
	*out = *n
	if n.URLFrom != nil {
		u := *n.URLFrom
		out.URLFrom = &u
	}
	out.Events = slices.Clone(n.Events)
}

// DeepCopyInto copies s into out.
func (s *StackStatus) DeepCopyInto(out *StackStatus) {
	*out = *s
	if s.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
	if s.Source != nil {
		src := *s.Source
		out.Source = &src
	}
	if s.Plan != nil {
		p := *s.Plan
		if s.Plan.ConfigMapRef != nil {
			r := *s.Plan.ConfigMapRef
			p.ConfigMapRef = &r
		}
		p.CreatedAt = s.Plan.CreatedAt.DeepCopy()
		p.DeniedBy = slices.Clone(s.Plan.DeniedBy)
		out.Plan = &p
	}
	out.Releases = slices.Clone(s.Releases)
	out.LastReconcileTime = s.LastReconcileTime.DeepCopy()
	out.NextRetryTime = s.NextRetryTime.DeepCopy()
	out.Approval = s.Approval.DeepCopy()
	out.LastAppliedApproval = s.LastAppliedApproval.DeepCopy()
	if s.Notified != nil {
		out.Notified = make([]NotifiedEvent, len(s.Notified))
		for i, n := range s.Notified {
			n.Time = n.Time.DeepCopy()
			out.Notified[i] = n
		}
	}
}

// DeepCopyInto copies l into out.
func (l *StackList) DeepCopyInto(out *StackList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Stack, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy copies l.
func (l *StackList) DeepCopy() *StackList {
	if l == nil {
		return nil
	}
	out := new(StackList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *StackList) DeepCopyObject() runtime.Object { return l.DeepCopy() }
