package helmfile

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/template"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// TestReleaseTemplatesLeaveNoGoTemplateInHCL is issue 24's acceptance: a
// helmfile whose release templates, merged through YAML anchors, name
// values files with {{`{{ .Release.Name }}`}} is imported with every such
// path resolved per release, and no Go template anywhere in stack.hcl but
// in comments.
func TestReleaseTemplatesLeaveNoGoTemplateInHCL(t *testing.T) {
	res, err := Convert(filepath.Join("testdata", "release-templates", "helmfile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	src := res.Files["stack.hcl"]
	if _, diags := hclsyntax.ParseConfig(src, "stack.hcl", hcl.InitialPos); diags.HasErrors() {
		t.Fatalf("stack.hcl does not parse: %s", diags)
	}
	tokens, diags := hclsyntax.LexConfig(src, "stack.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, tok := range tokens {
		if tok.Type != hclsyntax.TokenComment && bytes.Contains(tok.Bytes, []byte("{{")) {
			t.Errorf("stack.hcl:%d: a Go template outside a comment: %s", tok.Range.Start.Line, tok.Bytes)
		}
	}
	for _, want := range []string{
		`file("values/web/common.yaml")`,
		`file("values/api/common.yaml")`,
		`file("values/api/${environment.name}.yaml")`,
		`sops_file("secrets/api.yaml")`,
	} {
		if !bytes.Contains(src, []byte(want)) {
			t.Errorf("stack.hcl lacks %s", want)
		}
	}
	// What has no translation is listed, once.
	n := 0
	for _, l := range res.LeftByHand {
		if strings.Contains(l, ".Release.Labels.tier") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("{{ .Release.Labels.tier }} listed %d times as left by hand: %q", n, res.LeftByHand)
	}
}

// TestTranslateLogicAgainstGoTemplates: not, and, or, eq, ne translated
// into HCL evaluate as Go's text/template evaluates them, for the values
// tried.
func TestTranslateLogicAgainstGoTemplates(t *testing.T) {
	exprs := []string{
		` not .Values.on `,
		` not .Values.off `,
		` and .Values.on .Values.off `,
		` and .Values.on .Values.on `,
		` or .Values.off .Values.on `,
		` or .Values.off false `,
		` eq .Environment.Name "prod" `,
		` eq .Environment.Name "dev" "prod" `,
		` eq .Environment.Name "dev" `,
		` ne .Environment.Name "prod" `,
		` not (eq .Environment.Name "prod") `,
		` .Values.on | not `,
	}
	data := map[string]any{"Values": map[string]any{"on": true, "off": false}, "Environment": map[string]any{"Name": "prod"}}
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{
		"var":         cty.ObjectVal(map[string]cty.Value{"on": cty.True, "off": cty.False}),
		"environment": cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal("prod")}),
	}}
	for _, in := range exprs {
		var want bytes.Buffer
		if err := template.Must(template.New("").Parse("{{"+in+"}}")).Execute(&want, data); err != nil {
			t.Fatal(err)
		}
		r := newRefs()
		e, err := translator{}.translate(in, &r)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		x, diags := hclsyntax.ParseExpression([]byte(e.text), "x", hcl.InitialPos)
		if diags.HasErrors() {
			t.Errorf("%q → %s: %s", in, e.text, diags)
			continue
		}
		v, diags := x.Value(ctx)
		if diags.HasErrors() {
			t.Errorf("%q → %s: %s", in, e.text, diags)
			continue
		}
		if got := v.True(); want.String() != map[bool]string{true: "true", false: "false"}[got] {
			t.Errorf("%q → %s = %v, Go templates say %s", in, e.text, got, want.String())
		}
	}
	// join of a list, as sprig's.
	r := newRefs()
	e, err := translator{}.translate(` join "," (list "a" "b") `, &r)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := hclsyntax.ParseExpression([]byte(e.text), "x", hcl.InitialPos)
	v, diags := x.Value(&hcl.EvalContext{Functions: map[string]function.Function{"join": stdlib.JoinFunc}})
	if diags.HasErrors() || v.AsString() != "a,b" {
		t.Errorf("join → %s = %#v %s", e.text, v, diags)
	}
}

// TestInstalledDefaultFalseIsOneExpression: installed: {{ x | default
// false }} is count = x == true ? 1 : 0, not the whole of sprig's default.
func TestInstalledDefaultFalseIsOneExpression(t *testing.T) {
	res, err := Convert(filepath.Join("testdata", "release-templates", "helmfile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(res.Files["stack.hcl"], []byte("count = var.enabled == true ? 1 : 0\n")) {
		t.Errorf("stack.hcl:\n%s", res.Files["stack.hcl"])
	}
}

// TestYAMLDirectiveBeforeTheDocument: "%YAML 1.1" then "---" (as a public
// helmfile starts) is one document, not an empty part that fails to parse.
func TestYAMLDirectiveBeforeTheDocument(t *testing.T) {
	dir := t.TempDir()
	src := "%YAML 1.1\n---\nhelmBinary: helm3\nreleases:\n  - name: redis\n    chart: bitnami/redis\n"
	if err := os.WriteFile(filepath.Join(dir, "helmfile.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Convert(filepath.Join(dir, "helmfile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(res.Files["stack.hcl"], []byte(`release "redis" {`)) {
		t.Errorf("stack.hcl:\n%s", res.Files["stack.hcl"])
	}
	// Lines count from the file's first line.
	if !slices.Contains(res.LeftByHand, `helmfile.yaml:3: top-level "helmBinary" is not imported`) {
		t.Errorf("left by hand: %q", res.LeftByHand)
	}
}
