package stackset

import (
	"fmt"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/pipeline"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
)

// status.rollout says how far the StackSet's digest got: the digest of
// the template's source (pinned by a Pipeline stage, or given by hand),
// or a rolling StackSet's newest digest of its tag. A Pipeline stage
// promoting the StackSet reads it: Done is its Ready, Halted its failure.

// rolloutOf is the StackSet's rollout of its digest (nil: no digest
// yet). It is Done when every Stack is Ready on the digest with its plan
// applied (as a Pipeline stage judges a Stack) and every step verified
// it; Halted when a step failed on it or, without a strategy, a Stack
// failed on it (an apply failed, stalled); else Progressing.
func rolloutOf(ss *v1alpha1.StackSet, stacks []*v1alpha1.Stack, pl *v1alpha1.Pipeline, clusters map[string]string) *v1alpha1.StackSetRollout {
	digest := ""
	if ref, err := artifact.ParseRef(ss.Spec.Template.Spec.Source); err == nil {
		digest = ref.Digest
	}
	if digest == "" && pl != nil && pl.Status.Latest != nil {
		digest = pl.Status.Latest.Digest
	}
	if digest == "" {
		return nil
	}
	out := &v1alpha1.StackSetRollout{Digest: digest, Phase: v1alpha1.RolloutProgressing}
	var steps []v1alpha1.StageStatus
	if pl != nil {
		steps = pl.Status.Stages
	}
	for _, s := range steps {
		if s.Phase == v1alpha1.PhaseFailed && s.Digest == digest {
			out.Phase = v1alpha1.RolloutHalted
			out.Message = fmt.Sprintf("step %s failed on %s: %s", s.Name, digest, s.Message)
			return out
		}
	}
	ready := 0
	var waiting []string
	for _, st := range stacks {
		v := pipeline.ViewStack(st)
		switch {
		case v.Pinned == digest && v.Ready:
			ready++
			continue
		case v.Pinned == digest && v.Failed != "" && pl == nil:
			out.Phase = v1alpha1.RolloutHalted
			out.Message = fmt.Sprintf("Stack %s%s failed on %s: %s", st.Name, onCluster(clusters[st.Name]), digest, v.Failed)
			return out
		}
		if len(waiting) < 5 {
			waiting = append(waiting, st.Name+onCluster(clusters[st.Name]))
		}
	}
	verified := 0
	for _, s := range steps {
		if s.Phase == v1alpha1.PhaseVerified && s.Verified == digest {
			verified++
		} else {
			waiting = append(waiting, fmt.Sprintf("step %s %s", s.Name, s.Phase))
		}
	}
	if ready == len(stacks) && verified == len(steps) && (pl == nil) == (ss.Spec.Strategy == nil || ss.Spec.Strategy.Rolling == nil) {
		out.Phase = v1alpha1.RolloutDone
		out.Message = fmt.Sprintf("every Stack (%d) is Ready on %s", ready, digest)
		if len(steps) > 0 {
			out.Message += fmt.Sprintf(" and every step (%d) verified it", verified)
		}
		return out
	}
	out.Message = fmt.Sprintf("%d of %d Stacks Ready on %s", ready, len(stacks), digest)
	if ss.Spec.Paused && pl != nil {
		out.Message += " (paused)"
	}
	if len(waiting) > 0 {
		out.Message += "; waiting for " + strings.Join(waiting, ", ")
	}
	return out
}

// onClusterOf maps the status's Stacks to their clusters.
func onClusterOf(stacks []v1alpha1.StackSetStack) map[string]string {
	out := map[string]string{}
	for _, s := range stacks {
		out[s.Name] = s.Cluster
	}
	return out
}
