package planner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"github.com/convoy-sh/convoy/internal/plan/view"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// provenanceStack: api's Deployment takes its replicas from a variable
// (an auto vars file), its image tag from --var, its tier label from the
// chart's default, DB_HOST from db's revision (an output) and PASSWORD
// from a sensitive variable.
func provenanceStack(ns, apiChart, dbChart, dbMessage string) string {
	return fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
variable "replicas" {
  type = number
}
variable "tag" {
  type = string
}
variable "password" {
  type      = string
  sensitive = true
}
release "db" {
  chart  = %[3]q
  values = [{ message = %[4]q }]
}
release "api" {
  chart  = %[2]q
  values = [{
    replicas = var.replicas
    image    = { tag = var.tag }
    dbHost   = "db-r${release.db.revision}"
  }]
  set_sensitive = { password = var.password }
}
`, ns, apiChart, dbChart, dbMessage)
}

func writeAutoVars(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "prod.auto.vars.hcl"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestProvenanceNamesExactlyTheInputOfEachChangedField changes five
// inputs of one Deployment at once — a variable in an auto vars file, a
// --var, the chart (its default of a label), a dependency's output and a
// sensitive variable — and edits a sixth field on the cluster: each
// changed field names its own input and nothing else, and the sensitive
// one's provenance never shows its value.
func TestProvenanceNamesExactlyTheInputOfEachChangedField(t *testing.T) {
	v1, v2 := chartPath(t, "testdata", "charts", "provenance-1"), chartPath(t, "testdata", "charts", "provenance-2")
	m := newMem(t, provenanceStack("shop", v1, appChart(t), "m1"))
	writeAutoVars(t, m.dir, "replicas = 2\n")
	m.vars = map[string]string{"tag": "1.0", "password": "old-" + canary}
	m.deployOnly("release.db", "release.api")

	// db moves to revision 2 on its own: api's DB_HOST reads it.
	m.rewrite(provenanceStack("shop", v1, appChart(t), "m2"))
	m.deployOnly("release.db")
	// Someone edits a field the chart sets.
	if err := m.v.Edit(context.Background(), ref("apps", "v1", "Deployment", "shop", "api"), func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(9), "spec", "minReadySeconds")
	}); err != nil {
		t.Fatal(err)
	}

	m.rewrite(provenanceStack("shop", v2, appChart(t), "m2"))
	writeAutoVars(t, m.dir, "replicas = 3\n")
	m.vars = map[string]string{"tag": "1.1", "password": canary}
	m.in = func(in *planner.Input) { in.Attribution = planner.AttributeFields }
	p := m.mustPlan(nil, planner.ObserveContent)
	if db := p.Release("release.db"); db.Action != plan.ActionNoOp {
		t.Fatalf("db: %s %v", db.Action, db.Reasons)
	}
	api := p.Release("release.api")
	if api.Action != plan.ActionUpgrade || api.Attribution != "" {
		t.Fatalf("api: %s, attribution %q", api.Action, api.Attribution)
	}
	want := map[string]string{
		"spec.replicas": "values replicas",
		"spec.template.spec.containers[name=app].image":                    "values image.tag",
		"metadata.labels.tier":                                             "chart 1.0.0 → 1.1.0",
		"spec.template.spec.containers[name=app].env[name=DB_HOST].value":  "values dbHost",
		"spec.template.spec.containers[name=app].env[name=PASSWORD].value": "values password",
		"spec.minReadySeconds":                                             "drift (kubectl-edit)",
	}
	var dep *plan.ObjectChange
	for _, o := range api.Objects {
		if o.Ref.Kind == "Deployment" {
			dep = o
		}
	}
	if dep == nil || dep.Diff.Empty() {
		t.Fatalf("no Deployment change: %+v", api.Objects)
	}
	got := map[string]string{}
	for _, c := range dep.Diff.Changes {
		var names []string
		for _, o := range c.Provenance {
			names = append(names, o.Input)
		}
		got[c.Path] = strings.Join(names, " + ")
		if c.ProvenanceJoint {
			t.Errorf("%s: joint provenance %v", c.Path, names)
		}
	}
	for path, w := range want {
		if got[path] != w {
			t.Errorf("%s: provenance %q, want %q", path, got[path], w)
		}
	}
	for path, g := range got {
		if _, ok := want[path]; !ok && g != "" {
			t.Errorf("%s: provenance %q, want none", path, g)
		}
	}
	// The values diff names where each leaf was set only through
	// ValueOrigins (another part of the plan); the chart's origin kind:
	for _, c := range dep.Diff.Changes {
		if c.Path == "metadata.labels.tier" && len(c.Provenance) > 0 && c.Provenance[0].Kind != plan.OriginChart {
			t.Errorf("tier: kind %s", c.Provenance[0].Kind)
		}
		if c.Path == "spec.minReadySeconds" && len(c.Provenance) > 0 && c.Provenance[0].Kind != plan.OriginDrift {
			t.Errorf("minReadySeconds: kind %s", c.Provenance[0].Kind)
		}
	}

	text, js, md := render(t, p)
	assertMasked(t, "plan with provenance", text, js, md)
	// The note names what a user edits: with the sources of values leaves
	// (ValueOrigins, internal/stack/provenance) the variable and where its value
	// was given, else the values leaf.
	replicasNote, passwordNote, dbNote := "← values replicas", "← values password", "← values dbHost"
	if api.ValueOrigins != nil {
		replicasNote, passwordNote, dbNote = "← var.replicas (prod.auto.vars.hcl:1:", "← var.password (--var password=…)", "← release.db.revision (stack.hcl:"
	}
	for what, out := range map[string]string{"text": text, "markdown": md} {
		for _, s := range []string{
			`~ metadata.labels.tier: "backend" → "api"  ← chart 1.0.0 → 1.1.0`,
			`~ spec.minReadySeconds: 9 → 5 (field manager "kubectl-edit")  ← drift (kubectl-edit)`,
			`~ spec.template.spec.containers[name=app].env[name=PASSWORD].value: (sensitive) → (sensitive)  ` + passwordNote,
			`~ spec.template.spec.containers[name=app].env[name=DB_HOST].value: "db-r1" → "db-r2"  ` + dbNote,
			`~ spec.replicas: 2 → 3  ` + replicasNote,
		} {
			if !strings.Contains(out, s) {
				t.Errorf("%s lacks %q:\n%s", what, s, out)
			}
		}
	}
	if !strings.Contains(js, `"provenance": [`) || !strings.Contains(js, `"input": "drift (kubectl-edit)"`) || !strings.Contains(js, `"kind": "chart"`) {
		t.Errorf("json lacks provenance:\n%s", js)
	}

	// Off: no renders, no provenance.
	m.in = func(in *planner.Input) { in.Attribution = planner.AttributeNone }
	off := m.mustPlan(nil, planner.ObserveContent)
	for _, o := range off.Release("release.api").Objects {
		if o.Diff == nil {
			continue
		}
		for _, c := range o.Diff.Changes {
			if len(c.Provenance) > 0 {
				t.Errorf("attribution off: %s names %v", c.Path, c.Provenance)
			}
		}
	}

	// The saved plan keeps it.
	stext, _, _ := render(t, saved(t, p))
	if !strings.Contains(stext, `← chart 1.0.0 → 1.1.0`) || !strings.Contains(stext, replicasNote) {
		t.Errorf("saved plan lost provenance:\n%s", stext)
	}
}

// manyValues is a stack of one release of the app chart with n values
// leaves set to v, and its message.
func manyValues(ns, chart string, n int, v, message string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "    k%03d = %q\n", i, v)
	}
	return fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "big" {
  chart  = %[2]q
  values = [{
    message = %[3]q
    extra = {
%[4]s    }
  }]
}
`, ns, chart, message, b.String())
}

// A release with more changed inputs than are attributed says so, and
// names no input for any field rather than a guess.
func TestProvenanceSaysWhenTooManyInputsChanged(t *testing.T) {
	m := newMem(t, manyValues("shop", appChart(t), 200, "a", "a"))
	m.deploy()
	m.rewrite(manyValues("shop", appChart(t), 200, "b", "b"))
	m.in = func(in *planner.Input) { in.Attribution = planner.AttributeFields }
	p := m.mustPlan(nil, planner.ObserveContent)
	big := p.Release("release.big")
	if big.Action != plan.ActionUpgrade || big.Attribution != "too many changed inputs to attribute (201; at most 32 are)" {
		t.Fatalf("%s: attribution %q", big.Action, big.Attribution)
	}
	for _, o := range big.Objects {
		if o.Diff == nil {
			continue
		}
		for _, c := range o.Diff.Changes {
			if len(c.Provenance) > 0 {
				t.Errorf("%s: %v", c.Path, c.Provenance)
			}
		}
	}
	text, js, _ := render(t, p)
	if !strings.Contains(text, "attribution: too many changed inputs to attribute (201; at most 32 are)") || !strings.Contains(js, `"attribution": "too many changed inputs`) {
		t.Fatalf("text:\n%s", text)
	}
	// Below the bound, data.message names its leaf and data.revision
	// (the chart prints the revision) names nothing.
	m.rewrite(manyValues("shop", appChart(t), 200, "a", "b"))
	p = m.mustPlan(nil, planner.ObserveContent)
	var got []string
	for _, o := range p.Release("release.big").Objects {
		if o.Diff == nil {
			continue
		}
		for _, c := range o.Diff.Changes {
			var names []string
			for _, o := range c.Provenance {
				names = append(names, o.Input)
			}
			got = append(got, c.Path+"="+strings.Join(names, "+"))
		}
	}
	if want := []string{"data.message=values message", "data.revision="}; !slices.Equal(got, want) {
		t.Fatalf("provenance %q, want %q", got, want)
	}
}

// jointStack sets two values one template field takes the larger of.
func jointStack(ns, chart string, a, b int) string {
	return fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "j" {
  chart  = %[2]q
  values = [{ replicas = 1, limits = { a = %[3]d, b = %[4]d } }]
}
`, ns, chart, a, b)
}

// A field no single revert explains — max(a, b) when both rise — names
// both inputs, marked joint; a field one of them explains names it alone.
func TestProvenanceJointInputs(t *testing.T) {
	chart := chartPath(t, "testdata", "charts", "provenance-1")
	m := newMem(t, jointStack("shop", chart, 3, 3))
	m.deploy()
	m.rewrite(jointStack("shop", chart, 5, 5))
	m.in = func(in *planner.Input) { in.Attribution = planner.AttributeFields }
	p := m.mustPlan(nil, planner.ObserveContent)
	got := map[string]string{}
	for _, o := range p.Release("release.j").Objects {
		if o.Ref.Kind != "ConfigMap" || o.Diff == nil {
			continue
		}
		for _, c := range o.Diff.Changes {
			var names []string
			for _, o := range c.Provenance {
				names = append(names, o.Input)
			}
			got[c.Path] = fmt.Sprintf("%s joint=%v", strings.Join(names, " + "), c.ProvenanceJoint)
		}
	}
	want := map[string]string{
		"data.biggest": "values limits.a + values limits.b joint=true",
		"data.a":       "values limits.a joint=false",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("provenance %v, want %v", got, want)
	}
	text, _, _ := render(t, p)
	if !strings.Contains(text, `~ data.biggest: "3" → "5"  ← together: values limits.a`) || !strings.Contains(text, " + values limits.b") {
		t.Fatalf("text:\n%s", text)
	}
}

// convoy explain's question on an unchanged release: which values leaf
// sets each field. A chart default names itself as such; a constant of
// the chart names nothing.
func TestExplainTracesUnchangedFields(t *testing.T) {
	chart := chartPath(t, "testdata", "charts", "provenance-1")
	m := newMem(t, fmt.Sprintf(`
stack "shop" {
  default_namespace = "shop"
}
release "api" {
  chart  = %[1]q
  values = [{ replicas = 2, image = { tag = "1.0" } }]
}
`, chart))
	m.deploy()
	m.in = func(in *planner.Input) {
		addr := in.Stack.Releases[0].Addr
		in.Targets, in.Explain = []config.ReleaseInstanceAddr{addr}, &addr
	}
	p := m.mustPlan(nil, planner.ObserveContent)
	api := p.Release("release.api")
	if api.Action != plan.ActionNoOp {
		t.Fatalf("api: %s", api.Action)
	}
	fields := api.Explained["apps/Deployment/api"]
	got := map[string]string{}
	for path, os := range fields {
		var names []string
		for _, o := range os {
			names = append(names, o.Input+" ["+string(o.Kind)+"]")
		}
		got[path] = strings.Join(names, " + ")
	}
	want := map[string]string{
		"spec.replicas":        "values replicas [values]",
		"metadata.labels.tier": "values tier [chart_default]",
		"spec.template.spec.containers[name=app].image": "values image.tag [values]",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("explained %v, want %v", got, want)
	}
	var b strings.Builder
	if err := view.Explain(&b, p, view.ExplainQuery{Release: "api", Object: "Deployment/api", Path: "spec.replicas"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "= spec.replicas (unchanged)\n      ← values replicas [values]") {
		t.Fatalf("explain:\n%s", b.String())
	}
}
