package plan_test

import (
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
)

// Every denying policy is named in the hint, each with its own
// --allow-policy (a repeatable flag of one name each).
func TestPolicyErrorNamesEveryDenyingPolicy(t *testing.T) {
	p := &plan.Plan{PolicyResults: []plan.PolicyResult{
		{Policy: "no_latest", Level: plan.PolicyDeny, Release: "release.a", Message: "m"},
		{Policy: "limits", Level: plan.PolicyDeny, Release: "release.a", Message: "m"},
		{Policy: "no_privileged", Level: plan.PolicyDeny, Release: "release.b", Message: "m"},
		{Policy: "team_label", Level: plan.PolicyDeny, Release: "release.b", Message: "m"},
	}}
	err := p.PolicyDenied()
	if err == nil {
		t.Fatal("no error for a denied plan")
	}
	want := "--allow-policy limits --allow-policy no_latest --allow-policy no_privileged --allow-policy team_label"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("the hint lacks %q:\n%s", want, err)
	}
}

// Only the releases an allowed policy denied record the override.
func TestPolicyNoteOnlyForAllowedViolations(t *testing.T) {
	p := &plan.Plan{PolicyResults: []plan.PolicyResult{
		{Policy: "no_latest", Level: plan.PolicyDeny, Release: "release.a", Message: "m"},
		{Policy: "limits", Level: plan.PolicyWarn, Release: "release.b", Message: "m"},
	}}
	p.Allow([]string{"no_latest", "limits"})
	if got := p.PolicyNote("release.a"); got != "policies allowed: no_latest" {
		t.Errorf("release.a's note is %q, want the policy that denied it", got)
	}
	for _, addr := range []string{"release.b", "release.c"} {
		if got := p.PolicyNote(addr); got != "" {
			t.Errorf("%s's note is %q, want none: no allowed policy denied it", addr, got)
		}
	}
	p.PolicyResults = append(p.PolicyResults, plan.PolicyResult{Policy: "few_uninstalls", Level: plan.PolicyDeny, Message: "m"})
	p.Allow([]string{"few_uninstalls"})
	if got := p.PolicyNote("release.c"); got != "policies allowed: few_uninstalls" {
		t.Errorf("release.c's note is %q, want the plan-scope override", got)
	}
}
