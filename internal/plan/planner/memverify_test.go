package planner_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planfile"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A saved plan is verified (planner.Verify) against the cluster as it is
// when it is applied: what users rely on is that an edit of what the plan
// would overwrite, a deletion, a recreation or a newer revision refuses
// it, and that what controllers write beside convoy does not.

// verify is planner.Verify of p against m's cluster.
func (m *mem) verify(p *plan.Plan) []string {
	m.t.Helper()
	moved, err := planner.Verify(context.Background(), p, func(string) (planner.VerifyCluster, error) {
		return planner.VerifyCluster{View: m.v, Renderer: m.v.Engine().Renderer}, nil
	})
	if err != nil {
		m.t.Fatal(err)
	}
	return moved
}

// checkMoved fails t unless moved is one change containing want, or none
// when want is "".
func checkMoved(t *testing.T, moved []string, want string) {
	t.Helper()
	switch {
	case want == "" && len(moved) > 0:
		t.Fatalf("the plan is refused (%q), want it to hold", moved)
	case want != "" && (len(moved) != 1 || !strings.Contains(moved[0], want)):
		t.Fatalf("moved %q, want one change saying %q", moved, want)
	}
}

func TestMemVerify(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// change is made after the plan; wantMetadata and wantShape are
		// what Verify says of it when the plan observed from metadata or
		// by content ("": the plan holds).
		change                  func(t *testing.T, m *mem)
		wantMetadata, wantShape string
	}{
		{name: "nothing moved"},
		{name: "a field convoy set edited by another manager", change: func(t *testing.T, m *mem) {
			if err := m.v.Edit(ctx, webDeployment, setReplicas(5)); err != nil {
				t.Fatal(err)
			}
		}, wantMetadata: "apps/v1 Deployment shop/web was edited since the plan", wantShape: "apps/v1 Deployment shop/web was edited since the plan"},
		{name: "a status write", change: func(t *testing.T, m *mem) {
			if err := m.v.Edit(ctx, webDeployment, func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, int64(2), "status", "readyReplicas")
			}); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a controller's annotation", change: func(t *testing.T, m *mem) {
			if err := m.v.Edit(ctx, webDeployment, func(u *unstructured.Unstructured) {
				a := u.GetAnnotations()
				a["deployment.kubernetes.io/revision"] = "3"
				u.SetAnnotations(a)
			}); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "deleted", change: func(t *testing.T, m *mem) {
			if err := m.v.Delete(ctx, webConfig); err != nil {
				t.Fatal(err)
			}
		}, wantMetadata: "v1 ConfigMap shop/web-config was deleted since the plan", wantShape: "v1 ConfigMap shop/web-config was deleted since the plan"},
		{name: "recreated by another tool with its content", change: func(t *testing.T, m *mem) {
			live, err := m.v.Live(ctx, webConfig)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.v.Delete(ctx, webConfig); err != nil {
				t.Fatal(err)
			}
			again := live.DeepCopy()
			again.SetUID("")
			again.SetResourceVersion("")
			again.SetManagedFields(nil)
			if err := m.v.Put(ctx, again); err != nil {
				t.Fatal(err)
			}
			if now, _ := m.v.Live(ctx, webConfig); now.GetUID() == live.GetUID() {
				t.Fatalf("recreated with the same uid %s", now.GetUID())
			}
		},
			// Observed from metadata: another uid, fields convoy no longer
			// manages. Observed by content: what apply sets is as it
			// was, so applying the plan does what it says.
			wantMetadata: "v1 ConfigMap shop/web-config was edited since the plan"},
		{name: "a newer revision", change: func(t *testing.T, m *mem) { m.deploy() },
			wantMetadata: "release web (namespace shop) has a new revision 2 (deployed) since the plan saw revision 1 (deployed)",
			wantShape:    "release web (namespace shop) has a new revision 2 (deployed) since the plan saw revision 1 (deployed)"},
	} {
		for _, o := range observes {
			t.Run(tc.name+"/"+o.name, func(t *testing.T) {
				m := newMem(t, webStack(t, `{ message = "a" }`))
				m.deploy()
				p := m.mustPlan(nil, o.observe)
				rc := change(t, p, "release.web")
				if rc.Action != plan.ActionNoOp || len(rc.Observed.Objects) != 2 {
					t.Fatalf("%s observing %d objects, want a no-op observing 2", rc.Action, len(rc.Observed.Objects))
				}
				if tc.change != nil {
					tc.change(t, m)
				}
				want := tc.wantMetadata
				if o.observe == planner.ObserveContent {
					want = tc.wantShape
				}
				checkMoved(t, m.verify(p), want)
			})
		}
	}
}

// An upgrade observes the objects it applies by the fields it sets: an
// edit of one of them refuses it, whoever made it; an object created since
// where the plan saw none does too.
func TestMemVerifyUpgrade(t *testing.T) {
	ctx := context.Background()
	m := newMem(t, webStack(t, `{ message = "a" }`))
	m.deploy()
	m.rewrite(webStack(t, `{ message = "b", extra = true }`))
	p := m.mustPlan(nil, planner.ObserveContent)
	rc := change(t, p, "release.web")
	kinds := map[string]plan.ObservationKind{}
	for _, ob := range rc.Observed.Objects {
		kinds[ob.Ref.Name] = ob.Kind
	}
	if kinds["web-config"] != plan.ObservedShape || kinds["web"] != plan.ObservedShape || kinds["web-extra"] != plan.ObservedAbsent {
		t.Fatalf("observed %v, want the ConfigMap and the Deployment by shape, web-extra absent", kinds)
	}
	checkMoved(t, m.verify(p), "")

	extra := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"x": "y"}}}
	extra.SetNamespace("shop")
	extra.SetName("web-extra")
	if err := m.v.Put(ctx, extra); err != nil {
		t.Fatal(err)
	}
	if err := m.v.Edit(ctx, webConfig, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "edited", "data", "message")
	}); err != nil {
		t.Fatal(err)
	}
	moved := m.verify(p)
	want := []string{"v1 ConfigMap shop/web-config was edited since the plan", "v1 ConfigMap shop/web-extra was created since the plan"}
	if len(moved) != 2 || !slices.ContainsFunc(moved, func(s string) bool { return strings.HasPrefix(s, want[0]) }) || !slices.Contains(moved, want[1]) {
		t.Fatalf("moved %q, want %q", moved, want)
	}
}

// A plan saved by convoy before observations were typed (plan file format
// version 5: "applied:" and "shape:" prefixed the hashes) is verified as it
// was: what a controller writes beside convoy leaves it holding, an edit
// of a field convoy set refuses it.
func TestMemVerifyPlanFileOfVersion5(t *testing.T) {
	for _, o := range observes {
		t.Run(o.name, func(t *testing.T) {
			m := newMem(t, webStack(t, `{ message = "a" }`))
			m.deploy()
			b, err := planfile.Encode(&planfile.File{Plan: m.mustPlan(nil, o.observe)})
			if err != nil {
				t.Fatal(err)
			}
			f, err := planfile.Decode(version5(t, b), "old.cvp")
			if err != nil {
				t.Fatal(err)
			}
			if err := m.v.Edit(context.Background(), webDeployment, func(u *unstructured.Unstructured) {
				a := u.GetAnnotations()
				a["deployment.kubernetes.io/revision"] = "3"
				u.SetAnnotations(a)
			}); err != nil {
				t.Fatal(err)
			}
			checkMoved(t, m.verify(f.Plan), "")
			if err := m.v.Edit(context.Background(), webDeployment, setReplicas(5)); err != nil {
				t.Fatal(err)
			}
			checkMoved(t, m.verify(f.Plan), "apps/v1 Deployment shop/web was edited since the plan")
		})
	}
}

// version5 rewrites a plan file as convoy wrote it in format version 5:
// observations without a kind, their hashes prefixed by it.
func version5(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["FormatVersion"] = 5
	legacy := 0
	for _, r := range doc["Plan"].(map[string]any)["Releases"].([]any) {
		obs, _ := r.(map[string]any)["Observed"].(map[string]any)["Objects"].([]any)
		for _, ob := range obs {
			ob := ob.(map[string]any)
			switch plan.ObservationKind(ob["Kind"].(string)) {
			case plan.ObservedApplied:
				ob["Hash"] = "applied:" + ob["Hash"].(string)
			case plan.ObservedShape:
				ob["Hash"] = "shape:" + ob["Hash"].(string)
			}
			delete(ob, "Kind")
			legacy++
		}
	}
	if legacy == 0 {
		t.Fatal("the plan observed no object")
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(out); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
