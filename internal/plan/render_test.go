package plan

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// samplePlan exercises every part of the renderers.
func samplePlan() *Plan {
	app := &ChartRef{Name: "app", Version: "1.2.0", AppVersion: "2.0"}
	return &Plan{
		FormatVersion: FormatVersion, Stack: "shop", ConfigHash: "sha256:0123", CreatedAt: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC),
		Releases: []*ReleaseChange{
			{
				Addr: "release.db", Name: "db", Namespace: "shop", Action: ActionInstall, Chart: ChartChange{After: app},
				Values:    Compare(map[string]any{}, map[string]any{"password": "hunter2-canary", "size": int64(10)}),
				Hooks:     []HookRun{{Name: "db-init", Kind: "Job", Path: "app/templates/init.yaml", Events: []string{"post-install"}}},
				Objects:   []*ObjectChange{{Ref: "v1 Secret shop/db-auth", APIVersion: "v1", Kind: "Secret", Namespace: "shop", Name: "db-auth", Action: ObjectCreate}},
				Sensitive: []string{"hunter2-canary"},
			},
			{
				Addr: `release.api["eu"]`, Name: "api-eu", Namespace: "shop", Action: ActionUpgrade, DependsOn: []string{"release.db"},
				Chart:  ChartChange{Before: &ChartRef{Name: "app", Version: "1.1.0"}, After: app},
				Values: Compare(map[string]any{"replicas": int64(2)}, map[string]any{"replicas": int64(3)}),
				Objects: []*ObjectChange{
					{Ref: "v1 ConfigMap shop/api-eu", APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "api-eu", Action: ObjectUpdate, Template: "app/templates/cm.yaml",
						Diff: Compare(map[string]any{"data": map[string]any{"app.conf": "a = 1\nb = 2\n"}}, map[string]any{"data": map[string]any{"app.conf": "a = 1\nb = 3\n"}})},
					{Ref: "apps/v1 Deployment shop/api-eu", APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "api-eu", Action: ObjectUpdate,
						Diff: Compare(map[string]any{"spec": map[string]any{"replicas": int64(2)}}, map[string]any{"spec": map[string]any{"replicas": int64(3)}})},
					{Ref: "batch/v1 Job shop/migrate", APIVersion: "batch/v1", Kind: "Job", Namespace: "shop", Name: "migrate", Action: ObjectReplace, Reason: "spec.template: field is immutable",
						Diff: Compare(map[string]any{"spec": map[string]any{"image": "m:1"}}, map[string]any{"spec": map[string]any{"image": "m:2"}})},
					{Ref: "v1 Service shop/api-eu", APIVersion: "v1", Kind: "Service", Namespace: "shop", Name: "api-eu", Action: ObjectNoOp},
					{Ref: "v1 ConfigMap shop/old", APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "old", Action: ObjectDelete},
				},
				Drift: []*ObjectDrift{{Ref: "apps/v1 Deployment shop/api-eu", Corrected: true,
					Diff: withManager(Compare(map[string]any{"spec": map[string]any{"replicas": int64(2)}}, map[string]any{"spec": map[string]any{"replicas": int64(5)}}), "kubectl")}},
				Observed: Observed{LastRevision: 4, LastStatus: "deployed"},
			},
			{Addr: "release.web", Name: "web", Namespace: "shop", Action: ActionUpgrade, KnownAfterApply: true, Chart: ChartChange{Before: app}, DependsOn: []string{`release.api["eu"]`}},
			{Addr: "release.cache", Name: "cache", Namespace: "shop", Action: ActionNoOp, Chart: ChartChange{Before: app, After: app}},
			{Addr: "removed:shop/legacy", Name: "legacy", Namespace: "shop", Action: ActionUninstall, Chart: ChartChange{Before: app},
				Objects:  []*ObjectChange{{Ref: "v1 ConfigMap shop/legacy", APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "legacy", Action: ObjectDelete}},
				Warnings: []string{"the recorded manifest mentions hunter2-canary"}},
		},
	}
}

func withManager(d *Diff, manager string) *Diff {
	for _, c := range d.Changes {
		c.Manager = manager
	}
	return d
}

func TestRenderGolden(t *testing.T) {
	p := samplePlan()
	for _, r := range p.Releases {
		maskValues(r.Values, newRedactor(r.Sensitive))
	}
	for name, render := range map[string]func(*bytes.Buffer, *Plan) error{
		"plan.txt":  func(b *bytes.Buffer, p *Plan) error { return RenderText(b, p) },
		"plan.json": func(b *bytes.Buffer, p *Plan) error { return RenderJSON(b, p) },
		"plan.md":   func(b *bytes.Buffer, p *Plan) error { return RenderMarkdown(b, p) },
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := render(&b, p); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "render", name)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if b.String() != string(want) {
				t.Fatalf("%s differs from the golden file:\n%s", name, b.String())
			}
			if bytes.Contains(b.Bytes(), []byte("hunter2-canary")) {
				t.Fatalf("%s leaks the sensitive value", name)
			}
		})
	}
}

func TestPlanFileRoundTrip(t *testing.T) {
	p := samplePlan()
	path := filepath.Join(t.TempDir(), "p.cvp")
	if err := p.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := RenderJSON(&a, p); err != nil {
		t.Fatal(err)
	}
	if err := RenderJSON(&b, got); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() || !slices.Equal(got.Releases[0].Sensitive, []string{"hunter2-canary"}) {
		t.Fatalf("round trip differs:\n%s\n%s", a.String(), b.String())
	}
	if _, err := readPlanBytes([]byte(`{"Kind":"convoy-plan","FormatVersion":99,"Plan":{"FormatVersion":99}}`)); err == nil {
		t.Fatal("a plan of another format version was read")
	}
	if _, err := readPlanBytes([]byte(`{}`)); err == nil {
		t.Fatal("a non-plan was read")
	}
}
