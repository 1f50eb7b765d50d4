package v1alpha1

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DeepCopyInto copies p into out.
func (p *Pipeline) DeepCopyInto(out *Pipeline) {
	*out = *p
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	p.Spec.DeepCopyInto(&out.Spec)
	p.Status.DeepCopyInto(&out.Status)
}

// DeepCopy copies p.
func (p *Pipeline) DeepCopy() *Pipeline {
	if p == nil {
		return nil
	}
	out := new(Pipeline)
	p.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (p *Pipeline) DeepCopyObject() runtime.Object { return p.DeepCopy() }

// DeepCopyInto copies s into out.
func (s *PipelineSpec) DeepCopyInto(out *PipelineSpec) {
	*out = *s
	out.Stages = make([]Stage, len(s.Stages))
	for i := range s.Stages {
		s.Stages[i].DeepCopyInto(&out.Stages[i])
	}
	if s.Stages == nil {
		out.Stages = nil
	}
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
	out.Interval = copyDuration(s.Interval)
	out.Approvals = slices.Clone(s.Approvals)
	out.Verify = s.Verify.DeepCopy()
}

// DeepCopyInto copies s into out.
func (s *Stage) DeepCopyInto(out *Stage) {
	*out = *s
	if s.Stacks != nil {
		out.Stacks = make([]PipelineStackRef, len(s.Stacks))
		for i := range s.Stacks {
			s.Stacks[i].DeepCopyInto(&out.Stacks[i])
		}
	}
	out.Bake = copyDuration(s.Bake)
	if s.Gates != nil {
		out.Gates = make([]Gate, len(s.Gates))
		for i, g := range s.Gates {
			out.Gates[i] = g
			if g.Test != nil {
				out.Gates[i].Test = &TestGate{}
			}
			if g.Prometheus != nil {
				pg := *g.Prometheus
				out.Gates[i].Prometheus = &pg
			}
		}
	}
	if s.MaxParallel != nil {
		n := *s.MaxParallel
		out.MaxParallel = &n
	}
}

// DeepCopyInto copies r into out.
func (r *PipelineStackRef) DeepCopyInto(out *PipelineStackRef) {
	*out = *r
	out.raw = slices.Clone(r.raw)
}

// DeepCopyInto copies s into out.
func (s *PipelineStatus) DeepCopyInto(out *PipelineStatus) {
	*out = *s
	if s.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
	if s.Latest != nil {
		l := *s.Latest
		l.CheckedAt = copyTime(s.Latest.CheckedAt)
		out.Latest = &l
	}
	if s.Stages != nil {
		out.Stages = make([]StageStatus, len(s.Stages))
		for i, st := range s.Stages {
			out.Stages[i] = st
			out.Stages[i].Since = copyTime(st.Since)
			out.Stages[i].GatesChecked = copyTime(st.GatesChecked)
			if st.FailedGate != nil {
				g := *st.FailedGate
				out.Stages[i].FailedGate = &g
			}
			if st.Gates != nil {
				out.Stages[i].Gates = make([]GateResult, len(st.Gates))
				for j, g := range st.Gates {
					out.Stages[i].Gates[j] = g
					out.Stages[i].Gates[j].Time = copyTime(g.Time)
				}
			}
		}
	}
	if s.Stacks != nil {
		out.Stacks = make([]PipelineStack, len(s.Stacks))
		for i, st := range s.Stacks {
			out.Stacks[i] = st
			out.Stacks[i].PinnedAt = copyTime(st.PinnedAt)
			out.Stacks[i].ReadyAt = copyTime(st.ReadyAt)
		}
	}
	if s.Notified != nil {
		out.Notified = make([]StageNotified, len(s.Notified))
		for i, n := range s.Notified {
			out.Notified[i] = n
			out.Notified[i].Time = copyTime(n.Time)
		}
	}
}

// DeepCopyInto copies l into out.
func (l *PipelineList) DeepCopyInto(out *PipelineList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Pipeline, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy copies l.
func (l *PipelineList) DeepCopy() *PipelineList {
	if l == nil {
		return nil
	}
	out := new(PipelineList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *PipelineList) DeepCopyObject() runtime.Object { return l.DeepCopy() }

func copyDuration(d *metav1.Duration) *metav1.Duration {
	if d == nil {
		return nil
	}
	c := *d
	return &c
}

func copyTime(t *metav1.Time) *metav1.Time {
	if t == nil {
		return nil
	}
	return t.DeepCopy()
}
