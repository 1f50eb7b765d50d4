package view

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"
)

// policyLine is one violation as the text plan prints it.
func policyLine(r plan.PolicyResult, withRelease bool) string {
	sym := "!"
	level := string(r.Level)
	if r.Allowed {
		level = "deny, allowed"
	}
	if r.Level == plan.PolicyWarn && !r.Allowed {
		sym = "~"
	}
	line := fmt.Sprintf("%s policy %s (%s)", sym, r.Policy, level)
	var on []string
	if withRelease && r.Release != "" {
		on = append(on, r.Release)
	}
	if r.Object != "" {
		on = append(on, r.ObjectText())
	}
	if len(on) > 0 {
		line += " on " + strings.Join(on, ": ")
	}
	return line + ": " + r.Message
}

// writeReleasePolicies lists the violations about r under it.
func writeReleasePolicies(b *bytes.Buffer, p *plan.Plan, r *plan.ReleaseChange) {
	addr := r.Addr.String()
	for _, res := range p.PolicyResults {
		if res.Release == addr {
			fmt.Fprintf(b, "      %s\n", policyLine(res, false))
		}
	}
}

// writePolicySummary lists the violations the release sections did not
// (rules over the whole plan, releases not shown), then counts them all.
func writePolicySummary(b *bytes.Buffer, p *plan.Plan, shown map[string]bool) {
	if len(p.PolicyResults) == 0 && len(p.AllowedPolicies) == 0 {
		if at := atApply(p); len(at) > 0 {
			fmt.Fprintf(b, "Policies are checked at apply on %s (rendered only then).\n", strings.Join(at, ", "))
		}
		return
	}
	var rest []string
	for _, res := range p.PolicyResults {
		if res.Release == "" || !shown[res.Release] {
			rest = append(rest, "  "+policyLine(res, true))
		}
	}
	if len(rest) > 0 {
		b.WriteString("Policies:\n\n" + strings.Join(rest, "\n") + "\n\n")
	}
	denials, warnings := 0, 0
	for _, res := range p.PolicyResults {
		if res.Level == plan.PolicyDeny {
			denials++
		} else {
			warnings++
		}
	}
	line := fmt.Sprintf("Policies: %d %s, %d %s.", denials, plural(denials, "denial", "denials"), warnings, plural(warnings, "warning", "warnings"))
	if denied := p.DeniedPolicies(); len(denied) > 0 {
		line += fmt.Sprintf(" Denied by %s: apply refuses this plan.", strings.Join(denied, ", "))
	}
	if len(p.AllowedPolicies) > 0 {
		line += fmt.Sprintf(" Allowed (--allow-policy): %s.", strings.Join(p.AllowedPolicies, ", "))
	}
	b.WriteString(line + "\n")
	if at := atApply(p); len(at) > 0 {
		fmt.Fprintf(b, "Policies are checked at apply on %s (rendered only then).\n", strings.Join(at, ", "))
	}
}

// The --json document's policy_results entries.
type jsonPolicyResult struct {
	Policy  string           `json:"policy"`
	Level   plan.PolicyLevel `json:"level"`
	Message string           `json:"message"`
	Release string           `json:"release,omitempty"`
	Object  string           `json:"object,omitempty"`
	Hook    string           `json:"hook,omitempty"`
	Allowed bool             `json:"allowed,omitempty"`
}

func jsonPolicyResults(p *plan.Plan, red *sensitive.Redactor) []jsonPolicyResult {
	if len(p.PolicyResults) == 0 {
		return nil
	}
	out := make([]jsonPolicyResult, len(p.PolicyResults))
	for i, r := range p.PolicyResults {
		out[i] = jsonPolicyResult{Policy: r.Policy, Level: r.Level, Message: red.Text(r.Message), Release: r.Release, Object: red.Text(r.Object), Hook: r.Hook, Allowed: r.Allowed}
	}
	return out
}

// markdownPolicies are the denials (and then the warnings) for the top of
// a pull-request comment; "" when there are none.
func markdownPolicies(p *plan.Plan) string {
	if len(p.PolicyResults) == 0 {
		return ""
	}
	var b strings.Builder
	item := func(r plan.PolicyResult) string {
		on := ""
		if r.Release != "" {
			on = fmt.Sprintf(" on `%s`", r.Release)
		}
		if r.Object != "" {
			on += fmt.Sprintf(" `%s`", r.Object)
			if r.Hook != "" {
				on += " (" + r.Hook + " hook)"
			}
		}
		allowed := ""
		if r.Allowed {
			allowed = " (allowed with --allow-policy)"
		}
		return fmt.Sprintf("- `%s`%s%s: %s\n", r.Policy, on, allowed, r.Message)
	}
	if denials := p.Denials(); len(denials) > 0 {
		fmt.Fprintf(&b, "**:no_entry: Denied by policy (%s): this plan cannot be applied**\n\n", strings.Join(p.DeniedPolicies(), ", "))
		for _, r := range denials {
			b.WriteString(item(r))
		}
		b.WriteString("\n")
	}
	var warnings []plan.PolicyResult
	for _, r := range p.PolicyResults {
		if r.Level == plan.PolicyWarn {
			warnings = append(warnings, r)
		}
	}
	if len(warnings) > 0 {
		b.WriteString("**Policy warnings**\n\n")
		for _, r := range warnings {
			b.WriteString(item(r))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// AtApply are the addresses of the releases whose policies apply
// evaluates, on what it renders then (plan.ReleaseChange.PoliciesAtApply).
func atApply(p *plan.Plan) []string {
	var out []string
	for _, r := range p.Releases {
		if r.PoliciesAtApply {
			out = append(out, r.Addr.String())
		}
	}
	return out
}

// markdownPoliciesAtApply says which releases are checked only at apply;
// "" when none.
func markdownPoliciesAtApply(p *plan.Plan) string {
	at := atApply(p)
	if len(at) == 0 {
		return ""
	}
	return fmt.Sprintf("**Checked by policies at apply** (rendered only then; a denial stops the release before anything of it is applied): `%s`\n\n", strings.Join(at, "`, `"))
}
