package plan

import "testing"

func TestProvenanceTextNamesWhatUsersEdit(t *testing.T) {
	viaVar := func(src Origin) Origin {
		return Origin{Input: "values replicaCount", Kind: OriginValues, Source: &Source{File: "stack.hcl", Line: 12, Column: 5},
			Via: []Origin{{Input: "var.replicas", Kind: OriginVariable, Via: []Origin{src}}}}
	}
	for _, tc := range []struct {
		change *Change
		want   string
	}{
		{&Change{Provenance: []Origin{viaVar(Origin{Input: "prod.auto.vars.hcl", Kind: OriginAutoVarFile, Source: &Source{File: "prod.auto.vars.hcl", Line: 1}})}}, "← var.replicas (prod.auto.vars.hcl:1)"},
		{&Change{Provenance: []Origin{viaVar(Origin{Input: "CONVOY_VAR_replicas", Kind: OriginEnv, Source: &Source{Env: "CONVOY_VAR_replicas"}})}}, "← var.replicas (CONVOY_VAR_replicas)"},
		// A literal in HCL is its own edit; a local reads on to a variable.
		{&Change{Provenance: []Origin{{Input: "values image.tag", Kind: OriginValues, Source: &Source{File: "stack.hcl", Line: 3, Column: 9}}}}, "← values image.tag (stack.hcl:3:9)"},
		{&Change{Provenance: []Origin{{Input: "values tag", Kind: OriginValues, Via: []Origin{{Input: "local.tag", Kind: OriginLocal, Via: []Origin{{Input: "var.tag", Kind: OriginVariable, Via: []Origin{{Input: "--var", Kind: OriginFlag, Source: &Source{Flag: "--var"}}}}}}}}}}, "← var.tag (--var)"},
		{&Change{Provenance: []Origin{{Input: "chart 1.4.0 → 1.5.0", Kind: OriginChart}, {Input: "drift (kubectl-edit)", Kind: OriginDrift}}}, "← chart 1.4.0 → 1.5.0, drift (kubectl-edit)"},
		{&Change{Provenance: []Origin{{Input: "values a", Kind: OriginValues}, {Input: "values b", Kind: OriginValues}}, ProvenanceJoint: true}, "← together: values a + values b"},
		{&Change{}, ""},
	} {
		if got := ProvenanceText(tc.change); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
