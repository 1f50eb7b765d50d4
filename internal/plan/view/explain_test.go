package view

import (
	"bytes"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/plantest"
)

func explainPlan() *plan.Plan {
	const secret = "s3cret-canary-value"
	replicas := plan.Origin{Input: "values replicas", Kind: plan.OriginValues, Source: &plan.Source{File: "stack.hcl", Line: 12, Column: 5},
		Via:      []plan.Origin{{Input: "var.replicas", Kind: plan.OriginVariable, Via: []plan.Origin{{Input: "prod.auto.vars.hcl", Kind: plan.OriginAutoVarFile, Source: &plan.Source{File: "prod.auto.vars.hcl", Line: 1}}}}},
		Overrode: []plan.Origin{{Input: "values replicas", Kind: plan.OriginChartDefault, Source: &plan.Source{File: "charts/app/values.yaml", Line: 3}}}}
	return &plan.Plan{FormatVersion: plan.FormatVersion, Stack: "s", Releases: []*plan.ReleaseChange{{
		Addr: plantest.Addr("api"), Name: "api", Namespace: "n", Action: plan.ActionUpgrade, Sensitive: []string{secret},
		Objects: []*plan.ObjectChange{
			{Ref: plantest.Ref("apps/v1 Deployment n/api"), Action: plan.ObjectUpdate, Diff: &plan.Diff{Changes: []*plan.Change{
				{Path: "spec.replicas", Op: plan.FieldChange, Before: 3, After: 5, Provenance: []plan.Origin{replicas}},
				{Path: "spec.template.spec.containers[name=app].env[name=PASSWORD].value", Op: plan.FieldChange, Before: "old", After: secret,
					Provenance: []plan.Origin{{Input: "values password", Kind: plan.OriginSetSensitive, Source: &plan.Source{File: "stack.hcl", Line: 20, Column: 3}}}},
				{Path: "metadata.annotations.revision", Op: plan.FieldChange, Before: "1", After: "2"},
			}}},
			{Ref: plantest.Ref("v1 Service n/api"), Action: plan.ObjectNoOp},
		},
	}}}
}

func TestExplainPrintsTheWholeChain(t *testing.T) {
	var b bytes.Buffer
	if err := Explain(&b, explainPlan(), ExplainQuery{Release: "api", Object: "deployment/api", Path: "spec.replicas"}); err != nil {
		t.Fatal(err)
	}
	want := `release.api (upgrade) namespace n
  ~ apps/v1 Deployment n/api
    ~ spec.replicas: 3 → 5
      ← values replicas [values] at stack.hcl:12:5
          reads var.replicas [variable]
              reads prod.auto.vars.hcl [auto_var_file] at prod.auto.vars.hcl:1
          overrode values replicas [chart_default] at charts/app/values.yaml:3
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestExplainEveryFieldOfAnObject(t *testing.T) {
	var b bytes.Buffer
	if err := Explain(&b, explainPlan(), ExplainQuery{Release: "release.api", Object: "apps/v1 Deployment n/api"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{
		"← values password [set_sensitive] at stack.hcl:20:3",
		"~ metadata.annotations.revision: \"1\" → \"2\"\n      ← no changed input explains it",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "s3cret-canary-value") {
		t.Fatalf("leaks the sensitive value:\n%s", out)
	}
	b.Reset()
	if err := Explain(&b, explainPlan(), ExplainQuery{Release: "api", Object: "Service/api", Path: "spec.type"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "v1 Service n/api: spec.type does not change in this plan") {
		t.Errorf("unchanged: %s", b.String())
	}
	if err := Explain(&b, explainPlan(), ExplainQuery{Release: "api", Object: "ConfigMap/api"}); err == nil || err.Error() != "release.api has no object ConfigMap/api in this plan" {
		t.Errorf("unknown object: %v", err)
	}
	if err := Explain(&b, explainPlan(), ExplainQuery{Release: "web"}); err == nil {
		t.Error("unknown release: no error")
	}
}
