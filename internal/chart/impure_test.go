package chart

import "testing"

// TestRenderImpure: a rendering is impure when a template whose output is
// a resource or a non-test hook called lookup, the clock or a random
// function, through a helper too; a helper that is defined but not called
// (bitnami's common.secrets.passwords.manage in most charts) and a test
// hook's randomness do not count.
func TestRenderImpure(t *testing.T) {
	cm := func(data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: " + data + "\n"
	}
	hook := func(event, data string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\n  annotations:\n    helm.sh/hook: " + event + "\nspec:\n  containers: [{name: t, image: x, args: [" + data + "]}]\n"
	}
	const helpers = `{{- define "c.password" -}}{{ randAlphaNum 16 }}{{- end -}}`
	for _, tc := range []struct {
		name      string
		templates map[string]string
		want      bool
	}{
		{"plain", map[string]string{"cm.yaml": cm(`{{ .Values.x | default "a" | quote }}`)}, false},
		{"lookup", map[string]string{"cm.yaml": cm(`{{ (lookup "v1" "ConfigMap" "ns" "x") | len | quote }}`)}, true},
		{"random", map[string]string{"cm.yaml": cm(`{{ randAlphaNum 8 | quote }}`)}, true},
		{"clock", map[string]string{"cm.yaml": cm(`{{ now | date "2006" | quote }}`)}, true},
		{"uuid", map[string]string{"cm.yaml": cm(`{{ uuidv4 | quote }}`)}, true},
		{"random through a helper", map[string]string{"_helpers.tpl": helpers, "cm.yaml": cm(`{{ include "c.password" . | quote }}`)}, true},
		{"helper defined, not called", map[string]string{"_helpers.tpl": helpers, "cm.yaml": cm(`"b"`)}, false},
		{"random in a test hook", map[string]string{"tests/t.yaml": hook("test", `{{ randAlphaNum 5 | quote }}`), "cm.yaml": cm(`"b"`)}, false},
		{"random in an install hook", map[string]string{"job.yaml": hook("pre-install", `{{ randAlphaNum 5 | quote }}`)}, true},
		{"random whose output is dropped", map[string]string{"cm.yaml": cm(`"b"`), "other.yaml": `{{- $x := randAlphaNum 5 -}}`}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Render(budgetChart(t, tc.templates), RenderOptions{ReleaseName: "r", Namespace: "ns"})
			if err != nil {
				t.Fatal(err)
			}
			if r.Impure != tc.want {
				t.Errorf("Impure = %v, want %v", r.Impure, tc.want)
			}
		})
	}
}
