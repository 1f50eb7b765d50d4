package stackset

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What a StackSet says of its Stacks is a pure function of them: their
// states, the plans grouped by identical plan, and the counts.

// maxPlanText bounds a group's plan text (a failure's message).
const maxPlanText = 300

// stateOf is a Stack's Ready condition as one word: Ready, or its
// reason ("Pending" before its first reconcile of this generation).
func stateOf(st *v1alpha1.Stack) string {
	c := meta.FindStatusCondition(st.Status.Conditions, v1alpha1.CondReady)
	switch {
	case c == nil || st.Status.ObservedGeneration != st.Generation:
		return "Pending"
	case c.Status == metav1.ConditionTrue:
		return "Ready"
	}
	return c.Reason
}

// PlanOf is what a Stack's current plan would do, in words that are
// equal for identical plans: what it changes, or that it has nothing to
// apply, or why it has no plan. Stacks of equal words are one group of
// the fleet plan, and are approved together (convoy stackset approve).
func PlanOf(st *v1alpha1.Stack) string {
	c := meta.FindStatusCondition(st.Status.Conditions, v1alpha1.CondReady)
	if c == nil || st.Status.ObservedGeneration != st.Generation {
		return "not planned yet"
	}
	p := st.Status.Plan
	switch c.Reason {
	case v1alpha1.ReasonNoSource:
		return "no source yet (the rollout pins one)"
	case v1alpha1.ReasonPlanFailed, v1alpha1.ReasonSourceFailed, v1alpha1.ReasonForbidden, v1alpha1.ReasonInvalid,
		v1alpha1.ReasonVerificationFailed, v1alpha1.ReasonPlanTooLarge, v1alpha1.ReasonLocked, v1alpha1.ReasonSuspended:
		msg := c.Message
		if len(msg) > maxPlanText {
			msg = msg[:maxPlanText] + "…"
		}
		return c.Reason + ": " + msg
	}
	if p == nil {
		return "not planned yet"
	}
	if !p.HasChanges || st.Status.LastAppliedPlan == p.Digest {
		return "no changes"
	}
	out := p.Summary
	if len(p.Changes) > 0 {
		out += " (" + strings.Join(p.Changes, ", ") + ")"
	}
	if c.Reason == v1alpha1.ReasonApplyFailed {
		out += ": ApplyFailed"
	}
	return out
}

// groupPlans groups the Stacks by identical plan, the largest group
// first (then by plan), each group's Stacks by name.
func groupPlans(stacks []*v1alpha1.Stack) []v1alpha1.PlanGroup {
	by := map[string][]string{}
	for _, st := range stacks {
		k := PlanOf(st)
		by[k] = append(by[k], st.Name)
	}
	var out []v1alpha1.PlanGroup
	for _, k := range slices.Sorted(maps.Keys(by)) {
		names := by[k]
		slices.Sort(names)
		out = append(out, v1alpha1.PlanGroup{Plan: k, Stacks: names})
	}
	slices.SortStableFunc(out, func(a, b v1alpha1.PlanGroup) int { return len(b.Stacks) - len(a.Stacks) })
	return out
}

// planSummary is the groups in one line: "2 Stacks: 1 to install …; 1
// Stack: no changes".
func planSummary(groups []v1alpha1.PlanGroup) string {
	var parts []string
	for _, g := range groups {
		parts = append(parts, fmt.Sprintf("%s: %s", count(len(g.Stacks), "Stack", "Stacks"), g.Plan))
	}
	return strings.Join(parts, "; ")
}

// countSummary is "3 Stacks: 2 Ready, 1 ApplyFailed".
func countSummary(stacks []*v1alpha1.Stack) string {
	if len(stacks) == 0 {
		return "0 Stacks"
	}
	by := map[string]int{}
	for _, st := range stacks {
		by[stateOf(st)]++
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(by)) {
		parts = append(parts, fmt.Sprintf("%d %s", by[k], k))
	}
	return count(len(stacks), "Stack", "Stacks") + ": " + strings.Join(parts, ", ")
}

func count(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// failing says a Stack's Ready condition is a failure, not a wait.
func failing(st *v1alpha1.Stack) bool {
	switch stateOf(st) {
	case v1alpha1.ReasonPlanFailed, v1alpha1.ReasonSourceFailed, v1alpha1.ReasonApplyFailed, v1alpha1.ReasonForbidden,
		v1alpha1.ReasonInvalid, v1alpha1.ReasonVerificationFailed, v1alpha1.ReasonPlanTooLarge:
		return true
	}
	return false
}

// failingOn names the Stacks of a step that fail on its digest, each
// with its cluster and why: "web-c2 on cluster fleet/c2: PlanFailed: …".
func failingOn(stacks []*v1alpha1.Stack, steps map[string]string, step, digest string, clusters map[string]string) []string {
	var out []string
	for _, st := range stacks {
		if steps[st.Name] != step || !strings.HasSuffix(st.Spec.Source, "@"+digest) || !failing(st) {
			continue
		}
		msg := stateOf(st)
		if c := meta.FindStatusCondition(st.Status.Conditions, v1alpha1.CondReady); c != nil && c.Message != "" {
			msg += ": " + c.Message
		}
		if len(msg) > maxPlanText {
			msg = msg[:maxPlanText] + "…"
		}
		out = append(out, fmt.Sprintf("Stack %s%s failed: %s", st.Name, onCluster(clusters[st.Name]), msg))
	}
	return out
}

// onClusters names the clusters of a step's Stacks: " (clusters fleet/c2, fleet/c3)".
func onClusters(step string, steps, clusters map[string]string) string {
	var cs []string
	for _, n := range slices.Sorted(maps.Keys(steps)) {
		if steps[n] == step && clusters[n] != "" {
			cs = append(cs, clusters[n])
		}
	}
	switch len(cs) {
	case 0:
		return ""
	case 1:
		return " (cluster " + cs[0] + ")"
	}
	return " (clusters " + strings.Join(cs, ", ") + ")"
}

func onCluster(c string) string {
	if c == "" {
		return ""
	}
	return " on cluster " + c
}
