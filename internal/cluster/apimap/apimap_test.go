package apimap

import (
	"strings"
	"testing"
)

func TestKubernetesTable(t *testing.T) {
	m := Kubernetes()
	tests := []struct {
		api       API
		to        string
		removedIn string
	}{
		{API{"policy/v1beta1", "PodDisruptionBudget"}, "policy/v1", "1.25"},
		{API{"extensions/v1beta1", "Ingress"}, "networking.k8s.io/v1", "1.22"},
		{API{"networking.k8s.io/v1beta1", "IngressClass"}, "networking.k8s.io/v1", "1.22"},
		{API{"autoscaling/v2beta1", "HorizontalPodAutoscaler"}, "autoscaling/v2", "1.25"},
		{API{"autoscaling/v2beta2", "HorizontalPodAutoscaler"}, "autoscaling/v2", "1.26"},
		{API{"batch/v1beta1", "CronJob"}, "batch/v1", "1.25"},
		{API{"flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema"}, "flowcontrol.apiserver.k8s.io/v1", "1.32"},
		{API{"storage.k8s.io/v1beta1", "CSIStorageCapacity"}, "storage.k8s.io/v1", "1.27"},
		{API{"policy/v1beta1", "PodSecurityPolicy"}, "", "1.25"},
	}
	for _, tt := range tests {
		e, ok := m.Lookup(tt.api.APIVersion, tt.api.Kind)
		if !ok {
			t.Errorf("%s: not in the table", tt.api)
			continue
		}
		if e.Replacement() != tt.to || e.RemovedIn.String() != tt.removedIn {
			t.Errorf("%s: replaced by %q, removed in %s; want %q, %s", tt.api, e.Replacement(), e.RemovedIn, tt.to, tt.removedIn)
		}
	}
	if _, ok := m.Lookup("apps/v1", "Deployment"); ok {
		t.Error("apps/v1 Deployment is in the table")
	}
}

// The built-in table says how far it knows Kubernetes' removals; a user's
// map file says nothing of it and may not (knownThrough is the table's).
func TestKnownThrough(t *testing.T) {
	m := Kubernetes()
	known := m.KnownThrough()
	if known.Less(Version{1, 36}) {
		t.Fatalf("the table knows removals up to %s; want 1.36 or later", known)
	}
	for _, e := range m.Entries() {
		if known.Less(e.RemovedIn) {
			t.Errorf("%s: removed in %s, after knownThrough %s", e.From, e.RemovedIn, known)
		}
	}
	user, err := Parse([]byte("mappings:\n  - deprecatedAPI: \"apiVersion: example.com/v1beta1\\nkind: Widget\\n\"\n    removedInVersion: v1.40\n"), "user.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !user.KnownThrough().IsZero() {
		t.Errorf("a user's map knows removals up to %s", user.KnownThrough())
	}
	if got := m.With(user).KnownThrough(); got != known {
		t.Errorf("the table with a user's map knows removals up to %s, want %s", got, known)
	}
	if _, err := Parse([]byte("knownThrough: v1.50\nmappings: []\n"), "user.yaml"); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("a user's map file with knownThrough: %v", err)
	}
	if _, err := parseBuiltIn([]byte("knownThrough: v1.30\nmappings:\n  - deprecatedAPI: \"apiVersion: a/v1\\nkind: A\\n\"\n    removedInVersion: v1.31\n")); err == nil || !strings.Contains(err.Error(), "after knownThrough") {
		t.Errorf("a table with a removal past knownThrough: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := map[string]string{
		"mappings:\n  - deprecatedAPI: \"apiVersion: a/v1\\nkind: A\\n\"\n    newAPI: \"apiVersion: a/v2\\nkind: B\\n\"\n    removedInVersion: v1.30\n": "a successor is the same kind",
		"mappings:\n  - deprecatedAPI: \"kind: A\\n\"\n    removedInVersion: v1.30\n":                                                                   "deprecatedAPI",
		"mappings:\n  - deprecatedAPI: \"apiVersion: a/v1\\nkind: A\\n\"\n":                                                                             "neither deprecatedInVersion nor removedInVersion",
		"mappings:\n  - deprecatedAPI: \"apiVersion: a/v1\\nkind: A\\n\"\n    removedInVersion: soon\n":                                                 "removedInVersion",
		"mapping: []\n": "unknown field",
	}
	for in, want := range tests {
		_, err := Parse([]byte(in), "my.yaml")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "my.yaml: ") {
			t.Errorf("Parse(%q) = %v, want an error naming my.yaml and %q", in, err, want)
		}
	}
}

func TestWithOverrides(t *testing.T) {
	user, err := Parse([]byte("mappings:\n  - deprecatedAPI: \"apiVersion: policy/v1beta1\\nkind: PodSecurityPolicy\\n\"\n    newAPI: \"apiVersion: example.com/v1\\nkind: PodSecurityPolicy\\n\"\n    removedInVersion: v1.25\n"+
		"  - deprecatedAPI: \"apiVersion: v1\\nkind: ConfigMap\\n\"\n    deprecatedInVersion: v1.36\n    removedInVersion: v1.37\n"), "user.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := Kubernetes().With(user)
	e, _ := m.Lookup("policy/v1beta1", "PodSecurityPolicy")
	if e.Replacement() != "example.com/v1" || e.Source != "user.yaml" {
		t.Errorf("override: %+v", e)
	}
	if _, ok := Kubernetes().Lookup("v1", "ConfigMap"); ok {
		t.Error("With changed the built-in table")
	}
	cm := API{"v1", "ConfigMap"}
	if _, ok := m.Deprecated(cm, Version{1, 35}); ok {
		t.Error("v1 ConfigMap deprecated by 1.35")
	}
	if e, ok := m.Deprecated(cm, Version{1, 36}); !ok || e.RemovedBy(Version{1, 36}) {
		t.Errorf("1.36: %+v %v, want deprecated, not removed", e, ok)
	}
	if e, ok := m.Deprecated(cm, Version{1, 37}); !ok || !e.RemovedBy(Version{1, 37}) {
		t.Errorf("1.37: %+v %v, want removed", e, ok)
	}
}

func TestSuccessorFollowsRemovedSuccessors(t *testing.T) {
	m, err := Parse([]byte("mappings:\n"+
		"  - deprecatedAPI: \"apiVersion: x/v1alpha1\\nkind: X\\n\"\n    newAPI: \"apiVersion: x/v1beta1\\nkind: X\\n\"\n    removedInVersion: v1.20\n"+
		"  - deprecatedAPI: \"apiVersion: x/v1beta1\\nkind: X\\n\"\n    newAPI: \"apiVersion: x/v1\\nkind: X\\n\"\n    removedInVersion: v1.30\n"), "chain")
	if err != nil {
		t.Fatal(err)
	}
	served := func(a API) bool { return a.APIVersion == "x/v1" }
	e, to, ok := m.Successor(API{"x/v1alpha1", "X"}, served)
	if !ok || to == nil || to.APIVersion != "x/v1" || e.RemovedIn.String() != "1.20" {
		t.Errorf("Successor = %+v %v %v", e, to, ok)
	}
	if _, to, ok := m.Successor(API{"x/v1alpha1", "X"}, func(API) bool { return false }); !ok || to != nil {
		t.Errorf("nothing served: %v %v", to, ok)
	}
	if _, _, ok := m.Successor(API{"y/v1", "Y"}, served); ok {
		t.Error("unknown API has an entry")
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]string{"v1.25": "1.25", "1.37": "1.37", "v1.36.3": "1.36", "v1.30.2-gke.1": "1.30", "1.28+": "1.28"} {
		v, err := ParseVersion(in)
		if err != nil || v.String() != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %s", in, v, err, want)
		}
	}
	for _, in := range []string{"", "1", "latest", "v0.5"} {
		if _, err := ParseVersion(in); err == nil {
			t.Errorf("ParseVersion(%q) accepted", in)
		}
	}
}

func TestMigrate(t *testing.T) {
	manifest := `---
# Source: app/templates/pdb.yaml
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 1
---
# Source: app/templates/psp.yaml
apiVersion: policy/v1beta1
kind: PodSecurityPolicy
metadata:
  name: restricted
spec: {}
---
# Source: app/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
data:
  note: "apiVersion: policy/v1beta1"
`
	served := func(a API) bool { return !strings.HasSuffix(a.APIVersion, "v1beta1") }
	got, changes := Kubernetes().Migrate(manifest, served)
	want := `---
# Source: app/templates/pdb.yaml
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 1
---
# Source: app/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
data:
  note: "apiVersion: policy/v1beta1"
`
	if got != want {
		t.Errorf("Migrate =\n%s\nwant\n%s", got, want)
	}
	if len(changes) != 2 || changes[0].Name != "web" || changes[0].To == nil || changes[0].To.APIVersion != "policy/v1" || changes[0].Source != "app/templates/pdb.yaml" ||
		changes[1].Name != "restricted" || changes[1].To != nil {
		t.Errorf("changes = %+v", changes)
	}
	if again, changes := Kubernetes().Migrate(got, served); again != got || len(changes) != 0 {
		t.Errorf("a migrated manifest changes again: %v", changes)
	}
}
