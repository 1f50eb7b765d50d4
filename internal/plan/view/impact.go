package view

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/plan"
)

// writeImpact writes the line opening a changing release that says what
// its changes do to the running system.
func writeImpact(b *bytes.Buffer, r *plan.ReleaseChange) {
	if line := impactLine(r.Impact); line != "" {
		fmt.Fprintf(b, "      impact: %s\n", line)
	}
}

// writeImpactSummary writes the stack's impact totals after the summary.
func writeImpactSummary(b *bytes.Buffer, p *plan.Plan) {
	if s := p.ImpactSummary().String(); s != "" {
		b.WriteString(s + "\n")
	}
}

// impactLine is a release's impact in one line, clauses joined by "; ".
func impactLine(imp *plan.Impact) string {
	if imp.Empty() {
		return ""
	}
	var parts []string
	rolls := map[plan.ObjectRef]int{} // the rollout's part
	for _, r := range imp.Rollouts {
		rolls[r.Ref] = len(parts)
		parts = append(parts, rolloutText(r))
	}
	for _, r := range imp.Replacements {
		i, rolled := rolls[r.Ref]
		switch {
		case r.Propagation == "orphan" || !rolled:
			parts = append(parts, replacementText(r))
		case r.Why != "": // a replaced workload's rollout says it, and why
			parts[i] += ": " + r.Why
		}
	}
	for _, s := range imp.StaleConfig {
		var who []string
		for _, c := range s.Consumers {
			who = append(who, fmt.Sprintf("%s %s: %s, %s", c.Ref.Kind, c.Ref.Name, c.Via, c.PicksUp))
		}
		parts = append(parts, fmt.Sprintf("%s %s changes but its consumers do not restart (%s)", s.Ref.Kind, s.Ref.Name, strings.Join(who, "; ")))
	}
	for _, d := range imp.DataLoss {
		parts = append(parts, fmt.Sprintf("data loss: %s %s (%s): %s", d.Ref.Kind, d.Ref.Name, d.Action, d.Reason))
	}
	if d := imp.Requests.Deltas(); d != "" {
		parts = append(parts, d)
	}
	if len(imp.Unknown) > 0 {
		var names []string
		for _, u := range imp.Unknown {
			names = append(names, u.Ref.Kind+" "+u.Ref.Name)
		}
		parts = append(parts, "unknown impact: "+strings.Join(names, ", "))
	}
	return strings.Join(parts, "; ")
}

func rolloutText(r plan.Rollout) string {
	what := fmt.Sprintf("%s %s", r.Ref.Kind, r.Ref.Name)
	pods := fmt.Sprintf("%d %s", r.Replicas, plural(r.Replicas, "pod", "pods"))
	var how []string
	s := r.Strategy
	var text string
	switch s.Type {
	case "RollingUpdate":
		text = what + " rolls"
		how = append(how, pods)
		if s.MaxUnavailable != "" {
			how = append(how, "maxUnavailable "+s.MaxUnavailable)
		}
		if s.MaxSurge != "" {
			how = append(how, "maxSurge "+s.MaxSurge)
		}
		if s.Partition != nil {
			how = append(how, fmt.Sprintf("partition %d", *s.Partition))
		}
	case "Recreate":
		text = what + " is recreated"
		how = append(how, pods+" stopped at once")
	case "OnDelete":
		text = what + "'s pods change only when deleted"
		how = append(how, "OnDelete", pods)
	case "NextRun":
		return what + ": its next run uses the new template"
	default: // Replace, Job
		text = what + " is deleted and created again"
		if r.Ref.Kind == "StatefulSet" { // orphaned, then its pods deleted: the replacement says how
			text = what + "'s pods are deleted and created again"
		}
		how = append(how, pods)
	}
	for _, b := range r.Budgets {
		if b.DisruptionsAllowed == nil {
			how = append(how, fmt.Sprintf("PodDisruptionBudget %s", b.Ref.Name))
			continue
		}
		n := *b.DisruptionsAllowed
		how = append(how, fmt.Sprintf("PodDisruptionBudget %s allows %d %s now", b.Ref.Name, n, plural(n, "disruption", "disruptions")))
	}
	return text + " (" + strings.Join(how, ", ") + ")"
}

func replacementText(r plan.Replacement) string {
	what := fmt.Sprintf("%s %s", r.Ref.Kind, r.Ref.Name)
	if r.Propagation != "orphan" {
		text := what + " is deleted and created again"
		if r.Why != "" {
			text += " (" + r.Why + ")"
		}
		return text
	}
	claims := "its claims are kept unchanged"
	if len(r.KeptClaims) > 0 {
		claims = "claims kept unchanged: " + strings.Join(r.KeptClaims, ", ")
	}
	claims += " (a StatefulSet never resizes its claims; expand_claims does)"
	if r.RecreatesPods && slices.Contains(r.Immutable, "spec.selector") {
		// Its identity goes (a new uid), its pods' names and claims stay.
		text := fmt.Sprintf("%s is replaced under its name (%s): deleted with its pods orphaned, which the new one cannot adopt, so they are deleted and created again by it", what, r.Why)
		if len(r.RemountedClaims) > 0 {
			text += "; the new pods mount their claims again: " + strings.Join(r.RemountedClaims, ", ") + " (data kept: the claim names do not change)"
		}
		return text + "; " + claims
	}
	if len(r.Immutable) > 0 {
		what += ": " + strings.Join(r.Immutable, ", ") + " cannot change;"
	} else {
		what += " is"
	}
	if r.RecreatesPods {
		text := fmt.Sprintf("%s replaced, its pods orphaned, then deleted and created again by the new one with its new claims (it cannot adopt pods without them)", what)
		if len(r.RemountedClaims) > 0 {
			text += "; the new pods mount their claims again: " + strings.Join(r.RemountedClaims, ", ")
		}
		return text + "; " + claims
	}
	return fmt.Sprintf("%s replaced, its pods orphaned and adopted by the new one; %s", what, claims)
}
