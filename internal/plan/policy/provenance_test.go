package policy_test

import (
	"context"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
)

// replicasFrom is testPlan with the Deployment's replicas change
// attributed to var.replicas, whose value was given in src.
func replicasFrom(src plan.Origin) *plan.Plan {
	p := testPlan()
	c := p.Releases[0].Objects[0].Diff.Changes[0]
	c.Provenance = []plan.Origin{{
		Input: "values replicaCount", Kind: plan.OriginValues, Source: &plan.Source{File: "stack.hcl", Line: 12, Column: 5},
		Via: []plan.Origin{{Input: "var.replicas", Kind: plan.OriginVariable, Via: []plan.Origin{src}}},
	}}
	return p
}

// The rule of issue 41, in one line: production replicas may only be set
// in production.vars.hcl.
func TestPolicyReadsProvenance(t *testing.T) {
	set := mustCompile(t, `
policy "replicas_in_production_vars" {
  condition = "plan.environment != 'prod' || object.changes.all(c, c.path != 'spec.replicas' || c.provenance.all(p, p.edits.all(e, e.source.file == 'production.vars.hcl')))"
  message   = "production replicas are set only in production.vars.hcl"
}
`)
	for _, tc := range []struct {
		name   string
		src    plan.Origin
		denied bool
	}{
		{"production.vars.hcl", plan.Origin{Input: "production.vars.hcl", Kind: plan.OriginVarFile, Source: &plan.Source{File: "production.vars.hcl", Line: 1}}, false},
		{"--var", plan.Origin{Input: "--var", Kind: plan.OriginFlag, Source: &plan.Source{Flag: "--var"}}, true},
		{"CONVOY_VAR_replicas", plan.Origin{Input: "CONVOY_VAR_replicas", Kind: plan.OriginEnv, Source: &plan.Source{Env: "CONVOY_VAR_replicas"}}, true},
		{"another file", plan.Origin{Input: "dev.auto.vars.hcl", Kind: plan.OriginAutoVarFile, Source: &plan.Source{File: "dev.auto.vars.hcl", Line: 1}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := set.Evaluate(context.Background(), replicasFrom(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res) > 0; got != tc.denied {
				t.Fatalf("denied = %v, want %v: %+v", got, tc.denied, res)
			}
			if tc.denied && (res[0].Level != plan.PolicyDeny || res[0].Object != "apps/v1 Deployment apps/web") {
				t.Fatalf("result: %+v", res[0])
			}
		})
	}
	// A change no input explains names none: all() holds.
	res, err := set.Evaluate(context.Background(), testPlan())
	if err != nil || len(res) != 0 {
		t.Fatalf("unattributed: %v %+v", err, res)
	}
}

// Every field of an origin is there to read, and a missing source reads
// as empty.
func TestPolicyProvenanceFields(t *testing.T) {
	set := mustCompile(t, `
policy "fields" {
  condition = "object.changes.all(c, c.provenance.all(p, p.input == 'values replicaCount' && p.kind == 'values' && p.source.line == 12 && p.source.column == 5 && p.via[0].input == 'var.replicas' && size(p.overrode) == 0 && p.edits[0].input == 'var.replicas' && p.edits[0].kind == 'flag' && p.edits[0].source.flag == '--var' && p.edits[0].source.file == '') && !c.provenance_joint)"
}
`)
	res, err := set.Evaluate(context.Background(), replicasFrom(plan.Origin{Input: "--var", Kind: plan.OriginFlag, Source: &plan.Source{Flag: "--var"}}))
	if err != nil || len(res) != 0 {
		t.Fatalf("%v %+v", err, res)
	}
}
