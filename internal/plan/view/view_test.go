package view

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/plantest"
	"github.com/convoy-sh/convoy/internal/sensitive"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestRenderGolden(t *testing.T) {
	p := plantest.Sample()
	for _, r := range p.Releases {
		plan.MaskValues(r.Values, sensitive.New(r.Sensitive))
	}
	for name, render := range map[string]func(*bytes.Buffer, *plan.Plan) error{
		"plan.txt":  func(b *bytes.Buffer, p *plan.Plan) error { return Text(b, p) },
		"plan.json": func(b *bytes.Buffer, p *plan.Plan) error { return JSON(b, p) },
		"plan.md":   func(b *bytes.Buffer, p *plan.Plan) error { return Markdown(b, p) },
		"plan-color.txt": func(b *bytes.Buffer, p *plan.Plan) error {
			return TextWith(b, p, TextOptions{Color: true})
		},
		"plan-compact.txt": func(b *bytes.Buffer, p *plan.Plan) error {
			return TextWith(b, p, TextOptions{Detail: Compact})
		},
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := render(&b, p); err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join("testdata", "render", name), b.String())
			if bytes.Contains(b.Bytes(), []byte("hunter2-canary")) {
				t.Fatalf("%s leaks the sensitive value", name)
			}
		})
	}
}

func TestRenderTextMasksEveryOutput(t *testing.T) {
	const canary = "canary-7f3a9"
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Stack: "s", Releases: []*plan.ReleaseChange{{
		Addr: plantest.Addr("a"), Name: "a", Namespace: "n", Action: plan.ActionUpgrade, Sensitive: []string{canary},
		Warnings: []string{"template said " + canary},
		Objects:  []*plan.ObjectChange{{Ref: plantest.Ref("v1 ConfigMap n/a"), Action: plan.ObjectUpdate, Diff: &plan.Diff{Changes: []*plan.Change{{Path: "data.x", Op: plan.FieldChange, Before: "old", After: "pre-" + canary}}}}},
	}}}
	for name, render := range map[string]func(*bytes.Buffer, *plan.Plan) error{
		"text":     func(b *bytes.Buffer, p *plan.Plan) error { return Text(b, p) },
		"json":     func(b *bytes.Buffer, p *plan.Plan) error { return JSON(b, p) },
		"markdown": func(b *bytes.Buffer, p *plan.Plan) error { return Markdown(b, p) },
	} {
		var b bytes.Buffer
		if err := render(&b, p); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), canary) || !strings.Contains(b.String(), plan.SensitivePlaceholder) {
			t.Errorf("%s output leaks or does not mask:\n%s", name, b.String())
		}
	}
	if err := p.RedactError(fmt.Errorf("failed with %s", canary)); strings.Contains(err.Error(), canary) {
		t.Errorf("error leaks: %v", err)
	}
}

func TestTextShowsMultilineChangesAsUnifiedDiffs(t *testing.T) {
	d := plan.Compare(map[string]any{"conf": "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"}, map[string]any{"conf": "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\n"})
	var b bytes.Buffer
	writeDiff(&b, d, "")
	if !strings.Contains(b.String(), "~ conf:\n") || !strings.Contains(b.String(), "    -e\n    +E\n") {
		t.Fatalf("text:\n%s", b.String())
	}
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs from the golden file:\n%s", path, got)
	}
}

// Values diffs are YAML paths and values, one leaf per line, never JSON
// blobs of whole structures.
func TestTextShowsStructuresLeafByLeaf(t *testing.T) {
	d := plan.Compare(
		map[string]any{"hosts": []any{"a", "b"}, "gone": map[string]any{"x": int64(1)}},
		map[string]any{"hosts": []any{"a", "b", "c"}, "image": map[string]any{"repo": "web", "tag": "1.2", "pull": map[string]any{}}},
	)
	var b bytes.Buffer
	writeDiff(&b, d, "")
	want := `- gone.x: 1
+ hosts[2]: "c"
+ image.pull: {}
+ image.repo: "web"
+ image.tag: "1.2"
`
	if b.String() != want {
		t.Fatalf("text:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestFormatValuePrintsTheValueAsWritten: values are JSON, but shell
// commands in probes read as written (no \u003c for <), and a long value is
// cut between characters, never inside one.
func TestFormatValuePrintsTheValueAsWritten(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"redirect", "curl --user u:$(< $FILE) 127.0.0.1 && echo ok > /tmp/x", `"curl --user u:$(< $FILE) 127.0.0.1 && echo ok > /tmp/x"`},
		{"structure", map[string]any{"a": "<b>"}, `{"a":"<b>"}`},
		{"number", 3, `3`},
		{"long", strings.Repeat("é", 150), `"` + strings.Repeat("é", 99) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatValue(tc.v); got != tc.want {
				t.Fatalf("formatValue: %s, want %s", got, tc.want)
			}
		})
	}
}

// Keys and paths are never masked: a short sensitive value ("mess", or
// grafana's default adminUser "admin") leaves the keys that contain it
// readable in every view, and is masked where it is the value.
func TestShortSensitiveValuesLeaveKeysReadable(t *testing.T) {
	values := plan.Compare(map[string]any{}, map[string]any{"message": "hello", "adminPassword": "pw-9f8e7d6c5b", "adminUser": "mess",
		"labels": map[string]any{"app.kubernetes.io/name": "my-mess-ui"}, "data": map[string]any{"mess-password": "x"}})
	r := &plan.ReleaseChange{Addr: plantest.Addr("a"), Name: "a", Namespace: "n", Action: plan.ActionInstall, Sensitive: []string{"mess", "pw-9f8e7d6c5b"}, Values: values}
	plan.MaskValues(r.Values, sensitive.New(r.Sensitive))
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Stack: "s", Releases: []*plan.ReleaseChange{r}}
	for name, render := range map[string]func(*bytes.Buffer, *plan.Plan) error{
		"text":     func(b *bytes.Buffer, p *plan.Plan) error { return Text(b, p) },
		"json":     func(b *bytes.Buffer, p *plan.Plan) error { return JSON(b, p) },
		"markdown": func(b *bytes.Buffer, p *plan.Plan) error { return Markdown(b, p) },
	} {
		var b bytes.Buffer
		if err := render(&b, p); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, key := range []string{"message", "adminPassword", "adminUser", "my-mess-ui", "mess-password"} {
			if !strings.Contains(out, key) {
				t.Errorf("%s: the key or name %q is masked:\n%s", name, key, out)
			}
		}
		if strings.Contains(out, `"mess"`) || strings.Contains(out, ": mess") || strings.Contains(out, "pw-9f8e7d6c5b") {
			t.Errorf("%s: a sensitive value shows:\n%s", name, out)
		}
	}
}
