package planner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The claims of StatefulSets, as the plan reads them through its view
// (ClusterView.Claims, ClusterView.Get), against planner/plannertest.

// dbStack is one release "db" of testdata/charts/db (a StatefulSet with a
// claim template "data") in namespace shop.
func dbStack(t *testing.T, values, extra string) string {
	return fmt.Sprintf(`
stack "shop" {
  default_namespace = "shop"
}
release "db" {
  chart  = %q
  values = [%s]
%s}
`, chartPath(t, "testdata", "charts", "db"), values, extra)
}

// putClaim makes the claim the StatefulSet db's pod 0 made live.
func putClaim(t *testing.T, m *mem, storage string) {
	t.Helper()
	pvc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": map[string]any{"name": "data-db-0", "namespace": "shop"},
		"spec": map[string]any{"storageClassName": "fast", "accessModes": []any{"ReadWriteOnce"},
			"resources": map[string]any{"requests": map[string]any{"storage": storage}}},
	}}
	if err := m.v.Put(context.Background(), pvc); err != nil {
		t.Fatal(err)
	}
}

func TestMemExpandClaimsNeedsAClassThatAllowsExpansion(t *testing.T) {
	for _, tt := range []struct {
		name  string
		class map[string]any // nil: no StorageClass fast
		err   string
	}{
		{"allowed", map[string]any{"allowVolumeExpansion": true}, ""},
		{"not allowed", map[string]any{}, "its StorageClass fast does not allow volume expansion"},
		{"no class", nil, "its StorageClass fast does not exist"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newMem(t, dbStack(t, `{ storage = "1Gi" }`, ""))
			m.deploy()
			putClaim(t, m, "1Gi")
			if tt.class != nil {
				sc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": map[string]any{"name": "fast"}, "provisioner": "example.com/disk"}}
				for k, v := range tt.class {
					sc.Object[k] = v
				}
				if err := m.v.Put(context.Background(), sc); err != nil {
					t.Fatal(err)
				}
			}
			m.rewrite(dbStack(t, `{ storage = "2Gi" }`, "  expand_claims = true\n"))
			p, err := m.plan(nil, planner.ObserveMetadata)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "v1 PersistentVolumeClaim shop/data-db-0") {
					t.Fatalf("err %v, want the claim named and %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rc := change(t, p, "release.db")
			if got := fmt.Sprint(rc.ClaimExpansions); len(rc.ClaimExpansions) != 1 || rc.ClaimExpansions[0].From != "1Gi" || rc.ClaimExpansions[0].To != "2Gi" || rc.ClaimExpansions[0].Ref.Name != "data-db-0" {
				t.Errorf("claim expansions %s, want data-db-0 from 1Gi to 2Gi", got)
			}
		})
	}
}

func TestMemUninstallNamesTheClaimsItsStatefulSetDeletes(t *testing.T) {
	m := newMem(t, dbStack(t, `{ whenDeleted = "Delete" }`, "")+fmt.Sprintf(`
release "web" {
  chart = %q
}
`, webChart(t)))
	m.deploy()
	putClaim(t, m, "1Gi")
	m.rewrite(webStack(t, ``))
	p := m.mustPlan(nil, planner.ObserveMetadata)
	rc := change(t, p, "removed:shop/db")
	if rc.Action != plan.ActionUninstall {
		t.Fatalf("%s, want uninstall", rc.Action)
	}
	impact, _ := json.Marshal(rc.Impact)
	if !strings.Contains(string(impact), "its claims are deleted with it (data-db-0)") {
		t.Errorf("impact %s, want the claim data-db-0 named as deleted", impact)
	}
}
