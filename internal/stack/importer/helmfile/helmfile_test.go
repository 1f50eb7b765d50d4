package helmfile

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestConvertGolden converts each testdata/NAME/helmfile.yaml[.gotmpl]
// and compares every file written, and the list of what is left by hand,
// with testdata/NAME/expected (rewritten with -update).
func TestConvertGolden(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "*"))
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in, _ := filepath.Glob(filepath.Join(dir, "helmfile.yaml*"))
			if len(in) != 1 {
				t.Fatalf("want one helmfile in %s, have %v", dir, in)
			}
			res, err := Convert(in[0])
			if err != nil {
				t.Fatal(err)
			}
			files := map[string][]byte{"LEFT_BY_HAND.txt": []byte(strings.Join(res.LeftByHand, "\n") + "\n")}
			for name, b := range res.Files {
				files[name] = b
			}
			exp := filepath.Join(dir, "expected")
			if *update {
				if err := os.RemoveAll(exp); err != nil {
					t.Fatal(err)
				}
				for name, b := range files {
					p := filepath.Join(exp, name)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			var want []string
			_ = filepath.Walk(exp, func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					rel, _ := filepath.Rel(exp, p)
					want = append(want, filepath.ToSlash(rel))
				}
				return err
			})
			if len(want) != len(files) {
				t.Errorf("wrote %d files, expected has %v", len(files), want)
			}
			for _, name := range want {
				b, err := os.ReadFile(filepath.Join(exp, name))
				if err != nil {
					t.Fatal(err)
				}
				if got, ok := files[name]; !ok {
					t.Errorf("%s not written", name)
				} else if string(got) != string(b) {
					t.Errorf("%s differs (go test -update to accept)\n--- got\n%s\n--- want\n%s", name, got, b)
				}
			}
		})
	}
}

func TestTranslate(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: " .Environment.Name ", want: "environment.name"},
		{in: " .Values.db.host ", want: "var.db.host"},
		{in: " .StateValues.replicas ", want: "var.replicas"},
		{in: " .Environment.Values.domain ", want: "var.domain"},
		{in: ` requiredEnv "IMAGE_TAG" `, want: "var.IMAGE_TAG"},
		{in: ` env "TAG" | default "latest" `, want: `(var.TAG == null || var.TAG == "" || var.TAG == false || var.TAG == 0 ? "latest" : var.TAG)`},
		{in: ` .Values.a.b | default 3 `, want: `(try(var.a.b, null) == null || try(var.a.b, null) == "" || try(var.a.b, null) == false || try(var.a.b, null) == 0 ? 3 : try(var.a.b, 3))`},
		{in: ` .Values.tag | quote `, want: "tostring(var.tag)"},
		{in: ` printf "%s-%d" .Release.Name 3 `, want: `format("%s-%d", release.name, 3)`},
		{in: ` .Values.name | lower | trim `, want: "trimspace(lower(var.name))"},
		{in: ` (.Values.name) `, want: "var.name"},
		{in: ` toYaml .Values.resources | nindent 4 `, want: `"\n    ${indent(4, chomp(yamlencode(var.resources)))}"`},
		{in: ` .Values.env | toYaml | indent 2 `, want: `"  ${indent(2, chomp(yamlencode(var.env)))}"`},
		{in: ` .Values.env | toJson `, want: `jsonencode(var.env)`},
		{in: ` .Values.env | toYaml | nindent .Values.n `, err: "nindent by a computed width"},
		{in: ` .Values.x | b64enc `, err: "the function b64enc has no translation"},
		{in: ` $x := .Values.x `, err: "declares a template variable"},
		{in: ` .Values.x | quote | upper `, err: "quote inside a pipeline"},
		{in: ` env .Values.name `, err: "env of a computed name"},
		{in: ` .Release.Labels `, err: ".Release.Labels has no translation"},
		{in: ` index .Values "a-b" `, want: "var.a-b"},
		{in: ` index .Values "db" "host" | default "x" `, want: `(try(var.db.host, null) == null || try(var.db.host, null) == "" || try(var.db.host, null) == false || try(var.db.host, null) == 0 ? "x" : try(var.db.host, "x"))`},
		{in: ` index .Values "a b" `, err: `"a b" is not an HCL name`},
		{in: ` index .Values .Values.k `, err: "index by a computed key"},
		{in: ` index .Release.Labels "tier" `, err: ".Release.Labels.tier has no translation"},
		{in: ` $.Values.region `, want: "var.region"},
		{in: ` $ `, err: "the template variable $ has no translation"},
		{in: ` .Values `, err: ".Values has no translation"},
	} {
		r := newRefs()
		e, err := translator{}.translate(tc.in, &r)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: got %q, %v; want error %q", tc.in, e.text, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case e.text != tc.want:
			t.Errorf("%q: got %s\nwant %s", tc.in, e.text, tc.want)
		}
	}
}

// TestScanActions: a "}}" inside a string, a raw string or a comment does
// not end an action; trim markers are seen.
func TestScanActions(t *testing.T) {
	src := "a {{ printf \"}}\" }} b {{- `}}` -}} c {{/* }} */}} {{ .X"
	acts := scanActions(src)
	var got []string
	for _, a := range acts {
		got = append(got, src[a.start:a.end])
	}
	want := []string{"{{ printf \"}}\" }}", "{{- `}}` -}}", "{{/* }} */}}", "{{ .X"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if !acts[1].trimLeft || !acts[1].trimRight || acts[0].trimLeft {
		t.Errorf("trim markers: %+v", acts)
	}
}

func TestConvertErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		err   string
	}{
		{"nested bases", map[string]string{"helmfile.yaml": "bases: [b.yaml]\n", "b.yaml": "bases: [c.yaml]\n", "c.yaml": "{}\n"}, "b.yaml: a base cannot have bases"},
		{"bad YAML in a part", map[string]string{"helmfile.yaml": "releases: []\n---\nreleases: [\n"}, "helmfile.yaml: part at line 3:"},
		{"missing base", map[string]string{"helmfile.yaml": "bases: [nope.yaml]\n"}, "helmfile.yaml: bases: open"},
		{"not a mapping", map[string]string{"helmfile.yaml": "- a\n"}, "helmfile.yaml: part at line 1 is not a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, c := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Convert(filepath.Join(dir, "helmfile.yaml"))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("got %v, want %q", err, tc.err)
			}
		})
	}
}

// FuzzConvert: no input makes Convert panic.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		"releases:\n  - name: a\n    chart: r/a\n    values:\n      - x: {{ .Values.a | default 1 }}\n",
		"bases: [b.yaml]\n---\n{{ if .Values.x }}\nreleases: []\n{{ end }}\n",
		"environments:\n  default:\n    values: [{a: {{ .Environment.Name }}}]\n---\nreleases:\n  - name: {{ .Values.a }}\n    needs: [x/{{ .Values.a }}]\n    installed: {{ .Values.b }}\n    timeout: {{ .Values.t }}\n",
		"{{ {{ }} }}\n{{- /* x */ -}}\n{{ \"}}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "helmfile.yaml.gotmpl"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("releases: [{name: b, chart: r/b}]\n"), 0o644)
		_, _ = Convert(filepath.Join(dir, "helmfile.yaml.gotmpl"))
	})
}
