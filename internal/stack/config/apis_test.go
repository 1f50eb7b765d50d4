package config

import (
	"strings"
	"testing"
)

const pdbMap = `mappings:
  - deprecatedAPI: "apiVersion: example.com/v1beta1\nkind: Widget\n"
    newAPI: "apiVersion: example.com/v1\nkind: Widget\n"
    removedInVersion: "v1.30"
`

func TestStackAPISettings(t *testing.T) {
	st := mustEvaluate(t, map[string]string{
		"stack.hcl":     "stack \"s\" {\n  api_map      = \"apis/map.yaml\"\n  kube_version = \"v1.37\"\n}\n",
		"apis/map.yaml": pdbMap,
	}, EvalOptions{})
	e, ok := st.APIMap.Lookup("example.com/v1beta1", "Widget")
	if !ok || e.Replacement() != "example.com/v1" || e.Source != "apis/map.yaml" {
		t.Errorf("api_map: %+v %v", e, ok)
	}
	if st.KubeVersion.String() != "1.37" {
		t.Errorf("kube_version = %v", st.KubeVersion)
	}
	if st := mustEvaluate(t, map[string]string{"stack.hcl": "stack \"s\" {}\n"}, EvalOptions{}); st.APIMap != nil || !st.KubeVersion.IsZero() {
		t.Errorf("unset: %+v %v", st.APIMap, st.KubeVersion)
	}
}

func TestStackAPISettingsErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		want  string
	}{
		"missing file": {map[string]string{"stack.hcl": "stack \"s\" {\n  api_map = \"nope.yaml\"\n}\n"}, "stack.hcl:2:13: error: Invalid api_map: "},
		"bad file": {map[string]string{"stack.hcl": "stack \"s\" {\n  api_map = \"m.yaml\"\n}\n", "m.yaml": "mappings:\n  - deprecatedAPI: \"kind: X\\n\"\n"},
			"stack.hcl:2:13: error: Invalid api_map: m.yaml: mappings[0]: deprecatedAPI"},
		"outside the stack": {map[string]string{"stack.hcl": "stack \"s\" {\n  api_map = \"../m.yaml\"\n}\n"}, "stack.hcl:2:13: error: Invalid api_map: "},
		"bad version":       {map[string]string{"stack.hcl": "stack \"s\" {\n  kube_version = \"latest\"\n}\n"}, "stack.hcl:2:18: error: Invalid kube_version: \"latest\" is not a Kubernetes version"},
	} {
		t.Run(name, func(t *testing.T) {
			_, diags := evaluateSources(t, tc.files, EvalOptions{})
			if !strings.Contains(diags, tc.want) {
				t.Errorf("diagnostics %q, want %q", diags, tc.want)
			}
		})
	}
}
