package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func remoteStack(ns, repoURL, registry, workerDigest, webVersion string) string {
	return fmt.Sprintf(`
stack "remote" {
  default_namespace = %[1]q
}
repository "charts" {
  url = %[2]q
}
release "web" {
  chart   = "charts/web"
  version = %[5]q
}
release "api" {
  chart   = "oci://%[3]s/charts/api"
  version = "^1.0"
}
release "worker" {
  chart = "oci://%[3]s/charts/worker@%[4]s"
}
`, ns, repoURL, registry, workerDigest, webVersion)
}

// The acceptance of chart sources: one release from an HTTP repository,
// two from a registry (by constraint and by digest); init locks them,
// plan and apply run offline from the cache, a newly published version
// changes nothing until init --upgrade, and then the plan shows it.
func TestInitLocksRemoteChartsAndPlanRunsOffline(t *testing.T) {
	t.Setenv("CONVOY_CACHE_DIR", filepath.Join(t.TempDir(), "charts"))
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	repo := sourcetest.NewHTTPRepo(t, false)
	repo.Publish(t, "web", "1.2.0", "1.4.0", "2.0.0")
	reg := sourcetest.StartRegistry(t, "", "")
	charts := t.TempDir()
	reg.Push(t, sourcetest.Package(t, charts, "api", "1.0.0"), "charts")
	reg.Push(t, sourcetest.Package(t, charts, "api", "1.1.0"), "charts")
	reg.Push(t, sourcetest.Package(t, charts, "api", "2.0.0"), "charts")
	workerDigest := reg.Push(t, sourcetest.Package(t, charts, "worker", "0.3.0"), "charts")
	reg.Push(t, sourcetest.Package(t, charts, "worker", "0.4.0"), "charts")
	dir := writeStack(t, remoteStack(ns, repo.URL(), reg.Host, workerDigest, "^1.2.0"))

	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code == 0 || !strings.Contains(errOut, "not in convoy.lock.hcl; run `convoy init`") {
		t.Fatalf("plan before init: exit %d\n%s\n%s", code, out, errOut)
	}

	code, out, errOut = runConvoy(t, "init", "-C", dir)
	if code != 0 {
		t.Fatalf("init: exit %d\n%s\n%s", code, out, errOut)
	}
	lock, diags := source.ReadLock(dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for name, want := range map[string]string{"web": "1.4.0", "api": "1.1.0", "worker": "0.3.0"} {
		if got := lock.Releases[name]; got.Version != want || !strings.HasPrefix(got.Digest, "sha256:") {
			t.Errorf("lock of %s: %+v, want version %s", name, got, want)
		}
	}
	if lock.Releases["worker"].Manifest != workerDigest {
		t.Errorf("worker locked to %s, want %s", lock.Releases["worker"].Manifest, workerDigest)
	}

	offline := func(step string, args ...string) (int, string) {
		t.Helper()
		httpBefore, ociBefore := len(repo.Requests()), reg.Requests()
		code, out, errOut := runConvoy(t, args...)
		if n, m := len(repo.Requests())-httpBefore, reg.Requests()-ociBefore; n != 0 || m != 0 {
			t.Fatalf("%s made %d repository and %d registry requests (%v)", step, n, m, repo.Requests()[httpBefore:])
		}
		if code != 0 && code != 2 {
			t.Fatalf("%s: exit %d\n%s\n%s", step, code, out, errOut)
		}
		return code, out
	}
	_, out = offline("plan", "plan", "-C", dir, "--kubeconfig", kc)
	for _, want := range []string{"chart: web 1.4.0", "chart: api 1.1.0", "chart: worker 0.3.0", "Plan: 3 to install"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	offline("apply", "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve")
	for name, want := range map[string]string{"web-web": "1.4.0", "api-api": "1.1.0", "worker-worker": "0.3.0"} {
		cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || cm.Data["chartVersion"] != want {
			t.Fatalf("configmap %s: %v %v, want chart version %s", name, cm.Data, err, want)
		}
	}
	code, out = offline("second plan", "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 0 || !strings.Contains(out, "No changes.") {
		t.Fatalf("second plan: exit %d\n%s", code, out)
	}

	// 1.5.0 is published: nothing changes until init --upgrade.
	repo.Publish(t, "web", "1.5.0")
	code, out = offline("plan after publishing", "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 0 {
		t.Fatalf("plan changed before init --upgrade:\n%s", out)
	}
	if code, out, errOut := runConvoy(t, "init", "-C", dir); code != 0 || !strings.Contains(out, "release.web: charts/web 1.4.0 (locked)") {
		t.Fatalf("init without --upgrade: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runConvoy(t, "init", "-C", dir, "--upgrade")
	if code != 0 || !strings.Contains(out, "release.web: charts/web ^1.2.0 → 1.5.0 (was 1.4.0)") {
		t.Fatalf("init --upgrade: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out = offline("plan after upgrade", "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "chart: web 1.4.0 → web 1.5.0") || !strings.Contains(out, "1 to upgrade") {
		t.Fatalf("plan after init --upgrade: exit %d\n%s", code, out)
	}

	// A constraint the lock no longer satisfies is refused with a way out.
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(remoteStack(ns, repo.URL(), reg.Host, workerDigest, "^2.0.0")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code == 0 || !strings.Contains(errOut, `the locked version 1.5.0 does not satisfy the constraint "^2.0.0"; run `+"`convoy init`") {
		t.Fatalf("plan with a changed constraint: exit %d\n%s\n%s", code, out, errOut)
	}

	// cache clean empties the cache; plan then asks for init.
	if code, out, errOut := runConvoy(t, "cache", "clean"); code != 0 {
		t.Fatalf("cache clean: exit %d\n%s\n%s", code, out, errOut)
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(remoteStack(ns, repo.URL(), reg.Host, workerDigest, "^1.2.0")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code == 0 || !strings.Contains(errOut, "is locked but not in the chart cache") {
		t.Fatalf("plan after cache clean: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "init", "-C", dir); code != 0 {
		t.Fatalf("init refilling the cache: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out := offline("plan after refill", "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 2 {
		t.Fatalf("plan after refill: exit %d\n%s", code, out)
	}
}

func TestInitErrorsNameTheChartAndHideSecrets(t *testing.T) {
	t.Setenv("CONVOY_CACHE_DIR", filepath.Join(t.TempDir(), "charts"))
	repo := sourcetest.NewHTTPRepo(t, false)
	repo.Publish(t, "web", "1.2.0", "2.0.0")
	repo.Wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ci" || p != "right-s3cret" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
	stack := func(password, version string) string {
		return fmt.Sprintf(`
variable "pw" {
  sensitive = true
  default   = %q
}
repository "charts" {
  url      = %q
  username = "ci"
  password = var.pw
}
release "web" {
  chart   = "charts/web"
  version = %q
}
`, password, repo.URL(), version)
	}
	dir := writeStack(t, stack("wrong-s3cret", "^1.0.0"))
	code, out, errOut := runConvoy(t, "init", "-C", dir)
	if code == 0 || !strings.Contains(errOut, "401") || strings.Contains(out+errOut, "s3cret") {
		t.Fatalf("wrong password: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, source.LockFileName)); !os.IsNotExist(err) {
		t.Fatalf("a failed init wrote the lock file: %v", err)
	}

	os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(stack("right-s3cret", "^3.0.0")), 0o644)
	code, out, errOut = runConvoy(t, "init", "-C", dir)
	for _, want := range []string{"release.web", `chart "web"`, `repository "charts"`, `"^3.0.0"`, "available: 2.0.0, 1.2.0"} {
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("no match: exit %d, stderr lacks %q:\n%s", code, want, errOut)
		}
	}
	if strings.Contains(out+errOut, "s3cret") {
		t.Fatalf("output leaks the password:\n%s\n%s", out, errOut)
	}

	os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(stack("right-s3cret", "^1.0.0")), 0o644)
	if code, out, errOut := runConvoy(t, "init", "-C", dir); code != 0 || strings.Contains(out+errOut, "s3cret") {
		t.Fatalf("init: exit %d\n%s\n%s", code, out, errOut)
	}
	lock, _ := os.ReadFile(filepath.Join(dir, source.LockFileName))
	if strings.Contains(string(lock), "s3cret") || !strings.Contains(string(lock), `version    = "1.2.0"`) {
		t.Fatalf("lock file:\n%s", lock)
	}
}

// A local chart whose charts/ lacks its dependencies gets them as
// `helm dependency build` would: from an HTTP repository and a registry
// (locked by init, then read from the cache) and from file://.
func TestInitLocksDependenciesOfALocalChart(t *testing.T) {
	t.Setenv("CONVOY_CACHE_DIR", filepath.Join(t.TempDir(), "charts"))
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	repo := sourcetest.NewHTTPRepo(t, false)
	repo.Publish(t, "lib", "1.0.0", "1.3.0", "2.0.0")
	reg := sourcetest.StartRegistry(t, "", "")
	reg.Push(t, sourcetest.Package(t, t.TempDir(), "api", "0.9.0"), "charts")

	dir := writeStack(t, fmt.Sprintf(`
stack "local" {
  default_namespace = %q
}
release "app" {
  chart = "./app"
}
`, ns))
	sourcetest.WriteChart(t, dir, "common", "0.1.0", "")
	sourcetest.WriteChart(t, dir, "app", "1.0.0", fmt.Sprintf(`dependencies:
- name: lib
  version: ^1.0.0
  repository: %s
- name: api
  version: "*"
  repository: oci://%s/charts
- name: common
  version: 0.1.0
  repository: file://../common
`, repo.URL(), reg.Host))

	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code == 0 || !strings.Contains(errOut, "lacks dependencies lib, api in charts/") || !strings.Contains(errOut, "run `convoy init`") {
		t.Fatalf("plan before init: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runConvoy(t, "init", "-C", dir)
	if code != 0 || !strings.Contains(out, "dependency lib 1.3.0") || !strings.Contains(out, "dependency api 0.9.0") {
		t.Fatalf("init: exit %d\n%s\n%s", code, out, errOut)
	}
	lock, diags := source.ReadLock(dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if e := lock.Releases["app"]; e.Source != source.LocalSource || len(e.Dependencies) != 2 {
		t.Fatalf("lock entry %+v", e)
	}
	httpBefore, ociBefore := len(repo.Requests()), reg.Requests()
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, cm := range []string{"app-app", "app-lib", "app-api", "app-common"} {
		if !strings.Contains(out, "ConfigMap "+ns+"/"+cm) {
			t.Errorf("plan lacks ConfigMap %s:\n%s", cm, out)
		}
	}
	if n, m := len(repo.Requests())-httpBefore, reg.Requests()-ociBefore; n != 0 || m != 0 {
		t.Fatalf("plan made %d repository and %d registry requests", n, m)
	}
	// A second init keeps the lock without fetching anything.
	if code, out, errOut := runConvoy(t, "init", "-C", dir); code != 0 || len(repo.Requests()) != httpBefore || reg.Requests() != ociBefore {
		t.Fatalf("second init: exit %d, %d requests\n%s\n%s", code, len(repo.Requests())-httpBefore, out, errOut)
	}
}

func TestInitUpgradeReplacesABrokenLockFile(t *testing.T) {
	t.Setenv("CONVOY_CACHE_DIR", filepath.Join(t.TempDir(), "charts"))
	repo := sourcetest.NewHTTPRepo(t, false)
	repo.Publish(t, "web", "1.0.0")
	dir := writeStack(t, fmt.Sprintf("repository \"charts\" {\n  url = %q\n}\nrelease \"web\" {\n  chart = \"charts/web\"\n}\n", repo.URL()))
	os.WriteFile(filepath.Join(dir, source.LockFileName), []byte("release \"web\" {\n  chart = \n"), 0o644)
	if code, out, errOut := runConvoy(t, "init", "-C", dir); code == 0 || !strings.Contains(errOut, "convoy.lock.hcl") {
		t.Fatalf("init with a broken lock file: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := runConvoy(t, "init", "-C", dir, "--upgrade")
	if code != 0 || !strings.Contains(errOut, "Warning: ignoring the unreadable convoy.lock.hcl") {
		t.Fatalf("init --upgrade: exit %d\n%s\n%s", code, out, errOut)
	}
	if l, diags := source.ReadLock(dir); diags.HasErrors() || l.Releases["web"].Version != "1.0.0" {
		t.Fatalf("rewritten lock: %+v %v", l, diags)
	}
}
