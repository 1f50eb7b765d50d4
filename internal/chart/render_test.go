package chart

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/yamldoc"
)

func TestRenderStructure(t *testing.T) {
	ch, err := Load("testdata/charts/hooks")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Render(ch, RenderOptions{ReleaseName: "r", Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Hook{}
	for _, h := range r.Hooks {
		byName[h.Name] = h
	}
	tests := []struct {
		name     string
		kind     string
		events   []HookEvent
		weight   int
		policies []HookDeletePolicy
	}{
		{"r-pre-install", "Job", []HookEvent{HookPreInstall}, -5, []HookDeletePolicy{HookBeforeHookCreation}},
		{"r-post-install", "Pod", []HookEvent{HookPostInstall}, 10, []HookDeletePolicy{HookSucceeded, HookFailed}},
		{"r-post-delete", "Secret", []HookEvent{HookPostDelete}, 3, []HookDeletePolicy{HookSucceeded}},
		{"r-pre-upgrade", "ServiceAccount", []HookEvent{HookPreUpgrade}, -1, []HookDeletePolicy{HookFailed, HookBeforeHookCreation}},
		{"r-post-upgrade", "Job", []HookEvent{HookPostUpgrade}, 0, []HookDeletePolicy{}},
		{"r-pre-rollback", "Pod", []HookEvent{HookPreRollback}, 7, []HookDeletePolicy{HookSucceeded}},
		{"multi-event", "ConfigMap", []HookEvent{HookPreInstall, HookPreUpgrade, HookPostInstall}, -10, []HookDeletePolicy{}},
		{"legacy-test-success", "Pod", []HookEvent{HookTest}, 0, []HookDeletePolicy{}},
	}
	for _, tc := range tests {
		h := byName[tc.name]
		if h == nil {
			t.Errorf("hook %s missing", tc.name)
			continue
		}
		if h.Kind != tc.kind || h.Weight != tc.weight || !reflect.DeepEqual(h.Events, tc.events) || !reflect.DeepEqual(h.DeletePolicies, tc.policies) {
			t.Errorf("hook %s = kind %s weight %d events %v policies %v", tc.name, h.Kind, h.Weight, h.Events, h.DeletePolicies)
		}
	}
	if _, ok := byName["unknown-hook-is-dropped"]; ok {
		t.Error("a hook with an unknown event was kept")
	}
	var names []string
	for _, m := range r.Manifests {
		names = append(names, m.Kind+"/"+m.Name)
	}
	if want := []string{"ConfigMap/annotated-but-not-a-hook", "ConfigMap/plain"}; !reflect.DeepEqual(names, want) {
		t.Errorf("manifests %v, want %v", names, want)
	}
	var order []string
	for _, h := range HooksFor(r.Hooks, HookPreInstall) {
		order = append(order, h.Name)
	}
	if want := []string{"multi-event", "r-pre-install"}; !reflect.DeepEqual(order, want) {
		t.Errorf("pre-install order %v, want %v", order, want)
	}
}

func TestRenderNotesCRDsAndValues(t *testing.T) {
	ch, err := Load("testdata/charts/umbrella")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Render(ch, RenderOptions{ReleaseName: "r", Namespace: "ns", UserValues: map[string]any{"backend": map[string]any{"db": map[string]any{"enabled": false}}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Notes != "umbrella notes for r; env=prod\n" {
		t.Errorf("notes %q", r.Notes)
	}
	var crds []string
	for _, c := range r.CRDs {
		crds = append(crds, c.Name)
	}
	want := []string{
		"umbrella/crds/widgets.yaml",
		"umbrella/charts/backend/crds/gadgets.yaml",
		"umbrella/charts/backend-replica/crds/gadgets.yaml",
		"umbrella/charts/backend-replica/charts/db/crds/tables.yaml",
	}
	if !reflect.DeepEqual(crds, want) {
		t.Errorf("CRDs %v, want %v", crds, want)
	}
	if r.Values["appName"] != "umbrella-app" {
		t.Errorf("values: %v", r.Values["appName"])
	}
	for _, m := range r.Manifests {
		if m.Kind == "Deployment" && m.APIVersion != "apps/v1" {
			t.Errorf("%s: apiVersion %q", m.Name, m.APIVersion)
		}
	}
}

func TestRenderLookupIsInjectable(t *testing.T) {
	ch := &Chart{
		Metadata:  &Metadata{APIVersion: "v2", Name: "l", Version: "1.0.0"},
		Templates: []*File{{Name: "templates/cm.yaml", Data: []byte(`{{ $s := lookup "v1" "Secret" .Release.Namespace "db" }}data: {{ dig "data" "password" "none" $s }}`)}},
	}
	var calls []string
	lookup := func(apiVersion, kind, ns, name string) (map[string]any, error) {
		calls = append(calls, strings.Join([]string{apiVersion, kind, ns, name}, "|"))
		return map[string]any{"data": map[string]any{"password": "c2VjcmV0"}}, nil
	}
	r, err := Render(ch, RenderOptions{ReleaseName: "r", Namespace: "ns", Lookup: lookup})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Manifests) != 1 || r.Manifests[0].Content != "data: c2VjcmV0" {
		t.Fatalf("manifests %+v", r.Manifests)
	}
	if !reflect.DeepEqual(calls, []string{"v1|Secret|ns|db"}) {
		t.Errorf("lookup calls %v", calls)
	}
	off, err := Render(ch, RenderOptions{ReleaseName: "r", Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	if off.Manifests[0].Content != "data: none" {
		t.Errorf("offline lookup rendered %q", off.Manifests[0].Content)
	}
}

func TestRenderErrorsAreTyped(t *testing.T) {
	load := func(name string) *Chart {
		t.Helper()
		ch, err := Load("testdata/charts/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	_, err := Render(load("errors"), RenderOptions{ReleaseName: "r", UserValues: map[string]any{"mode": "fail"}})
	te, ok := err.(*TemplateError)
	if !ok || te.Template != "errors/templates/cm.yaml" || !strings.Contains(te.Message, "errors/templates/cm.yaml:14:13") {
		t.Errorf("fail: %#v", err)
	}
	_, err = Render(load("schema"), RenderOptions{ReleaseName: "r", UserValues: map[string]any{"port": int64(0)}})
	if _, ok := err.(*SchemaError); !ok || !strings.Contains(err.Error(), "at '/port'") {
		t.Errorf("schema: %#v", err)
	}
	_, err = Render(load("missing-dep"), RenderOptions{ReleaseName: "r"})
	if md, ok := err.(*MissingDependenciesError); !ok || !reflect.DeepEqual(md.Names, []string{"not-vendored", "also-missing"}) {
		t.Errorf("missing dep: %#v", err)
	}
	_, err = Render(load("lib-only"), RenderOptions{ReleaseName: "r"})
	if _, ok := err.(*NotInstallableError); !ok {
		t.Errorf("library: %#v", err)
	}
	_, err = Render(load("kube-constraint"), RenderOptions{ReleaseName: "r"})
	if _, ok := err.(*KubeVersionError); !ok {
		t.Errorf("kube version: %#v", err)
	}
}

// TestRenderBoundsNesting checks that self-rendering tpl and long include
// cycles through many names fail the render instead of exhausting the
// stack (which would kill a process rendering many releases).
func TestRenderBoundsNesting(t *testing.T) {
	var cycle strings.Builder
	for i := range 20 {
		fmt.Fprintf(&cycle, `{{ define "n%d" }}{{ include "n%d" . }}{{ end }}`, i, (i+1)%20)
	}
	tests := []struct {
		name, tpl string
		values    map[string]any
		cause     string
	}{
		{"tpl renders itself", `{{ tpl .Values.self . }}`, map[string]any{"self": "{{ tpl .Values.self . }}"}, "more than 2000 nested include or tpl calls"},
		{"include cycle through many names", cycle.String() + `{{ include "n0" . }}`, nil, "more than 2000 nested include or tpl calls"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch := &Chart{
				Metadata:  &Metadata{APIVersion: "v2", Name: "deep", Version: "1.0.0"},
				Templates: []*File{{Name: "templates/x.yaml", Data: []byte(tc.tpl)}},
			}
			_, err := Render(ch, RenderOptions{ReleaseName: "r", UserValues: tc.values})
			if err == nil || !strings.Contains(err.Error(), "nested") {
				t.Fatalf("got %v", err)
			}
			// Every level of the recursion repeated made a 95 KB (include)
			// and a 302 KB (tpl) line: cut, the template file and line of
			// the loop and its cause kept.
			msg := err.Error()
			if len(msg) > 2*nestedMessageMax {
				t.Errorf("the error is %d bytes", len(msg))
			}
			for _, w := range []string{"deep/templates/x.yaml:1:", "nested calls left out", tc.cause} {
				if !strings.Contains(msg, w) {
					t.Errorf("the error does not say %q: %s", w, msg)
				}
			}
		})
	}
}

// TestJoinManifestsSharesTheJoinedString: JoinManifests returns
// Manifest(false), and leaves each manifest as it was, now a part of the
// joined string (one copy of a large release's manifests, not two).
func TestJoinManifestsSharesTheJoinedString(t *testing.T) {
	r := &Rendered{
		CRDs: []*File{{Name: "crds/a.yaml", Data: []byte("kind: CustomResourceDefinition")}},
		Manifests: []Manifest{
			{Path: "web/templates/a.yaml", Content: "kind: ConfigMap\nmetadata:\n  name: a"},
			{Path: "web/templates/é.yaml", Content: ""},
			{Path: "web/templates/b.yaml", Content: "kind: Secret\n---\nnot a separator"},
		},
	}
	want := r.Manifest(false)
	contents := []string{}
	for _, m := range r.Manifests {
		contents = append(contents, m.Content)
	}
	got := r.JoinManifests()
	if got != want {
		t.Fatalf("JoinManifests:\n%s\nwant Manifest(false):\n%s", got, want)
	}
	start := uintptr(unsafe.Pointer(unsafe.StringData(got)))
	for i, m := range r.Manifests {
		if m.Content != contents[i] {
			t.Fatalf("manifest %d is %q, was %q", i, m.Content, contents[i])
		}
		if p := uintptr(unsafe.Pointer(unsafe.StringData(m.Content))); m.Content != "" && (p < start || p >= start+uintptr(len(got))) {
			t.Fatalf("manifest %d is not a part of the joined string", i)
		}
	}
	if r.Manifest(false) != want {
		t.Fatal("the manifest differs after JoinManifests")
	}
}

// A rendering kept for its parse (a plan's or an apply's) is converted
// from YAML once: parsing its manifest, as the release record stores it
// and as rendered, converts nothing again. `convoy render`'s rendering
// keeps nothing: a parse after it converts each document.
func TestRenderKeepsDocumentsForTheParse(t *testing.T) {
	ch, err := Load("testdata/charts/scaffold")
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []bool{true, false} {
		r, err := Render(ch, RenderOptions{ReleaseName: fmt.Sprintf("keep-%v", keep), Namespace: "ns", KeepDocuments: keep})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Manifests) < 3 {
			t.Fatalf("%d manifests rendered, want the scaffold's", len(r.Manifests))
		}
		before := yamldoc.Conversions()
		objs, err := kube.ParseUnmapped(r.Manifest(false))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range r.Manifests {
			if _, err := kube.ParseUnmapped(m.Document()); err != nil {
				t.Fatal(err)
			}
		}
		after := yamldoc.Conversions()
		if len(objs) != len(r.Manifests) {
			t.Fatalf("parsed %d objects of %d manifests", len(objs), len(r.Manifests))
		}
		if keep && after != before {
			t.Errorf("kept: the parse converted %d documents again", after-before)
		}
		if !keep && after != before+int64(len(r.Manifests)) {
			t.Errorf("not kept: the parse converted %d documents, want each of the %d once", after-before, len(r.Manifests))
		}
	}
}
