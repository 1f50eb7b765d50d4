package view

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
)

// policyPlan is an upgrade with a denial on an object, a warning and a
// plan-level denial; a sensitive value is quoted in a message.
func policyPlan() *plan.Plan {
	p := bigPlan(2, 1)
	p.Releases[1].Sensitive = []string{"s3cr3t-value"}
	p.PolicyResults = []plan.PolicyResult{
		{Policy: "keep_config", Level: plan.PolicyDeny, Message: "ConfigMaps are not deleted here", Release: "release.svc01", Object: "v1 ConfigMap fleet/svc01"},
		{Policy: "few_replicas", Level: plan.PolicyWarn, Message: "token s3cr3t-value leaked", Release: "release.svc01"},
		{Policy: "freeze", Level: plan.PolicyDeny, Message: "no changes on Fridays"},
	}
	return p
}

func TestPolicyText(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, policyPlan()); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"      ! policy keep_config (deny) on v1 ConfigMap fleet/svc01: ConfigMaps are not deleted here\n",
		"      ~ policy few_replicas (warn): token (sensitive) leaked\n",
		"Policies:\n\n  ! policy freeze (deny): no changes on Fridays\n",
		"Policies: 2 denials, 1 warning. Denied by freeze, keep_config: apply refuses this plan.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("text lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "s3cr3t") {
		t.Error("the text plan leaks a sensitive value")
	}
	// Under its release: after the release's header, before the next.
	if i, j := strings.Index(got, "release.svc01 (upgrade)"), strings.Index(got, "policy keep_config"); i < 0 || j < i {
		t.Errorf("the denial is not under its release:\n%s", got)
	}
}

func TestPolicyJSON(t *testing.T) {
	p := policyPlan()
	p.Allow([]string{"freeze"})
	var b bytes.Buffer
	if err := JSON(&b, p); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		FormatVersion   int                `json:"format_version"`
		PolicyResults   []jsonPolicyResult `json:"policy_results"`
		AllowedPolicies []string           `json:"allowed_policies"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	want := []jsonPolicyResult{
		{Policy: "keep_config", Level: "deny", Message: "ConfigMaps are not deleted here", Release: "release.svc01", Object: "v1 ConfigMap fleet/svc01"},
		{Policy: "few_replicas", Level: "warn", Message: "token (sensitive) leaked", Release: "release.svc01"},
		{Policy: "freeze", Level: "warn", Message: "no changes on Fridays", Allowed: true},
	}
	if doc.FormatVersion != 1 || len(doc.PolicyResults) != len(want) || strings.Join(doc.AllowedPolicies, ",") != "freeze" {
		t.Fatalf("document %+v", doc)
	}
	for i := range want {
		if doc.PolicyResults[i] != want[i] {
			t.Errorf("policy_results[%d] = %+v, want %+v", i, doc.PolicyResults[i], want[i])
		}
	}
}

func TestPolicyMarkdownDenialsFirst(t *testing.T) {
	got := markdown(policyPlan(), MarkdownLimit)
	i := strings.Index(got, "Denied by policy (freeze, keep_config)")
	j := strings.Index(got, "| Release |")
	if i < 0 || j < 0 || i > j {
		t.Fatalf("denials are not at the top:\n%s", got)
	}
	if !strings.Contains(got, "- `keep_config` on `release.svc01` `v1 ConfigMap fleet/svc01`: ConfigMaps are not deleted here") {
		t.Errorf("markdown lacks the denial:\n%s", got)
	}
	if strings.Contains(got, "s3cr3t") {
		t.Error("the markdown leaks a sensitive value")
	}
}
