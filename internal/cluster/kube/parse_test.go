package kube_test

import (
	"strings"
	"testing"
)

func TestParseScope(t *testing.T) {
	c := newClient(t)
	manifest := `
# Source: app/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: defaulted
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: explicit
  namespace: other
---
# Source: app/templates/empty.yaml
# only a comment: skipped
---

---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: reader
  namespace: ignored
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Secret
  metadata: {name: listed}
- apiVersion: v1
  kind: Namespace
  metadata: {name: listed-ns}
`
	objs := parse(t, c, "dflt", manifest)
	want := []string{
		"v1 ConfigMap dflt/defaulted",
		"v1 ConfigMap other/explicit",
		"rbac.authorization.k8s.io/v1 ClusterRole reader",
		"rbac.authorization.k8s.io/v1 ClusterRoleBinding reader",
		"v1 Secret dflt/listed",
		"v1 Namespace listed-ns",
	}
	var got []string
	for _, r := range refs(objs) {
		got = append(got, r.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("parsed objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ns := objs[3].GetNamespace(); ns != "" {
		t.Errorf("cluster-scoped object kept namespace %q", ns)
	}
}

func TestParseErrors(t *testing.T) {
	c := newClient(t)
	tests := []struct {
		name     string
		manifest string
		want     string
	}{
		{
			name:     "yaml syntax",
			manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n---\n# Source: app/templates/bad.yaml\nkind: [unclosed\n",
			want:     "manifest document 2 (app/templates/bad.yaml): ",
		},
		{
			name:     "no kind",
			manifest: "# Source: app/templates/nokind.yaml\napiVersion: v1\nmetadata:\n  name: x\n",
			want:     "manifest document 1 (app/templates/nokind.yaml): kind is missing or not a string",
		},
		{
			name:     "not a mapping",
			manifest: "- a\n- b\n",
			want:     "manifest document 1: not a Kubernetes object (expected a mapping)",
		},
		{
			name:     "no name",
			manifest: "# Source: app/templates/gen.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: x-\n",
			want:     "manifest document 1 (app/templates/gen.yaml): v1 ConfigMap: metadata.name is required",
		},
		{
			name:     "unknown kind",
			manifest: "# Source: app/templates/w.yaml\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
			want:     "manifest document 1 (app/templates/w.yaml): example.com/v1 Widget w: no matches for kind \"Widget\"",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Parse(tt.manifest, "ns")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
			t.Log(err)
		})
	}
}
