package releases

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

func record(name string, status release.Status, c *chart.Chart, values map[string]any) release.Newest {
	return release.Newest{
		Name: name, Namespace: "ns", Revision: 1, Status: status,
		Release: &release.Release{Name: name, Namespace: "ns", Version: 1, Info: &release.Info{Status: status, Description: "Install complete"}, Chart: c, Config: values, Labels: map[string]string{}},
	}
}

func webChart() *chart.Chart {
	return &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: "v2", Name: "web", Version: "1.0.0"},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte("kind: ConfigMap\n")}},
		Files:     []*chart.File{{Name: "crds/crd.yaml", Data: []byte("kind: CustomResourceDefinition\n")}},
		Values:    map[string]any{"port": float64(9898)},
	}
}

// parse checks that stack.hcl is valid HCL that convoy fmt leaves alone.
func parse(t *testing.T, res *Result) {
	t.Helper()
	src := res.Files["stack.hcl"]
	if _, diags := hclsyntax.ParseConfig(src, "stack.hcl", hcl.InitialPos); diags.HasErrors() {
		t.Fatalf("stack.hcl does not parse: %s\n%s", diags, src)
	}
	if got := hclwrite.Format(src); string(got) != string(src) {
		t.Fatalf("stack.hcl is not formatted:\n%s", src)
	}
}

func TestGenerateWritesChartValuesAndSecrets(t *testing.T) {
	res := Generate([]release.Newest{record("web", release.StatusDeployed, webChart(), map[string]any{
		"replicaCount": float64(2),
		"db":           map[string]any{"host": "db", "password": "hunter2"},
		"apiKey":       "k",
		"list":         []any{map[string]any{"token": "in-a-list"}},
	})}, Options{})
	parse(t, res)
	for _, f := range []string{"charts/web-1.0.0/Chart.yaml", "charts/web-1.0.0/values.yaml", "charts/web-1.0.0/templates/cm.yaml", "charts/web-1.0.0/crds/crd.yaml", "values/web.yaml", "secrets/web.yaml"} {
		if _, ok := res.Files[f]; !ok {
			t.Errorf("%s not written; files: %v", f, keys(res.Files))
		}
	}
	var plain, secret map[string]any
	if err := yaml.Unmarshal(res.Files["values/web.yaml"], &plain); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(res.Files["secrets/web.yaml"], &secret); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(res.Files["values/web.yaml"]), "hunter2") {
		t.Errorf("the password is in the plain values file:\n%s", res.Files["values/web.yaml"])
	}
	wantSecret := map[string]any{"apiKey": "k", "db": map[string]any{"password": "hunter2"}}
	if !reflect.DeepEqual(secret, wantSecret) {
		t.Errorf("secrets/web.yaml = %v, want %v", secret, wantSecret)
	}
	if !strings.Contains(string(res.Files["secrets/web.yaml"]), "sops --encrypt") {
		t.Errorf("secrets/web.yaml does not say to encrypt it with SOPS:\n%s", res.Files["secrets/web.yaml"])
	}
	// replicaCount stays an integer: "2", not "2.0" or "2e+00".
	if !strings.Contains(string(res.Files["values/web.yaml"]), "replicaCount: 2\n") {
		t.Errorf("values/web.yaml:\n%s", res.Files["values/web.yaml"])
	}
	stack := string(res.Files["stack.hcl"])
	for _, want := range []string{`chart     = "./charts/web-1.0.0"`, `file("values/web.yaml")`, `file("secrets/web.yaml")`, "depends_on", `namespace = "ns"`} {
		if !strings.Contains(stack, want) {
			t.Errorf("stack.hcl lacks %s:\n%s", want, stack)
		}
	}
}

func TestSplitSensitiveMergesBackToTheOriginal(t *testing.T) {
	in := map[string]any{
		"auth":   map[string]any{"user": "u", "clientSecret": "s", "nested": map[string]any{"api-key": "k"}},
		"empty":  map[string]any{},
		"tokens": []any{"a"},
		"plain":  "p",
	}
	plain, secret := splitSensitive(in)
	if _, ok := plain["tokens"]; ok {
		t.Errorf("tokens stayed plain")
	}
	merged := merge(plain, secret)
	if !reflect.DeepEqual(merged, in) {
		t.Errorf("merge(plain, secret) = %v, want %v", merged, in)
	}
	if _, s := splitSensitive(map[string]any{"a": "b"}); s != nil {
		t.Errorf("secret = %v for values with no sensitive key", s)
	}
}

func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if am, ok := out[k].(map[string]any); ok {
			if bm, ok := v.(map[string]any); ok {
				out[k] = merge(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

func TestGenerateSkipsWithTheReason(t *testing.T) {
	failed := record("bad", release.StatusFailed, webChart(), nil)
	failed.Release.Info.Description = "Upgrade \"bad\" failed: timed out"
	unreadable := release.Newest{Name: "garbled", Namespace: "ns", Revision: 3, Err: os.ErrInvalid}
	nochart := record("nochart", release.StatusDeployed, nil, nil)
	res := Generate([]release.Newest{failed, unreadable, nochart, record("ok", release.StatusDeployed, webChart(), nil)}, Options{})
	parse(t, res)
	want := map[string]string{
		"bad":     "its newest revision (1) is failed, not deployed: Upgrade \"bad\" failed: timed out",
		"garbled": "its newest record (revision 3) cannot be read: invalid argument",
		"nochart": "its record holds no chart",
	}
	if len(res.Skipped) != len(want) {
		t.Fatalf("skipped %v, want %v", res.Skipped, want)
	}
	for _, s := range res.Skipped {
		if want[s.Name] != s.Reason {
			t.Errorf("%s skipped because %q, want %q", s.Name, s.Reason, want[s.Name])
		}
		if !strings.Contains(string(res.Files["stack.hcl"]), "ns/"+s.Name+": ") {
			t.Errorf("stack.hcl does not list %s as not imported", s.Name)
		}
	}
	if !reflect.DeepEqual(res.Imported, []string{"ns/ok"}) {
		t.Errorf("imported %v", res.Imported)
	}
}

func TestGenerateSelectorAdoptionLabelsAndRepos(t *testing.T) {
	owned := record("owned", release.StatusDeployed, webChart(), nil)
	owned.Release.Labels = map[string]string{release.StackLabel: "team", "tier": "web", "convoy.dev/address": "release.x"}
	mine := record("mine", release.StatusDeployed, webChart(), nil)
	mine.Release.Labels = map[string]string{release.StackLabel: "here", "tier": "web"}
	other := record("other", release.StatusDeployed, webChart(), nil)
	sel, err := labels.Parse("tier=web")
	if err != nil {
		t.Fatal(err)
	}
	res := Generate([]release.Newest{owned, mine, other}, Options{StackName: "here", Selector: sel, Repos: map[string]string{"web": "https://charts.example.com"}, ClusterName: "prod", Context: "prod-ctx"})
	parse(t, res)
	stack := string(res.Files["stack.hcl"])
	for _, want := range []string{`adopt_from_stack = "team"`, `"tier" = "web"`, `repository "web"`, `url = "https://charts.example.com"`, `chart     = "web/web"`, `version   = "1.0.0"`, `cluster   = cluster.prod`, `context = "prod-ctx"`} {
		if !strings.Contains(stack, want) {
			t.Errorf("stack.hcl lacks %s:\n%s", want, stack)
		}
	}
	for _, unwanted := range []string{`release "other"`, "convoy.dev/address", `adopt_from_stack = "here"`, "charts/web-1.0.0"} {
		if strings.Contains(stack, unwanted) {
			t.Errorf("stack.hcl has %s:\n%s", unwanted, stack)
		}
	}
	if strings.Count(stack, "repository \"") != 1 {
		t.Errorf("one repository block wanted:\n%s", stack)
	}
}

func TestHostileRecordsStayInsideTheDirectory(t *testing.T) {
	evil := func(name string) *chart.Chart {
		c := webChart()
		c.Templates = append(c.Templates, &chart.File{Name: name, Data: []byte("x")})
		return c
	}
	versioned := webChart()
	versioned.Metadata.Version = "../../../../tmp/x"
	versioned.Metadata.Name = "/etc"
	huge := webChart()
	huge.Files = append(huge.Files, &chart.File{Name: "big", Data: make([]byte, maxChartBytes)})
	records := []release.Newest{
		record("dotdot", release.StatusDeployed, evil("../../../escape.yaml"), nil),
		record("abs", release.StatusDeployed, evil("/tmp/escape.yaml"), nil),
		record("backslash", release.StatusDeployed, evil(`..\..\escape.yaml`), nil),
		record("huge", release.StatusDeployed, huge, nil),
		record("name\"}\nrelease \"x", release.StatusDeployed, versioned, map[string]any{"k": "${file(\"/etc/passwd\")} %{ if true }"}),
		record("nilfile", release.StatusDeployed, &chart.Chart{Metadata: &chart.Metadata{Name: "n", Version: "1"}, Templates: []*chart.File{nil}}, nil),
	}
	res := Generate(records, Options{})
	parse(t, res)
	skipped := map[string]string{}
	for _, s := range res.Skipped {
		skipped[s.Name] = s.Reason
	}
	for _, n := range []string{"dotdot", "abs", "backslash", "huge"} {
		if skipped[n] == "" {
			t.Errorf("%s was not skipped (skipped: %v)", n, skipped)
		}
	}
	for p := range res.Files {
		if !filepath.IsLocal(filepath.FromSlash(p)) || strings.Contains(p, "..") {
			t.Errorf("file %q leaves the directory", p)
		}
	}
	stack := string(res.Files["stack.hcl"])
	if strings.Contains(stack, `${file(`) || strings.Contains(stack, `%{ if`) {
		t.Errorf("a template from a record is live in stack.hcl:\n%s", stack)
	}
	dir := t.TempDir()
	if err := res.Write(filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := res.Write(filepath.Join(dir, "out")); err == nil {
		t.Error("a second write into a directory holding stack.hcl was not refused")
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Errorf("written next to the stack directory: %v %v", entries, err)
	}
}

// A symbolic link in the directory cannot send a file elsewhere.
func TestWriteDoesNotFollowLinksOut(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "charts")); err != nil {
		t.Fatal(err)
	}
	res := Generate([]release.Newest{record("web", release.StatusDeployed, webChart(), nil)}, Options{})
	if err := res.Write(dir); err == nil {
		t.Error("writing through a link out of the directory did not fail")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the directory: %v", entries)
	}
}

func TestHCLString(t *testing.T) {
	for in, want := range map[string]string{
		`a"b`:        `"a\"b"`,
		"${x}":       `"$${x}"`,
		"%{x}":       `"%%{x}"`,
		"$x %":       `"$x %"`,
		"a\nb\x1b":   `"a\nb\u001b"`,
		`back\slash`: `"back\\slash"`,
	} {
		got := hclString(in)
		if got != want {
			t.Errorf("hclString(%q) = %s, want %s", in, got, want)
		}
		expr, diags := hclsyntax.ParseExpression([]byte(got), "x", hcl.InitialPos)
		if diags.HasErrors() {
			t.Errorf("%s: %s", got, diags)
			continue
		}
		v, diags := expr.Value(nil)
		if diags.HasErrors() || v.AsString() != in {
			t.Errorf("%s evaluates to %#v (%s), want %q", got, v, diags, in)
		}
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// With -A, releases of one name in two namespaces get two blocks, each
// naming its release and its own values file.
func TestGenerateSameNameInTwoNamespaces(t *testing.T) {
	a := record("web", release.StatusDeployed, webChart(), map[string]any{"a": "1"})
	b := record("web", release.StatusDeployed, webChart(), map[string]any{"b": "2"})
	b.Namespace, b.Release.Namespace = "other", "other"
	res := Generate([]release.Newest{a, b}, Options{})
	parse(t, res)
	stack := string(res.Files["stack.hcl"])
	for _, want := range []string{`release "web_ns" {`, `release "web_other" {`, `name      = "web"`, `file("values/web_ns.yaml")`, `file("values/web_other.yaml")`} {
		if !strings.Contains(stack, want) {
			t.Errorf("stack.hcl lacks %s:\n%s", want, stack)
		}
	}
	if string(res.Files["values/web_other.yaml"]) != "b: \"2\"\n" {
		t.Errorf("values/web_other.yaml = %q", res.Files["values/web_other.yaml"])
	}
}

// A chart whose Chart.yaml annotates its repository is named there.
func TestGenerateRepositoryAnnotation(t *testing.T) {
	c := webChart()
	c.Metadata.Annotations = map[string]string{RepoAnnotation: "oci://registry.example.com/charts"}
	res := Generate([]release.Newest{record("web", release.StatusDeployed, c, nil)}, Options{})
	parse(t, res)
	stack := string(res.Files["stack.hcl"])
	if !strings.Contains(stack, `url = "oci://registry.example.com/charts"`) || !strings.Contains(stack, `chart     = "web/web"`) {
		t.Errorf("stack.hcl:\n%s", stack)
	}
	for p := range res.Files {
		if strings.HasPrefix(p, "charts/") {
			t.Errorf("%s written though the chart names its repository", p)
		}
	}
}

// FuzzGenerate: no record content makes Generate panic, write a file
// outside the directory, or write a stack.hcl that does not parse.
func FuzzGenerate(f *testing.F) {
	f.Add("web", "web", "1.0.0", "templates/a.yaml", "key", "${x} %{ if }")
	f.Add("a.b", "../x", "../../y", "../../../etc/passwd", "password", "\x00\"\\")
	f.Add("", "", "", "/abs", "", "")
	f.Fuzz(func(t *testing.T, name, chartName, version, file, key, value string) {
		c := &chart.Chart{
			Metadata:  &chart.Metadata{Name: chartName, Version: version, Annotations: map[string]string{}},
			Templates: []*chart.File{{Name: file, Data: []byte(value)}},
			Values:    map[string]any{key: value},
		}
		r := record(name, release.StatusDeployed, c, map[string]any{key: value, "nested": map[string]any{key: []any{value}}})
		r.Release.Labels = map[string]string{key: value, release.StackLabel: value}
		res := Generate([]release.Newest{r}, Options{ClusterName: name, Context: value})
		if _, diags := hclsyntax.ParseConfig(res.Files["stack.hcl"], "stack.hcl", hcl.InitialPos); diags.HasErrors() {
			t.Fatalf("stack.hcl does not parse: %s\n%s", diags, res.Files["stack.hcl"])
		}
		for p := range res.Files {
			if !filepath.IsLocal(filepath.FromSlash(p)) || strings.Contains(p, "\\") {
				t.Fatalf("file %q leaves the directory", p)
			}
		}
	})
}

// A release no stack wrote (helm's) is imported with adopt = true: the
// stack takes it over only when it says so; one of this stack's or
// another's is not.
func TestGenerateAdoptsHelmReleases(t *testing.T) {
	helm := record("helm", release.StatusDeployed, webChart(), nil)
	owned := record("owned", release.StatusDeployed, webChart(), nil)
	owned.Release.Labels = map[string]string{release.StackLabel: "team"}
	res := Generate([]release.Newest{helm, owned}, Options{StackName: "here"})
	parse(t, res)
	stack := string(res.Files["stack.hcl"])
	blocks := strings.Split(stack, "release \"")
	for _, b := range blocks[1:] {
		name, _, _ := strings.Cut(b, "\"")
		if got, want := regexp.MustCompile(`(?m)^  adopt +=`).MatchString(b), name == "helm"; got != want {
			t.Errorf("release %s: adopt = true written: %v, want %v:\n%s", name, got, want, b)
		}
	}
}
