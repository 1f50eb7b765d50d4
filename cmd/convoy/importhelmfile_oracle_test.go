package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"iter"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/stack/config/sopstest"
	"sigs.k8s.io/yaml"
)

// helmfileOracle is helmfile v1.8.0 (hack/build-tools.sh helmfile, which
// hack/test.sh runs while the tests run: devcluster.LocateHelmfile waits for
// it). A missing oracle fails the test, as a missing helm does.
func helmfileOracle(t *testing.T) string {
	t.Helper()
	devtest.SkipShort(t, "the helmfile and helm oracles and the devcluster")
	p, err := devcluster.LocateHelmfile(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The acceptance of convoy import helmfile: three helmfiles in the style
// of public ones, each imported, validated, rendered and planned by
// convoy, and templated by helmfile itself. For every environment, the
// releases convoy renders and plans are the releases helmfile templates,
// with the same objects, field for field.
func TestImportHelmfileMatchesHelmfileTemplate(t *testing.T) {
	hf := helmfileOracle(t)
	helm, err := devcluster.LocateHelm(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CONVOY_CACHE_DIR", filepath.Join(t.TempDir(), "charts"))
	repo := sourcetest.NewHTTPRepo(t, false)
	archives := packageTestCharts(t)
	for _, a := range archives {
		if err := copyFile(a, filepath.Join(repo.Dir, filepath.Base(a))); err != nil {
			t.Fatal(err)
		}
	}
	repo.Index(t)
	kc := cluster.Kubeconfig()

	// (a) one helmfile, two environments: environment values files, an
	// inline environment value, templated namespaces and values, needs,
	// labels, helmDefaults, and a release installed in production only.
	t.Run("multi-environment", func(t *testing.T) {
		staging, production := cluster.Namespace(t), cluster.Namespace(t)
		src := fixture(t, "multienv", map[string]string{"@CHARTS@": repo.URL(), "@NS_STAGING@": staging, "@NS_PRODUCTION@": production})
		out := importHelmfile(t, filepath.Join(src, "helmfile.yaml.gotmpl"), nil)
		compareWithHelmfile(t, hf, helm, src, "helmfile.yaml.gotmpl", out, "production", kc, []string{production + "/api", production + "/postgres", production + "/web"}, nil)
		compareWithHelmfile(t, hf, helm, src, "helmfile.yaml.gotmpl", out, "staging", kc, []string{staging + "/api", staging + "/postgres"}, nil)
		// web has no instance in staging (count = 0): init --env staging,
		// which ran last, kept its lock entry for production.
		planned := planReleases(t, out, []string{"--env", "production"}, kc)
		if got := planned[production+"/web"].DependsOn; !slices.Equal(got, []string{"release.api"}) {
			t.Errorf("web depends on %v, want [release.api] (from needs)", got)
		}
		if got := planned[production+"/api"].DependsOn; !slices.Equal(got, []string{"release.postgres"}) {
			t.Errorf("api depends on %v, want [release.postgres] (from needs)", got)
		}
	})

	// (b) charts from an OCI registry (a repository with oci: true and a
	// direct oci:// chart) and secrets encrypted with sops/age. helmfile
	// decrypts secrets through the helm-secrets plugin, which the oracle
	// does not have ("plugin secrets not installed"; convoy does not need
	// it, and the tests install no third-party plugin): helmfile templates a copy
	// of the helmfile whose secrets entry is the decrypted file as a
	// values entry, in the same place (after the release's values), while
	// convoy imports and renders the helmfile as written, decrypting with
	// the age key in-process.
	t.Run("oci-and-secrets", func(t *testing.T) {
		reg := sourcetest.StartRegistry(t, "", "")
		for _, a := range archives {
			reg.Push(t, a, "charts")
		}
		key := sopstest.NewKey(t)
		sopstest.UseKeys(t, key)
		ns := cluster.Namespace(t)
		src := fixture(t, "oci", map[string]string{"@REGISTRY@": reg.Direct, "@NS@": ns})
		plain := []byte("auth:\n  password: s3cr3t-from-sops\n")
		writeFile(t, filepath.Join(src, "secrets", "sessions.enc.yaml"), sopstest.Encrypt(t, "sessions.enc.yaml", plain, key))
		out := importHelmfile(t, filepath.Join(src, "helmfile.yaml"), nil)
		hcl := readFile(t, filepath.Join(out, "stack.hcl"))
		if !strings.Contains(hcl, `sops_file("secrets/sessions.enc.yaml")`) {
			t.Errorf("the secrets entry is not a sops_file layer:\n%s", hcl)
		}
		writeFile(t, filepath.Join(src, "secrets", "sessions.yaml"), plain)
		hfText := readFile(t, filepath.Join(src, "helmfile.yaml"))
		oracle := strings.Replace(hfText, "\n    secrets:\n      - secrets/sessions.enc.yaml\n", "\n      - secrets/sessions.yaml\n", 1)
		if oracle == hfText {
			t.Fatal("the oracle's copy of the helmfile still has its secrets entry")
		}
		writeFile(t, filepath.Join(src, "helmfile.oracle.yaml"), []byte(oracle))
		objs := compareWithHelmfile(t, hf, helm, src, "helmfile.oracle.yaml", out, "default", kc, []string{ns + "/accounts", ns + "/sessions"}, nil)
		if s := objs[ns+"/sessions"]["v1 Secret "+ns+"/sessions-auth"]; s == nil {
			t.Errorf("the secret values did not reach the sessions-auth Secret: %v", objs[ns+"/sessions"])
		}
		if code, out, errOut := runConvoy(t, "plan", "-C", out, "--kubeconfig", kc); code != 0 || strings.Contains(out+errOut, "s3cr3t-from-sops") {
			t.Errorf("plan: exit %d, or the decrypted secret shows:\n%s\n%s", code, out, errOut)
		}
	})

	// (c) bases, ---separated parts (the releases part sees the values of
	// the environments a base declares), values templates (.gotmpl) with
	// .Values, .Environment, .Release, requiredEnv and env, and two
	// templates convoy keeps as comments: an if block in the helmfile and a
	// range in a values template. Neither changes anything in these
	// environments (debug is false, frontendEnv empty), so the stack still
	// renders what helmfile does; both are listed as left by hand.
	t.Run("bases-parts-gotmpl", func(t *testing.T) {
		ns, qa := cluster.Namespace(t), cluster.Namespace(t)
		src := fixture(t, "layered", map[string]string{"@CHARTS@": repo.URL(), "@NS@": ns, "@NS_QA@": qa})
		t.Setenv("CONVOY_VAR_FRONTEND_TAG", "9.9.1")
		out := importHelmfile(t, filepath.Join(src, "helmfile.yaml.gotmpl"), []string{
			"helmfile.yaml.gotmpl:21: {{- if .Values.debug }} ...: if block",
			"values/frontend.yaml.gotmpl:10: {{- range $name, $value := .Values.frontendEnv }} ...: range block",
		})
		hcl := readFile(t, filepath.Join(out, "stack.hcl"))
		for _, want := range []string{
			"# LEFT BY HAND (helmfile.yaml.gotmpl:21, if block):\n  # {{- if .Values.debug }}\n  #   - debug: true\n  # {{- end }}\n",
			`variable "FRONTEND_TAG" {`, `atomic  = true`, `timeout = "300s"`,
		} {
			if !strings.Contains(hcl, want) {
				t.Errorf("stack.hcl lacks %q:\n%s", want, hcl)
			}
		}
		tpl := readFile(t, filepath.Join(out, "values", "frontend.yaml.tpl"))
		if !strings.Contains(tpl, "# LEFT BY HAND (values/frontend.yaml.gotmpl:10, range block):\n# {{- range $name, $value := .Values.frontendEnv }}\n") {
			t.Errorf("frontend.yaml.tpl does not keep the range as a comment:\n%s", tpl)
		}
		oracleEnv := []string{"FRONTEND_TAG=9.9.1"}
		compareWithHelmfile(t, hf, helm, src, "helmfile.yaml.gotmpl", out, "default", kc, []string{ns + "/cache", ns + "/frontend"}, oracleEnv)
		compareWithHelmfile(t, hf, helm, src, "helmfile.yaml.gotmpl", out, "qa", kc, []string{qa + "/cache", qa + "/frontend"}, oracleEnv)
	})

	// (d) release templates merged through YAML anchors whose values paths
	// helmfile renders per release ({{`{{ .Release.Name }}`}},
	// {{`{{ .Environment.Name }}`}}), optional values files
	// (missingFileHandler: Warn: values/web/qa.yaml and values/api/default.yaml
	// do not exist), a secret read from the environment (a sensitive
	// variable, masked in the plan), not/eq, and installed from
	// `default false`. Nothing is left by hand, and convoy renders what
	// helmfile templates in both environments.
	t.Run("anchored-release-templates", func(t *testing.T) {
		ns := cluster.Namespace(t)
		src := fixture(t, "anchors", map[string]string{"@CHARTS@": repo.URL(), "@NS@": ns})
		t.Setenv("CONVOY_VAR_API_TOKEN", "tok-4f9a-secret")
		out := importHelmfile(t, filepath.Join(src, "helmfile.yaml.gotmpl"), nil)
		hcl := readFile(t, filepath.Join(out, "stack.hcl"))
		for _, want := range []string{
			`fileexists("values/api/${environment.name}.yaml") ? file("values/api/${environment.name}.yaml") : ""`,
			"sensitive   = true",
			`count = var.webEnabled == true ? 1 : 0`,
		} {
			if !strings.Contains(hcl, want) {
				t.Errorf("stack.hcl lacks %s:\n%s", want, hcl)
			}
		}
		for i, l := range strings.Split(hcl, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "#") && strings.Contains(l, "{{") {
				t.Errorf("stack.hcl:%d: a Go template outside a comment: %s", i+1, l)
			}
		}
		oracleEnv := []string{"API_TOKEN=tok-4f9a-secret"}
		compareWithHelmfile(t, hf, helm, src, "helmfile.yaml.gotmpl", out, "default", kc, []string{ns + "/api", ns + "/web"}, oracleEnv)
		// qa: web is not installed there.
		compareWithHelmfile(t, hf, helm, src, "helmfile.yaml.gotmpl", out, "qa", kc, []string{ns + "/api"}, oracleEnv)
		if code, stdout, stderr := runConvoy(t, "plan", "-C", out, "--kubeconfig", kc); code != 0 || strings.Contains(stdout+stderr, "tok-4f9a-secret") {
			t.Errorf("plan: exit %d, or the token shows:\n%s\n%s", code, stdout, stderr)
		}
	})
}

// packageTestCharts packages testdata/helmfile/charts with the helm
// oracle and returns the archives.
func packageTestCharts(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for _, c := range []string{"app", "db"} {
		src, err := filepath.Abs(filepath.Join("testdata", "helmfile", "charts", c))
		if err != nil {
			t.Fatal(err)
		}
		sourcetest.Helm(t, t.TempDir(), "package", src, "--destination", dir)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.tgz"))
	out = append(out, matches...)
	if len(out) != 2 {
		t.Fatalf("packaged %v", out)
	}
	return out
}

// fixture copies testdata/helmfile/NAME into a temporary directory,
// replacing the @NAME@ markers in every file.
func fixture(t *testing.T, name string, repl map[string]string) string {
	t.Helper()
	root := filepath.Join("testdata", "helmfile", name)
	dst := t.TempDir()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := string(b)
		for k, v := range repl {
			s = strings.ReplaceAll(s, k, v)
		}
		writeFile(t, filepath.Join(dst, rel), []byte(s))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// importHelmfile runs convoy import helmfile into a new directory and
// checks the exact list of what is left by hand, printed and at the head
// of stack.hcl.
func importHelmfile(t *testing.T, file string, leftByHand []string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "stack")
	code, stdout, stderr := runConvoy(t, "import", "helmfile", file, "-o", out)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var got []string
	for _, l := range strings.Split(stderr, "\n") {
		if w, ok := strings.CutPrefix(l, "Warning: "); ok {
			got = append(got, w)
		}
	}
	if !slices.Equal(got, leftByHand) {
		t.Errorf("left by hand:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(leftByHand, "\n"))
	}
	hcl := readFile(t, filepath.Join(out, "stack.hcl"))
	for _, l := range leftByHand {
		if !strings.Contains(hcl, "#   - "+l+"\n") {
			t.Errorf("stack.hcl does not list %q at its head:\n%s", l, hcl)
		}
	}
	if len(leftByHand) == 0 && !strings.Contains(hcl, "# Nothing was left by hand.") {
		t.Errorf("stack.hcl does not say nothing was left by hand:\n%s", hcl)
	}
	return out
}

// compareWithHelmfile checks one environment of an imported stack against
// helmfile: convoy init and validate pass; the releases convoy renders and
// plans are want, which are what helmfile templates; each release's
// objects from convoy render equal helmfile's, field for field (comments,
// Source lines and document separators aside). It returns the objects.
func compareWithHelmfile(t *testing.T, hf, helm, src, file, stack, env, kc string, want []string, oracleEnv []string) map[string]map[string]map[string]any {
	t.Helper()
	// A helmfile without environments runs in its "default" one; the stack
	// then declares none, and takes no --env.
	var envFlag []string
	if strings.Contains(readFile(t, filepath.Join(stack, "stack.hcl")), "\nenvironment \"") {
		envFlag = []string{"--env", env}
	}
	for _, args := range [][]string{{"init", "-C", stack}, {"validate", "-C", stack}} {
		args = append(args, envFlag...)
		if code, out, errOut := runConvoy(t, args...); code != 0 {
			t.Fatalf("%s --env %s: exit %d\n%s\n%s\n%s", args[0], env, code, out, errOut, readFile(t, filepath.Join(stack, "stack.hcl")))
		}
	}
	oracle := helmfileTemplate(t, hf, helm, src, file, env, oracleEnv)
	if got := slices.Sorted(mapKeys(oracle)); !slices.Equal(got, want) {
		t.Fatalf("helmfile -e %s templates %v, want %v", env, got, want)
	}
	code, out, errOut := runConvoy(t, append([]string{"render", "-C", stack}, envFlag...)...)
	if code != 0 {
		t.Fatalf("render --env %s: exit %d\n%s\n%s", env, code, out, errOut)
	}
	rendered := splitRender(t, out)
	if got := slices.Sorted(mapKeys(rendered)); !slices.Equal(got, want) {
		t.Errorf("convoy render --env %s renders %v, helmfile %v", env, got, want)
	}
	for _, rel := range want {
		h, c := oracle[rel], rendered[rel]
		if len(h) == 0 {
			t.Errorf("helmfile -e %s rendered no objects for %s", env, rel)
		}
		if got, w := slices.Sorted(mapKeys(c)), slices.Sorted(mapKeys(h)); !slices.Equal(got, w) {
			t.Errorf("%s (%s): convoy renders %v, helmfile %v", rel, env, got, w)
			continue
		}
		for id, ho := range h {
			if !reflect.DeepEqual(c[id], ho) {
				hy, _ := yaml.Marshal(ho)
				cy, _ := yaml.Marshal(c[id])
				t.Errorf("%s (%s): %s differs\n--- helmfile\n%s\n--- convoy\n%s", rel, env, id, hy, cy)
			}
		}
	}
	planned := planReleases(t, stack, envFlag, kc)
	if got := slices.Sorted(mapKeys(planned)); !slices.Equal(got, want) {
		t.Errorf("convoy plan --env %s plans %v, helmfile templates %v", env, got, want)
	}
	for rel, p := range planned {
		var ids []string
		for _, o := range p.Objects {
			ids = append(ids, o.APIVersion+" "+o.Kind+" "+o.Namespace+"/"+o.Name)
		}
		if w := slices.Sorted(mapKeys(oracle[rel])); !slices.Equal(sortedStrings(ids), w) || p.Action != "install" {
			t.Errorf("plan of %s (%s): %s of %v, helmfile renders %v", rel, env, p.Action, ids, w)
		}
	}
	return rendered
}

type plannedRelease struct {
	Name, Namespace, Action string
	DependsOn               []string `json:"depends_on"`
	Objects                 []struct {
		APIVersion string `json:"api_version"`
		Kind       string
		Namespace  string
		Name       string
	}
}

// planReleases runs convoy plan --json and returns its releases by
// namespace/name.
func planReleases(t *testing.T, stack string, envFlag []string, kc string) map[string]plannedRelease {
	t.Helper()
	code, out, errOut := runConvoy(t, append([]string{"plan", "-C", stack, "--kubeconfig", kc, "--json"}, envFlag...)...)
	if code != 0 {
		t.Fatalf("plan %v: exit %d\n%s\n%s", envFlag, code, out, errOut)
	}
	var doc struct{ Releases []plannedRelease }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	m := map[string]plannedRelease{}
	for _, r := range doc.Releases {
		m[r.Namespace+"/"+r.Name] = r
	}
	return m
}

// helmfileTemplate runs helmfile -e ENV template with the helm oracle,
// one output directory per release, and returns each release's objects
// by identity.
func helmfileTemplate(t *testing.T, hf, helm, dir, file, env string, extraEnv []string) map[string]map[string]map[string]any {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	home := t.TempDir()
	cmd := exec.Command(hf, "--helm-binary", helm, "--file", file, "--environment", env, "template",
		"--output-dir", out, "--output-dir-template", "{{ .OutputDir }}/{{ .Release.Namespace }}/{{ .Release.Name }}")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home+"/config", "HELM_CACHE_HOME="+home+"/cache",
		"HELM_DATA_HOME="+home+"/data", "HELM_REGISTRY_CONFIG="+home+"/registry.json", "HELMFILE_CACHE_HOME="+home+"/helmfile")
	cmd.Env = append(cmd.Env, extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helmfile -e %s template: %v\n%s\n%s", env, err, stdout.String(), stderr.String())
	}
	res := map[string]map[string]map[string]any{}
	nss, err := os.ReadDir(out)
	if err != nil {
		t.Fatalf("helmfile -e %s template wrote nothing: %v\n%s", env, err, stderr.String())
	}
	for _, ns := range nss {
		rels, _ := os.ReadDir(filepath.Join(out, ns.Name()))
		for _, rel := range rels {
			var text strings.Builder
			_ = filepath.WalkDir(filepath.Join(out, ns.Name(), rel.Name()), func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					b, _ := os.ReadFile(p)
					text.WriteString("\n---\n")
					text.Write(b)
				}
				return err
			})
			res[ns.Name()+"/"+rel.Name()] = objectsOf(t, text.String())
		}
	}
	return res
}

// splitRender splits convoy render's output at its "# Release: NAME (NS)"
// lines into each release's objects.
func splitRender(t *testing.T, out string) map[string]map[string]map[string]any {
	t.Helper()
	res := map[string]map[string]map[string]any{}
	var key string
	var text strings.Builder
	flush := func() {
		if key != "" {
			res[key] = objectsOf(t, text.String())
		}
		text.Reset()
	}
	for _, l := range strings.SplitAfter(out, "\n") {
		if h, ok := strings.CutPrefix(l, "# Release: "); ok {
			flush()
			name, ns, _ := strings.Cut(strings.TrimSpace(h), " (")
			key = strings.TrimSuffix(ns, ")") + "/" + name
			continue
		}
		text.WriteString(l)
	}
	flush()
	return res
}

// objectsOf parses a multi-document YAML stream into objects keyed
// "apiVersion Kind namespace/name"; empty documents are skipped, two
// objects with one identity fail the test.
func objectsOf(t *testing.T, text string) map[string]map[string]any {
	t.Helper()
	objs := map[string]map[string]any{}
	for _, doc := range strings.Split("\n"+text, "\n---") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		if len(o) == 0 {
			continue
		}
		md, _ := o["metadata"].(map[string]any)
		id := fmt.Sprintf("%v %v %v/%v", o["apiVersion"], o["kind"], md["namespace"], md["name"])
		if _, dup := objs[id]; dup {
			t.Fatalf("%s twice", id)
		}
		objs[id] = o
	}
	return objs
}

func mapKeys[V any](m map[string]V) iter.Seq[string] { return maps.Keys(m) }

func sortedStrings(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
