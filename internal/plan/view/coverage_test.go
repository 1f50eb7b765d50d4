package view

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
)

// coveragePlan has a release rendered at apply that policies check then,
// and one whose pre-install hook Job a policy denies.
func coveragePlan() *plan.Plan {
	p := bigPlan(2, 2)
	p.Releases[0].KnownAfterApply, p.Releases[0].PoliciesAtApply = true, true
	p.Releases[0].Objects, p.Releases[0].Action = nil, plan.ActionInstall
	job := plan.ObjectRef{Group: "batch", Version: "v1", Kind: "Job", Namespace: "fleet", Name: "svc01-migrate"}
	p.Releases[1].Hooks = []plan.HookRun{
		{Name: "svc01-migrate", Kind: "Job", Path: "svc/templates/job.yaml", Events: []string{"pre-install"}, Ref: job},
		{Name: "svc01-migrate", Kind: "Job", Path: "svc/templates/job.yaml", Events: []string{"post-install"}, Ref: job},
	}
	p.PolicyResults = []plan.PolicyResult{{Policy: "no_jobs", Level: plan.PolicyDeny, Message: "no Jobs", Release: p.Releases[1].Addr.String(), Object: job.String(), Hook: "pre-install,post-install"}}
	return p
}

func TestPoliciesAtApplyAndHookObjects(t *testing.T) {
	p := coveragePlan()
	at, hooked := p.Releases[0].Addr.String(), p.Releases[1].Addr.String()
	var b bytes.Buffer
	if err := Text(&b, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"      policies: checked at apply, on what it renders then",
		"Policies are checked at apply on " + at + " (rendered only then).",
		"! policy no_jobs (deny) on batch/v1 Job fleet/svc01-migrate (pre-install,post-install hook): no Jobs",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}

	b.Reset()
	if err := Markdown(&b, p); err != nil {
		t.Fatal(err)
	}
	if want := "**Checked by policies at apply** (rendered only then; a denial stops the release before anything of it is applied): `" + at + "`"; !strings.Contains(b.String(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, b.String())
	}

	b.Reset()
	if err := JSON(&b, p); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Releases []struct {
			Address         string `json:"address"`
			PoliciesAtApply bool   `json:"policies_at_apply"`
			Objects         []struct{ Ref, Action, Hook, Template string }
		} `json:"releases"`
		PolicyResults []struct{ Object, Hook string } `json:"policy_results"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Releases {
		if r.PoliciesAtApply != (r.Address == at) {
			t.Errorf("%s: policies_at_apply %t", r.Address, r.PoliciesAtApply)
		}
		if r.Address != hooked {
			continue
		}
		var hooks []string
		for _, o := range r.Objects {
			if o.Hook != "" {
				hooks = append(hooks, strings.Join([]string{o.Ref, o.Action, o.Hook, o.Template}, " "))
			}
		}
		if want := "batch/v1 Job fleet/svc01-migrate create pre-install,post-install svc/templates/job.yaml"; strings.Join(hooks, "|") != want {
			t.Errorf("hook objects %q, want %q", hooks, want)
		}
	}
	if len(doc.PolicyResults) != 1 || doc.PolicyResults[0].Hook != "pre-install,post-install" {
		t.Errorf("policy_results %+v", doc.PolicyResults)
	}
}
