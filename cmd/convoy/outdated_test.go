package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
)

// outdatedStack has odd formatting and comments that --update must keep.
const outdatedStack = `# Four charts from two places.
stack "shop" {
  default_namespace = "shop"
}

repository "charts" {
  url = %[1]q
}

release "web"   {
  chart   =     "charts/web"   # the storefront
  // reviewed monthly
  version   =    "^1.2.0"     # keep me
}

release  "old" {
	chart = "charts/old"
	version = "1.0.0"
}

/* from the registry */
release "api" {
  chart   = "oci://%[2]s/charts/api"
  version = "~1.0.0"
}
release "worker" {
  chart   = "oci://%[2]s/charts/worker"
  version = "0.3.0" // pinned
}
`

type outdatedDoc struct {
	Releases []outdatedJSON `json:"releases"`
}

func runOutdated(t *testing.T, args ...string) (int, outdatedDoc, string) {
	t.Helper()
	code, out, errOut := runConvoy(t, append([]string{"outdated", "--json"}, args...)...)
	var doc outdatedDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("outdated --json: exit %d: %v\n%s\n%s", code, err, out, errOut)
	}
	return code, doc, errOut
}

func byRelease(doc outdatedDoc) map[string]outdatedJSON {
	m := map[string]outdatedJSON{}
	for _, r := range doc.Releases {
		m[r.Release] = r
	}
	return m
}

// The acceptance of `convoy outdated`: two charts of a real HTTP
// repository and two of the real registry, each locked by init before
// newer versions were published (pre-releases, latest, main, nightlies, a
// broken index entry and deprecated charts among them). It names the
// newest patch, minor and major of each, asks the repository's index once
// (then revalidates it by ETag), exits 2 with --detailed-exitcode, and
// --update rewrites only the constraints and locks the new versions.
func TestOutdatedNamesNewestVersionsAndUpdates(t *testing.T) {
	t.Setenv("CONVOY_CACHE_DIR", filepath.Join(t.TempDir(), "charts"))
	repo := sourcetest.NewHTTPRepo(t, false)
	var notModified atomic.Int32
	repo.Wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if strings.HasSuffix(r.URL.Path, "/index.yaml") {
			// http.ServeContent answers If-None-Match with 304.
			data, _ := os.ReadFile(filepath.Join(repo.Dir, "index.yaml"))
			w.Header().Set("ETag", fmt.Sprintf(`"%d"`, len(data)))
			if r.Header.Get("If-None-Match") == fmt.Sprintf(`"%d"`, len(data)) {
				notModified.Add(1)
			}
		}
		next.ServeHTTP(w, r)
	})
	repo.Publish(t, "web", "1.2.0")
	repo.Publish(t, "old", "1.0.0")
	reg := sourcetest.StartRegistry(t, "", "")
	charts := t.TempDir()
	reg.Push(t, sourcetest.Package(t, charts, "api", "1.0.0"), "charts")
	reg.Push(t, sourcetest.Package(t, charts, "worker", "0.3.0"), "charts")
	src := fmt.Sprintf(outdatedStack, repo.URL(), reg.Host)
	dir := writeStack(t, src)
	if code, out, errOut := runConvoy(t, "init", "-C", dir); code != 0 {
		t.Fatalf("init: exit %d\n%s\n%s", code, out, errOut)
	}

	// Then newer versions are published.
	repo.Publish(t, "web", "1.2.5", "1.3.0", "2.0.0", "2.1.0-rc.1")
	sourcetest.PackageWithDeps(t, repo.Dir, "old", "1.1.0", "deprecated: true\n")
	repo.Index(t)
	index := filepath.Join(repo.Dir, "index.yaml")
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	extra := `  web:
  - name: web
    version: main
    urls: [web-main.tgz]
  - name: web
    version: latest
  - name: web
    version: {broken: true}
  - name: web
    version: "20240501"
  - name: web
    version: 3.0.0-nightly.20240501
`
	if !strings.Contains(string(data), "\n  web:\n") {
		t.Fatalf("index layout:\n%s", data)
	}
	if err := os.WriteFile(index, []byte(strings.Replace(string(data), "  web:\n", extra, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1.0.1", "1.1.0", "2.0.0", "3.0.0-beta.1"} {
		reg.Push(t, sourcetest.Package(t, charts, "api", v), "charts")
	}
	reg.Tag(t, "charts/api", "3.0.0-beta.1", "latest")
	reg.Tag(t, "charts/api", "1.1.0", "main")
	reg.Push(t, sourcetest.PackageWithDeps(t, charts, "worker", "0.4.0", "deprecated: true\n"), "charts")

	before := repo.Count("/index.yaml")
	code, doc, errOut := runOutdated(t, "-C", dir, "--detailed-exitcode")
	if code != 2 {
		t.Fatalf("exit %d, want 2 (outdated)\n%s", code, errOut)
	}
	if n := repo.Count("/index.yaml") - before; n != 1 {
		t.Errorf("the repository's index was fetched %d times for its two charts, want once", n)
	}
	want := map[string]outdatedJSON{
		"web":    {Locked: "1.2.0", Wanted: "1.3.0", LatestPatch: "1.2.5", LatestMinor: "1.3.0", LatestMajor: "2.0.0", Outdated: true},
		"old":    {Locked: "1.0.0", Wanted: "1.0.0", LatestPatch: "1.0.0", LatestMinor: "1.1.0", LatestMajor: "1.1.0", Outdated: true, Deprecated: true},
		"api":    {Locked: "1.0.0", Wanted: "1.0.1", LatestPatch: "1.0.1", LatestMinor: "1.1.0", LatestMajor: "2.0.0", Outdated: true},
		"worker": {Locked: "0.3.0", Wanted: "0.3.0", LatestPatch: "0.3.0", LatestMinor: "0.4.0", LatestMajor: "0.4.0", Outdated: true, Deprecated: true},
	}
	got := byRelease(doc)
	for name, w := range want {
		g := got[name]
		if g.Error != "" {
			t.Errorf("%s: error %s", name, g.Error)
		}
		g.Release, g.Chart, g.Source, g.Constraint, g.File, g.Line, g.Skipped = "", "", "", "", "", 0, nil
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got  %+v\n want %+v", name, g, w)
		}
	}
	if r := got["web"]; r.File != filepath.Join(dir, "stack.hcl") || r.Line != 10 {
		t.Errorf("web is at %s:%d, want stack.hcl:10", r.File, r.Line)
	}
	if sk := got["web"].Skipped; len(sk) != 1 || !strings.Contains(sk[0], "entry 3 of \"web\"") {
		t.Errorf("skipped entries of web: %q", sk)
	}
	if !strings.Contains(errOut, "Warning: release.web") || !strings.Contains(errOut, "skipped entry 3") {
		t.Errorf("no warning of the broken index entry:\n%s", errOut)
	}

	// A second run revalidates the index: 304, no new body.
	before304 := notModified.Load()
	if code, _, errOut := runOutdated(t, "-C", dir); code != 0 {
		t.Fatalf("second run: exit %d\n%s", code, errOut)
	}
	if notModified.Load() != before304+1 {
		t.Errorf("the second run's index request was not revalidated by ETag (%d 304s)", notModified.Load()-before304)
	}

	// The text view names the same.
	code, out, _ := runConvoy(t, "outdated", "-C", dir)
	if code != 0 || !strings.Contains(out, "release.old") || !strings.Contains(out, "outdated, deprecated") {
		t.Errorf("text view: exit %d\n%s", code, out)
	}

	// --update: only the constraints change; the lock follows.
	code, doc, errOut = runOutdated(t, "-C", dir, "--update", "--to", "major")
	if code != 0 {
		t.Fatalf("--update: exit %d\n%s", code, errOut)
	}
	after, err := os.ReadFile(filepath.Join(dir, "stack.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	wantSrc := src
	for old, nu := range map[string]string{`"^1.2.0"`: `"^2.0.0"`, `"1.0.0"`: `"1.1.0"`, `"~1.0.0"`: `"~2.0.0"`, `"0.3.0"`: `"0.4.0"`} {
		wantSrc = strings.Replace(wantSrc, old, nu, 1)
	}
	if string(after) != wantSrc {
		t.Errorf("--update rewrote more than the constraints:\n%s\nwant:\n%s", after, wantSrc)
	}
	lock, diags := source.ReadLock(dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for name, v := range map[string]string{"web": "2.0.0", "old": "1.1.0", "api": "2.0.0", "worker": "0.4.0"} {
		if lock.Releases[name].Version != v {
			t.Errorf("lock of %s: %s, want %s", name, lock.Releases[name].Version, v)
		}
	}
	if code, doc, errOut = runOutdated(t, "-C", dir, "--detailed-exitcode"); code != 0 {
		t.Errorf("after --update: exit %d, want 0 (current)\n%+v\n%s", code, doc, errOut)
	}
}

// A repository that answers 500, and ones that do not answer (HTTP and
// OCI), are reported on their releases; the others still print, and the
// command exits 1.
func TestOutdatedReportsAFailingRepository(t *testing.T) {
	t.Setenv("CONVOY_CACHE_DIR", filepath.Join(t.TempDir(), "charts"))
	good := sourcetest.NewHTTPRepo(t, false)
	good.Publish(t, "web", "1.0.0", "1.1.0")
	bad := sourcetest.NewHTTPRepo(t, false)
	bad.Wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		http.Error(w, "down for maintenance", http.StatusInternalServerError)
	})
	dir := writeStack(t, fmt.Sprintf(`
repository "good" {
  url = %q
}
repository "bad" {
  url = %q
}
release "web" {
  chart   = "good/web"
  version = "1.0.0"
}
release "db" {
  chart   = "bad/db"
  version = "^1.0.0"
}
release "gone" {
  chart   = "oci://127.0.0.1:1/charts/gone"
  version = "^1.0.0"
}
repository "away" {
  url = "http://127.0.0.1:1/charts"
}
release "far" {
  chart   = "away/far"
  version = "^1.0.0"
}
`, good.URL(), bad.URL()))
	code, doc, errOut := runOutdated(t, "-C", dir, "--detailed-exitcode")
	if code != 1 {
		t.Errorf("exit %d, want 1\n%s", code, errOut)
	}
	got := byRelease(doc)
	if w := got["web"]; w.Error != "" || w.LatestMinor != "1.1.0" || !w.Outdated {
		t.Errorf("web: %+v", w)
	}
	if d := got["db"]; !strings.Contains(d.Error, "500 Internal Server Error") || d.Line != 12 {
		t.Errorf("db: %+v", d)
	}
	if g := got["gone"]; g.Error == "" {
		t.Errorf("gone: %+v", g)
	}
	// A repository that does not answer at all (connection refused).
	if f := got["far"]; !strings.Contains(f.Error, "127.0.0.1:1") || f.Line != 23 {
		t.Errorf("far: %+v", f)
	}
	if !strings.Contains(errOut, "Error: release.far (") {
		t.Errorf("stderr does not name the unreachable repository's release:\n%s", errOut)
	}
	if !strings.Contains(errOut, "Error: release.db (") || !strings.Contains(errOut, "stack.hcl:12): ") {
		t.Errorf("stderr does not name the failing release at its line:\n%s", errOut)
	}
}

// imagesChart renders a Deployment whose init container and container
// run the images values name, and a CronJob running a third.
func imagesChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "images")
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: images\nversion: 0.1.0\n",
		"templates/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      initContainers:
      - name: init
        image: {{ .Values.init }}
      containers:
      - name: app
        image: {{ .Values.app }}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: {{ .Release.Name }}-job
spec:
  schedule: "@daily"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: job
            image: {{ .Values.job }}
`,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// outdated --images against the real registry: each image the releases
// render, with its tag and the newest tag of the same major its registry
// lists (pre-releases, latest and main ignored), one tag list per
// repository; a tag that is no version is said so; a registry that does
// not answer is reported on its image while the others print, and the
// command exits 1.
func TestOutdatedImages(t *testing.T) {
	t.Setenv("CONVOY_CACHE_DIR", filepath.Join(t.TempDir(), "charts"))
	reg := sourcetest.StartRegistry(t, "", "")
	charts := t.TempDir()
	for _, v := range []string{"1.2.0", "1.2.5", "1.3.0", "1.4.0-rc.1", "2.0.0"} {
		reg.Push(t, sourcetest.Package(t, charts, "web", v), "team")
	}
	reg.Tag(t, "team/web", "2.0.0", "latest")
	reg.Tag(t, "team/web", "1.3.0", "main")
	reg.Push(t, sourcetest.Package(t, charts, "cron", "3.1.0"), "team")
	chartDir := imagesChart(t)
	stack := fmt.Sprintf(`
release "shop" {
  chart  = %[1]q
  values = [{ init = "%[2]s/team/web:latest", app = "%[2]s/team/web:1.2.0", job = "%[2]s/team/cron:3.1.0" }]
}
release "edge" {
  chart  = %[1]q
  values = [{ init = "%[2]s/team/web:1.2.0", app = "127.0.0.1:1/gone/app:1.0.0", job = "%[2]s/team/cron:3.1.0" }]
}
`, chartDir, reg.Host)
	dir := writeStack(t, stack)
	before := reg.Count(http.MethodGet, "/tags/list")
	code, out, errOut := runConvoy(t, "outdated", "-C", dir, "--images", "--json", "--detailed-exitcode")
	if code != 1 {
		t.Errorf("exit %d, want 1 (a registry did not answer)\n%s", code, errOut)
	}
	var doc struct {
		Images []outdatedImageJSON `json:"images"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	type key struct{ release, object, image string }
	got := map[key]outdatedImageJSON{}
	for _, im := range doc.Images {
		got[key{im.Release, im.Object, im.Image}] = im
	}
	web, cron := reg.Host+"/team/web", reg.Host+"/team/cron"
	want := map[key]outdatedImageJSON{
		{"release.shop", "apps/v1 Deployment default/shop", web + ":latest"}:              {Repository: web, Tag: "latest", NotVersion: true},
		{"release.shop", "apps/v1 Deployment default/shop", web + ":1.2.0"}:               {Repository: web, Tag: "1.2.0", Newer: "1.3.0"},
		{"release.shop", "batch/v1 CronJob default/shop-job", cron + ":3.1.0"}:            {Repository: cron, Tag: "3.1.0"},
		{"release.edge", "apps/v1 Deployment default/edge", web + ":1.2.0"}:               {Repository: web, Tag: "1.2.0", Newer: "1.3.0"},
		{"release.edge", "apps/v1 Deployment default/edge", "127.0.0.1:1/gone/app:1.0.0"}: {Repository: "127.0.0.1:1/gone/app", Tag: "1.0.0", Error: "127.0.0.1:1/gone/app: list tags"},
		{"release.edge", "batch/v1 CronJob default/edge-job", cron + ":3.1.0"}:            {Repository: cron, Tag: "3.1.0"},
	}
	if len(got) != len(want) {
		t.Errorf("%d images, want %d: %+v", len(got), len(want), doc.Images)
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("no image %+v", k)
			continue
		}
		if w.Error != "" {
			if !strings.HasPrefix(g.Error, w.Error) {
				t.Errorf("%+v: error %q, want it to start with %q", k, g.Error, w.Error)
			}
			g.Error, w.Error = "", ""
		}
		g.Release, g.Object, g.Image = "", "", ""
		if g != w {
			t.Errorf("%+v:\n got  %+v\n want %+v", k, g, w)
		}
	}
	if n := reg.Count(http.MethodGet, "/tags/list") - before; n != 2 {
		t.Errorf("%d tag lists read, want 2 (team/web and team/cron, once each)", n)
	}
	if !strings.Contains(errOut, "Error: release.edge: 127.0.0.1:1/gone/app:1.0.0: ") {
		t.Errorf("stderr does not name the failing image:\n%s", errOut)
	}

	// Without the failing registry: exit 2, and the text view.
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(strings.ReplaceAll(stack, "127.0.0.1:1/gone/app:1.0.0", cron+":3.1.0")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runConvoy(t, "outdated", "-C", dir, "--images", "--detailed-exitcode")
	if code != 2 {
		t.Errorf("exit %d, want 2 (a newer tag)\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "release.shop") || !strings.Contains(out, "tag is no version") || !strings.Contains(out, "1.3.0") {
		t.Errorf("text view:\n%s", out)
	}
}
