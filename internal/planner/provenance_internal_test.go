package planner

import (
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
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
