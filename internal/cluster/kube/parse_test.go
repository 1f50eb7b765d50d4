package kube_test

import (
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
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

// A release named "n" in an unquoted {{ .Release.Name }} renders
// `name: n`, which YAML 1.1 reads as false. helm v4.3.1 and v3 refuse it
// with `json: cannot unmarshal bool into Go struct field
// ObjectMeta.metadata.name of type string`; convoy refused it saying no
// name was given (issue 54, item 6). It now says what the field holds and
// why, naming the template.
func TestNonStringMetadataSaysWhy(t *testing.T) {
	tests := []struct{ doc, want string }{
		{"# Source: cm/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\n",
			`manifest document 1 (cm/templates/cm.yaml): v1 ConfigMap: metadata.name is false (a boolean), not a string: YAML reads an unquoted y, n, yes, no, on, off, true, false or number so (a release named "n" in {{ .Release.Name }}), and helm refuses it too; quote it in the template ({{ .Release.Name | quote }}) or choose another name`},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  labels:\n    app.kubernetes.io/instance: yes\n",
			`manifest document 1: v1 ConfigMap: metadata.labels["app.kubernetes.io/instance"] is true (a boolean), not a string`},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  namespace: 123\n",
			`manifest document 1: v1 ConfigMap: metadata.namespace is 123 (a number), not a string`},
	}
	for _, tt := range tests {
		_, err := kube.ParseUnmapped(tt.doc)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("kube.ParseUnmapped(%q) = %v\nwant %s…", tt.doc, err, tt.want)
		}
	}
	// Quoted, or null, they are fine.
	if _, err := kube.ParseUnmapped("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"n\"\n  labels:\n    a: \"yes\"\n    b: ~\n"); err != nil {
		t.Error(err)
	}
}
