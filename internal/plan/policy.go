package plan

import (
	"fmt"
	"slices"
	"strings"
)

// PolicyLevel is what a policy's violation does to a plan.
type PolicyLevel string

// Policy levels.
const (
	// PolicyDeny: the plan is not applied (convoy plan exits 1).
	PolicyDeny PolicyLevel = "deny"
	// PolicyWarn: the violation is shown, nothing else.
	PolicyWarn PolicyLevel = "warn"
)

// PolicyResult is one violation of a policy: a condition that did not
// hold, or that failed to evaluate (a deny whose message is the error).
type PolicyResult struct {
	Policy  string
	Level   PolicyLevel
	Message string
	// Release is the address of the release it is about ("" for a rule
	// over the whole plan); Object the object (ObjectRef.String(), "" for
	// rules over releases and the plan).
	Release string `json:",omitempty"`
	Object  string `json:",omitempty"`
	// Hook: Object is a hook's, run for these events ("pre-install").
	Hook string `json:",omitempty"`
	// Allowed: a deny turned into a warning by an explicit override
	// (--allow-policy); Level is then PolicyWarn.
	Allowed bool `json:",omitempty"`
}

func (r PolicyResult) String() string {
	var where []string
	if r.Release != "" {
		where = append(where, r.Release)
	}
	if r.Object != "" {
		where = append(where, r.ObjectText())
	}
	s := fmt.Sprintf("%s %s", r.Level, r.Policy)
	if r.Allowed {
		s += " (allowed)"
	}
	if len(where) > 0 {
		s += " on " + strings.Join(where, ": ")
	}
	return s + ": " + r.Message
}

// ObjectText names the object of the result: its ref, and the hook events
// it runs for when it is a hook's ("batch/v1 Job ns/x (pre-install hook)").
func (r PolicyResult) ObjectText() string {
	if r.Hook == "" {
		return r.Object
	}
	return r.Object + " (" + r.Hook + " hook)"
}

// Denials are the results that stop the plan from being applied.
func (p *Plan) Denials() []PolicyResult {
	var out []PolicyResult
	for _, r := range p.PolicyResults {
		if r.Level == PolicyDeny {
			out = append(out, r)
		}
	}
	return out
}

// DeniedPolicies are the names of the policies that deny the plan, sorted.
func (p *Plan) DeniedPolicies() []string {
	var out []string
	for _, r := range p.Denials() {
		out = append(out, r.Policy)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Allow turns the denials of the named policies into warnings and records
// the names (AllowedPolicies): the explicit override of --allow-policy.
// Names that deny nothing are recorded too: the override was asked for.
func (p *Plan) Allow(names []string) {
	if len(names) == 0 {
		return
	}
	for i, r := range p.PolicyResults {
		if r.Level == PolicyDeny && slices.Contains(names, r.Policy) {
			p.PolicyResults[i].Level, p.PolicyResults[i].Allowed = PolicyWarn, true
		}
	}
	all := append(slices.Clone(p.AllowedPolicies), names...)
	slices.Sort(all)
	p.AllowedPolicies = slices.Compact(all)
}

// PolicyError is a plan that policies deny: apply refuses it whole, before
// changing anything.
type PolicyError struct {
	// Policies are the names of the denying policies; Denials the
	// violations.
	Policies []string
	Denials  []PolicyResult
}

func (e *PolicyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apply refuses a plan that policies deny: %s", strings.Join(e.Policies, ", "))
	for _, d := range e.Denials {
		b.WriteString("\n  " + d.String())
	}
	// --allow-policy is a repeatable flag of one name each (a comma is
	// part of the name): every denying policy is named, each with its own.
	fmt.Fprintf(&b, "\nto apply it anyway, plan again with --allow-policy %s (recorded in the history of the releases they deny)", strings.Join(e.Policies, " --allow-policy "))
	return b.String()
}

// PolicyDenied returns a *PolicyError when policies deny the plan, else nil.
func (p *Plan) PolicyDenied() error {
	if d := p.Denials(); len(d) > 0 {
		return &PolicyError{Policies: p.DeniedPolicies(), Denials: d}
	}
	return nil
}

// ReleasePolicyError is a release rendered only at apply (its values read
// outputs known then) that policies deny as apply rendered it: apply
// stops it before anything of it is applied.
type ReleasePolicyError struct {
	// Release is its address; Policies the denying policies' names;
	// Denials the violations.
	Release  string
	Policies []string
	Denials  []PolicyResult
}

func (e *ReleasePolicyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "policies deny %s as rendered at apply: %s", e.Release, strings.Join(e.Policies, ", "))
	for _, d := range e.Denials {
		b.WriteString("\n  " + d.String())
	}
	fmt.Fprintf(&b, "\nnothing of it was applied; to apply it anyway, apply again with --allow-policy %s (recorded in the release history)", strings.Join(e.Policies, " --allow-policy "))
	return b.String()
}

// PolicyNote is what the description of the release at addr's new record
// says of the plan's overrides: the allowed policies whose denials name
// the release, or the whole plan (a plan-scope policy). "" when none do:
// a release no allowed policy denied records no override.
func (p *Plan) PolicyNote(addr string) string {
	var names []string
	for _, r := range p.PolicyResults {
		if r.Allowed && (r.Release == addr || r.Release == "") {
			names = append(names, r.Policy)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return "policies allowed: " + strings.Join(slices.Compact(names), ", ")
}

// MaskValueTree masks a values tree for policies: sensitive strings, and
// every value under a key named like a secret (as MaskValues does for the
// values diff: a value the stack no longer marks sensitive is not known as
// such). Nil stays nil.
func MaskValueTree(v map[string]any, red interface{ Value(any) any }) map[string]any {
	if v == nil {
		return nil
	}
	out, _ := maskTree(v, red).(map[string]any)
	return out
}

func maskTree(v any, red interface{ Value(any) any }) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if secretLooking.MatchString(k) && e != nil {
				if _, isMap := e.(map[string]any); !isMap {
					out[k] = SensitivePlaceholder
					continue
				}
			}
			out[k] = maskTree(e, red)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = maskTree(e, red)
		}
		return out
	}
	return red.Value(v)
}
