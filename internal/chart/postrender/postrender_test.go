package postrender

import (
	"context"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart"
)

func rendered() *chart.Rendered {
	return &chart.Rendered{Manifests: []chart.Manifest{
		{Path: "c/templates/cm.yaml", Kind: "ConfigMap", Name: "a", APIVersion: "v1", Content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    tier: api\ndata:\n  k: v"},
		{Path: "c/templates/cm.yaml", Kind: "ConfigMap", Name: "b", APIVersion: "v1", Content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: other\ndata:\n  k: v"},
	}}
}

func TestPatches(t *testing.T) {
	tests := []struct {
		name    string
		patch   Patch
		a, b    string // wanted in each object's content ("" : unchanged)
		wantErr string
	}{
		{name: "strategic merge by label", patch: Patch{Name: "patches[0]", Target: Target{Labels: map[string]string{"tier": "api"}}, Patch: `{"data":{"k":"patched"}}`}, a: "k: patched"},
		{name: "json 6902 by namespace", patch: Patch{Name: "patches[0]", Target: Target{Namespace: "other"}, Patch: `[{"op":"add","path":"/data/extra","value":"x"}]`, JSON6902: true}, b: "extra: x"},
		{name: "release namespace", patch: Patch{Name: "patches[0]", Target: Target{Namespace: "rel", Name: "?"}, Patch: `{"data":{"k":"r"}}`}, a: "k: r"},
		{name: "glob", patch: Patch{Name: "patches[0]", Target: Target{Kind: "ConfigMap", Name: "*"}, Patch: `{"data":{"k":"g"}}`}, a: "k: g", b: "k: g"},
		{name: "no match", patch: Patch{Name: "patches[3]", Target: Target{Kind: "Secret"}, Patch: `{}`}, wantErr: "patches[3] matches no rendered object (target: kind Secret)"},
		{name: "bad op", patch: Patch{Name: "patches[0]", Target: Target{Name: "a"}, Patch: `[{"op":"replace","path":"/nope/x","value":1}]`, JSON6902: true}, wantErr: "patches[0] on ConfigMap a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rendered()
			err := Apply(context.Background(), r, "rel", Spec{Patches: []Patch{tt.patch}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			orig := rendered()
			for i, want := range []string{tt.a, tt.b} {
				got := r.Manifests[i].Content
				if want == "" && got != orig.Manifests[i].Content || want != "" && !strings.Contains(got, want) {
					t.Errorf("object %d:\n%s\nwant %q", i, got, want)
				}
			}
		})
	}
}

func TestExec(t *testing.T) {
	r := rendered()
	err := Apply(context.Background(), r, "rel", Spec{Exec: &Exec{Command: "sed", Args: []string{"s/k: v/k: from-exec/"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Manifests) != 2 || !strings.Contains(r.Manifests[0].Content, "k: from-exec") || r.Manifests[1].Name != "b" || r.Manifests[0].Path != "post-renderer" {
		t.Fatalf("%+v", r.Manifests)
	}
	err = Apply(context.Background(), rendered(), "rel", Spec{Exec: &Exec{Command: "sh", Args: []string{"-c", "echo broken >&2; exit 3"}}})
	if err == nil || !strings.Contains(err.Error(), "post_renderer sh: exit status 3: broken") {
		t.Fatalf("error %v", err)
	}
}
