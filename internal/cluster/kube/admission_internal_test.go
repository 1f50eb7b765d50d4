package kube

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func admissionItems(t *testing.T, docs ...string) []unstructured.Unstructured {
	t.Helper()
	var out []unstructured.Unstructured
	for _, d := range docs {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, unstructured.Unstructured{Object: m})
	}
	return out
}

// What admission configurations match decides which releases a full plan
// must dry-run: convoy's own approval policies (convoy.dev only) must not
// make every release's dry run necessary, and anything that may match
// every group must.
func TestAdmissionGroups(t *testing.T) {
	convoys := `
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [convoy.dev]
      apiVersions: ["*"]
      operations: [UPDATE]
      resources: [stacks]`
	webhook := `
webhooks:
- name: a
  rules:
  - apiGroups: [""]
    resources: [pods]
  - apiGroups: [extensions]
    resources: [ingresses]`
	cases := []struct {
		name   string
		docs   []string
		groups []string
		all    bool
	}{
		{"none", nil, nil, false},
		{"convoy's approval policy", []string{convoys}, []string{"convoy.dev"}, false},
		{"a webhook on the core group and extensions (matching its successors too)", []string{convoys, webhook}, []string{"", "apps", "convoy.dev", "extensions", "networking.k8s.io", "policy"}, false},
		{"a wildcard group", []string{convoys, "spec:\n  matchConstraints:\n    resourceRules:\n    - apiGroups: [\"*\"]\n      resources: [\"*\"]"}, nil, true},
		{"a policy without resource rules", []string{"spec:\n  validations: []"}, nil, true},
		{"a webhook without rules", []string{"webhooks:\n- name: a"}, nil, true},
		{"a rule without groups", []string{"webhooks:\n- name: a\n  rules:\n  - resources: [pods]"}, nil, true},
	}
	for _, c := range cases {
		groups, all := admissionGroupsOf(admissionItems(t, c.docs...))
		if all != c.all || !slices.Equal(groups, c.groups) {
			t.Errorf("%s: %q all=%v, want %q all=%v", c.name, groups, all, c.groups, c.all)
		}
	}
}
