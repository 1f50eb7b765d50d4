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
		if d.Action == plan.ObjectNoOp { // a claim left unused: nothing happens to it
			parts = append(parts, fmt.Sprintf("data loss: %s %s: %s", d.Ref.Kind, d.Ref.Name, d.Reason))
			continue
		}
		parts = append(parts, fmt.Sprintf("data loss: %s %s (%s): %s", d.Ref.Kind, d.Ref.Name, d.Action, d.Reason))
	}
	for _, z := range imp.ScaledToZero {
		parts = append(parts, scaledToZeroText(z))
	}
	if d := imp.Requests.Deltas(); d != "" {
		parts = append(parts, "requests "+d)
	}
	if len(imp.Unknown) > 0 {
		parts = append(parts, unknownText(imp.Unknown))
	}
	return strings.Join(parts, "; ")
}

// unknownText names the objects whose impact convoy cannot tell, by kind
// in the order first seen: a kind's objects by name when it has at most
// unknownNamed of them, else counted ("30 PrometheusRules"), so that a
// chart of many custom resources (kube-prometheus-stack's 46) is one short
// clause, not a line of thousands of characters.
func unknownText(unknown []plan.UnknownImpact) string {
	var kinds []string
	names := map[string][]string{}
	for _, u := range unknown {
		if _, ok := names[u.Ref.Kind]; !ok {
			kinds = append(kinds, u.Ref.Kind)
		}
		names[u.Ref.Kind] = append(names[u.Ref.Kind], u.Ref.Name)
	}
	var out []string
	for _, k := range kinds {
		if n := names[k]; len(n) > unknownNamed {
			out = append(out, fmt.Sprintf("%d %s", len(n), pluralKind(k)))
		} else {
			out = append(out, k+" "+strings.Join(n, ", "))
		}
	}
	return "unknown impact: " + strings.Join(out, "; ")
}

// unknownNamed is how many objects of one kind the impact line names
// before it counts them instead.
const unknownNamed = 3

// pluralKind is a kind's plural as the text says it: "PrometheusRules",
// "Ingresses", "NetworkPolicies".
func pluralKind(kind string) string {
	switch {
	case strings.HasSuffix(kind, "s"), strings.HasSuffix(kind, "x"), strings.HasSuffix(kind, "ch"), strings.HasSuffix(kind, "sh"):
		return kind + "es"
	case strings.HasSuffix(kind, "y") && len(kind) > 1 && !strings.ContainsRune("aeiou", rune(kind[len(kind)-2])):
		return kind[:len(kind)-1] + "ies"
	}
	return kind + "s"
}

// scaledToZeroText says that a workload's pods all stop, and which of
// the release's Services lose them: "Deployment web scales to 0: its 2
// pods stop, and Service web has no pod of it to send traffic to".
func scaledToZeroText(z plan.ScaleToZero) string {
	text := fmt.Sprintf("%s %s scales to 0: its %d %s stop", z.Ref.Kind, z.Ref.Name, z.From, plural(z.From, "pod", "pods"))
	if z.From == 1 {
		text = fmt.Sprintf("%s %s scales to 0: its pod stops", z.Ref.Kind, z.Ref.Name)
	}
	if len(z.Services) == 0 {
		return text + ", and nothing of it runs"
	}
	var names []string
	for _, s := range z.Services {
		names = append(names, s.Name)
	}
	return text + fmt.Sprintf(", and %s %s no pod of it to send traffic to", plural(len(names), "Service", "Services")+" "+strings.Join(names, ", "), plural(len(names), "has", "have"))
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
	if len(r.StorageChanges) > 0 { // said only where a template's size changes
		claims += fmt.Sprintf(" (volumeClaimTemplates %s: a StatefulSet never resizes its claims; expand_claims does)", strings.Join(r.StorageChanges, ", "))
	}
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
