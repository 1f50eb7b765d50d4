package planner

import (
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestReplacedClaimsWarns: a rename that replaces a StatefulSet with
// volume claims says its data stays behind; a kept one, or one without
// claims, says nothing.
func TestReplacedClaimsWarns(t *testing.T) {
	sts := func(name string, claims bool) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": name, "namespace": "db"}, "spec": map[string]any{}}}
		if claims {
			o.Object["spec"] = map[string]any{"volumeClaimTemplates": []any{map[string]any{"metadata": map[string]any{"name": "data"}}}}
		}
		return o
	}
	ref := func(name string) plan.ObjectRef {
		return plan.ObjectRef{Group: "apps", Version: "v1", Kind: "StatefulSet", Namespace: "db", Name: name}
	}
	next := ref("pg2-db")
	objs := []*unstructured.Unstructured{sts("pg-db", true), sts("kept", true), sts("pg-cache", false)}
	renamed := []plan.RenamedObject{{Ref: ref("pg-db"), ReplacedBy: &next}, {Ref: ref("kept"), Kept: true}, {Ref: ref("pg-cache")}}
	got := replacedClaims(objs, renamed)
	if len(got) != 1 || !strings.Contains(got[0], "apps/v1 StatefulSet db/pg-db is replaced by apps/v1 StatefulSet db/pg2-db: its PersistentVolumeClaims stay") {
		t.Fatalf("replacedClaims = %q", got)
	}
}
