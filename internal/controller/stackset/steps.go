package stackset

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// A rolling strategy is a Pipeline the StackSet owns: one stage per step,
// its Stacks those the step takes. The Pipeline reconciler pins the
// digests, bakes, runs the gates, waits for approvals, rolls back and
// halts; the StackSet only says which Stack is in which step.

// stepName is step i's name.
func stepName(s v1alpha1.RolloutStep, i int) string {
	if s.Name != "" {
		return s.Name
	}
	return fmt.Sprintf("step-%d", i+1)
}

// assignSteps says which step takes each Stack (by name): each step
// those left that its selector matches (by their cluster's labels), or
// its percent of all Stacks (rounded up) in name order, or all left;
// the last step takes every Stack left.
func assignSteps(steps []v1alpha1.RolloutStep, gen []generated) (map[string]string, error) {
	byName := map[string]generated{}
	for _, g := range gen {
		byName[g.stack.Name] = g
	}
	left := slices.Sorted(maps.Keys(byName))
	out := map[string]string{}
	for i, s := range steps {
		name := stepName(s, i)
		var take []string
		switch {
		case i == len(steps)-1:
			take = left
		case s.Selector != nil:
			sel, err := metav1.LabelSelectorAsSelector(s.Selector)
			if err != nil {
				return nil, fmt.Errorf("spec.strategy.rolling.steps[%d].selector: %w", i, err)
			}
			for _, n := range left {
				var l map[string]string
				if c := byName[n].element.cluster; c != nil {
					l = c.Labels
				}
				if sel.Matches(labels.Set(l)) {
					take = append(take, n)
				}
			}
		case s.Percent != nil:
			n := (int(*s.Percent)*len(byName) + 99) / 100
			take = left[:min(n, len(left))]
		default:
			take = left
		}
		for _, n := range take {
			out[n] = name
		}
		left = slices.DeleteFunc(left, func(n string) bool { _, ok := out[n]; return ok })
	}
	return out, nil
}

// rolloutPipeline is the Pipeline of a rolling StackSet: the template's
// source repository and tag (or the digest a Pipeline stage pinned it
// to), a stage per step with Stacks. Approvals are the existing
// Pipeline's (convoy promote writes them there). nil without a source
// yet: the Stacks wait for a Pipeline stage to pin the StackSet.
func rolloutPipeline(ss *v1alpha1.StackSet, rollout []v1alpha1.RolloutStep, gen []generated, steps map[string]string, approvals []v1alpha1.StageApproval) (*v1alpha1.Pipeline, error) {
	src := ss.Spec.Template.Spec.Source
	if src == "" {
		return nil, nil
	}
	ref, err := artifact.ParseRef(src)
	if err != nil || ref.Tag == "" && ref.Digest == "" || ref.Tag != "" && ref.Digest != "" {
		return nil, fmt.Errorf("spec.template.spec.source %q: a rolling strategy follows a tag (oci://registry/repository:tag), and rolls each of its digests out, or one digest (oci://registry/repository@sha256:…, as a Pipeline stage pins it)", src)
	}
	follow := v1alpha1.Follow{Tag: ref.Tag}
	if ref.Digest != "" {
		follow = v1alpha1.Follow{Digest: ref.Digest}
	}
	repo := "oci://" + ref.Repository
	spec := v1alpha1.PipelineSpec{
		Source: repo, Follow: follow, Suspend: ss.Spec.Paused,
		SourceSecretRef: ss.Spec.Template.Spec.SourceSecretRef, Verify: ss.Spec.Template.Spec.Verify,
		ServiceAccountName: ss.Spec.Template.Spec.ServiceAccountName, Approvals: approvals,
	}
	if iv := ss.Spec.Template.Spec.Interval; iv != nil {
		spec.Interval = iv.DeepCopy()
	}
	for i, s := range rollout {
		name := stepName(s, i)
		var stacks []v1alpha1.PipelineStackRef
		for _, g := range gen {
			if steps[g.stack.Name] == name {
				stacks = append(stacks, v1alpha1.PipelineStackRef{Name: g.stack.Name})
			}
		}
		if len(stacks) == 0 {
			continue
		}
		slices.SortFunc(stacks, func(a, b v1alpha1.PipelineStackRef) int { return strings.Compare(a.Name, b.Name) })
		approval := s.Approval
		if approval == "" {
			approval = v1alpha1.ApprovalAuto
		}
		spec.Stages = append(spec.Stages, v1alpha1.Stage{
			Name: name, Stacks: stacks, Bake: s.Bake, Gates: s.Gates, MaxParallel: s.MaxParallel,
			Approval: approval, Rollback: s.Rollback,
		})
	}
	p := &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: ss.Name, Namespace: ss.Namespace, Labels: map[string]string{v1alpha1.StackSetLabel: ss.Name}},
		Spec:       spec,
	}
	return p, nil
}
