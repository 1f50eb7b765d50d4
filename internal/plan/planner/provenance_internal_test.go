package planner

import (
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/convoy-sh/convoy/internal/plan"
)

func TestChangedLeavesAndTheirRevert(t *testing.T) {
	var before, after map[string]any
	for _, y := range []struct {
		text string
		into *map[string]any
	}{
		{`{image: {tag: "1.4", repo: app}, replicas: 3, hosts: [a, b], resources: {limits: {cpu: 1}}, old: x}`, &before},
		{`{image: {tag: "1.5", repo: app}, replicas: 3, hosts: [a, c], extra: {deep: {enabled: true}}, "a.b": 1, old: x, list: [1]}`, &after},
	} {
		if err := yaml.Unmarshal([]byte(y.text), y.into); err != nil {
			t.Fatal(err)
		}
	}
	var paths []string
	byPath := map[string]valueLeaf{}
	for _, l := range changedLeaves(before, after) {
		paths = append(paths, l.path)
		byPath[l.path] = l
	}
	want := []string{`["a.b"]`, "extra.deep.enabled", "hosts[1]", "image.tag", "list", "resources.limits.cpu"}
	if !reflect.DeepEqual(paths, want) {
		t.Fatalf("changed leaves %q, want %q", paths, want)
	}
	check := func(path, wantYAML string) {
		t.Helper()
		var w map[string]any
		if err := yaml.Unmarshal([]byte(wantYAML), &w); err != nil {
			t.Fatal(err)
		}
		got := byPath[path].revert(after, before)
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s reverted: %v, want %v", path, got, w)
		}
	}
	// An added structure goes with its last leaf; a removed one comes
	// back; a list element takes its old value.
	check("extra.deep.enabled", `{image: {tag: "1.5", repo: app}, replicas: 3, hosts: [a, c], "a.b": 1, old: x, list: [1]}`)
	check("resources.limits.cpu", `{image: {tag: "1.5", repo: app}, replicas: 3, hosts: [a, c], extra: {deep: {enabled: true}}, "a.b": 1, old: x, list: [1], resources: {limits: {cpu: 1}}}`)
	check("hosts[1]", `{image: {tag: "1.5", repo: app}, replicas: 3, hosts: [a, b], extra: {deep: {enabled: true}}, "a.b": 1, old: x, list: [1]}`)
	check("image.tag", `{image: {tag: "1.4", repo: app}, replicas: 3, hosts: [a, c], extra: {deep: {enabled: true}}, "a.b": 1, old: x, list: [1]}`)
	if after["image"].(map[string]any)["tag"] != "1.5" {
		t.Fatal("revert changed the values it copied")
	}
}

func TestFieldDiffersAtPlanPaths(t *testing.T) {
	var a, b any
	if err := yaml.Unmarshal([]byte(`{spec: {replicas: 3, template: {spec: {containers: [{name: web, image: "app:1.4"}, {name: side, image: s}]}}}, data: {"app.conf": x}}`), &a); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(`{spec: {replicas: 3, template: {spec: {containers: [{name: web, image: "app:1.5"}]}}}, data: {"app.conf": y}}`), &b); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		"spec.replicas": false,
		"spec.template.spec.containers[name=web].image": true,
		// A default the server adds below a container only one side has.
		"spec.template.spec.containers[name=side].terminationMessagePath": true,
		// A default below a container both have: not this input's.
		"spec.template.spec.containers[name=web].terminationMessagePath": false,
		`data["app.conf"]`:                 true,
		"spec.template.spec.containers[1]": true,
	} {
		if got := fieldDiffers(a, b, path); got != want {
			t.Errorf("fieldDiffers(%s) = %v, want %v", path, got, want)
		}
	}
}

// A structure added whole to the user values is named by where its leaves
// were set, not by a chart default merged beside them (seen on bitnami
// redis: `master: {resources: …}` from a values file was named by the
// chart's master.affinity), and a removed value by nothing.
func TestValuesChangeOriginsOfAStructure(t *testing.T) {
	file := plan.Origin{Input: "values master.resources.limits.memory", Kind: plan.OriginValuesFile, Source: &plan.Source{File: "values.yaml", Line: 4, Column: 7}}
	file2 := plan.Origin{Input: "values master.resources.requests.cpu", Kind: plan.OriginValuesFile, Source: &plan.Source{File: "values.yaml", Line: 6, Column: 7}}
	def := plan.Origin{Input: "values master.affinity", Kind: plan.OriginChartDefault, Source: &plan.Source{File: "redis/values.yaml", Line: 438, Column: 3}}
	origins := map[string]plan.Origin{
		"master.affinity":                def,
		"master.resources.limits.memory": file,
		"master.resources.requests.cpu":  file2,
	}
	added := &plan.Change{Path: "master", Op: plan.FieldAdd, After: map[string]any{"resources": map[string]any{
		"limits": map[string]any{"memory": "300Mi"}, "requests": map[string]any{"cpu": "1"}}}}
	got := valuesChangeOrigins(origins, added)
	if len(got) != 1 || got[0].Input != file.Input {
		t.Errorf("added structure: origins %+v, want the values file's first leaf only", got)
	}
	leaf := &plan.Change{Path: "master.resources.limits.memory", Op: plan.FieldChange, Before: "256Mi", After: "300Mi"}
	if got := valuesChangeOrigins(origins, leaf); len(got) != 1 || got[0].Input != file.Input {
		t.Errorf("changed leaf: origins %+v", got)
	}
	removed := &plan.Change{Path: "master.affinity", Op: plan.FieldRemove, Before: map[string]any{}}
	if got := valuesChangeOrigins(origins, removed); got != nil {
		t.Errorf("removed value: origins %+v, want none", got)
	}
	if o, ok := valueOrigin(origins, "master"); !ok || o.Kind == plan.OriginChartDefault {
		t.Errorf("valueOrigin(master) = %+v, want a leaf the user set", o)
	}
}
