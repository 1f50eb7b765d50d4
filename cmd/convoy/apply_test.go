package main

import (
	"context"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

var cluster = devtest.New()

func TestMain(m *testing.M) {
	if os.Getenv(asConvoyEnv) == "1" {
		main() // the test binary run as convoy (asConvoy)
	}
	os.Exit(cluster.Run(m))
}

// appChart is the release engine's test chart; values toggle failures.
func appChart(t *testing.T) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "internal", "cluster", "release", "testdata", "charts", "app"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeStack writes a stack directory with the given HCL.
func writeStack(t *testing.T, hcl string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func threeTier(chart, ns, message string) string {
	return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "db" {
  chart  = %[1]q
  values = [{ message = "db-%[3]s" }]
  wait   = true
}
release "api" {
  chart      = %[1]q
  depends_on = [release.db]
  values     = [{ message = "api-%[3]s" }]
  wait       = true
}
release "web" {
  chart  = %[1]q
  values = [{ message = "web-%[3]s", db = release.api.name }]
  wait   = true
}
`, chart, ns, message)
}

func statusOf(t *testing.T, ns, name string) []*release.Release {
	t.Helper()
	e, err := release.NewEngine(context.Background(), cluster.RESTConfig(), release.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := e.Storage(ns).History(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func revisions(h []*release.Release) string {
	var s []string
	for _, r := range h {
		s = append(s, fmt.Sprintf("%d:%s", r.Version, r.Info.Status))
	}
	return strings.Join(s, " ")
}

func TestApplyStatusHistoryRollbackDestroy(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, threeTier(appChart(t), ns, "v1"))

	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve")
	if code != 0 {
		t.Fatalf("apply exit %d\n%s\n%s", code, out, errOut)
	}
	var deployedAt []int64
	for _, name := range []string{"db", "api", "web"} {
		h := statusOf(t, ns, name)
		if revisions(h) != "1:deployed" {
			t.Fatalf("%s: %s", name, revisions(h))
		}
		if h[0].Labels[release.StackLabel] != ns {
			t.Fatalf("%s record lacks the stack label: %v", name, h[0].Labels)
		}
		deployedAt = append(deployedAt, h[0].Info.LastDeployed.UnixNano())
	}
	if !(deployedAt[0] < deployedAt[1] && deployedAt[1] < deployedAt[2]) {
		t.Fatalf("releases not applied in dependency order db → api → web: %v", deployedAt)
	}

	code, out, _ = runConvoy(t, "status", "-C", dir, "--kubeconfig", kc)
	if code != 0 || len(regexp.MustCompile(`(?m)^(db|api|web)\s+`+ns+`\s+1\s+deployed\s+app-0.1.0\s+1.0`).FindAllString(out, -1)) != 3 {
		t.Fatalf("status exit %d:\n%s", code, out)
	}

	// A changed value upgrades: revision 2, revision 1 superseded.
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(threeTier(appChart(t), ns, "v2")), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("second apply exit %d\n%s\n%s", code, out, errOut)
	}
	if got := revisions(statusOf(t, ns, "api")); got != "1:superseded 2:deployed" {
		t.Fatalf("api after upgrade: %s", got)
	}
	code, out, _ = runConvoy(t, "history", "api", "-C", dir, "--kubeconfig", kc)
	if code != 0 || !strings.Contains(out, "superseded") || !strings.Contains(out, "Upgrade complete") {
		t.Fatalf("history exit %d:\n%s", code, out)
	}

	code, out, errOut = runConvoy(t, "rollback", "api", "1", "-C", dir, "--kubeconfig", kc)
	if code != 0 || !strings.Contains(out, "revision 3") {
		t.Fatalf("rollback exit %d:\n%s\n%s", code, out, errOut)
	}
	cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(context.Background(), "api-config", metav1.GetOptions{})
	if err != nil || cm.Data["message"] != "api-v1" {
		t.Fatalf("rollback not live: %v %v", cm.Data, err)
	}

	// A release removed from the files is uninstalled by the next apply.
	stack := threeTier(appChart(t), ns, "v2")
	stack = stack[:strings.Index(stack, `release "web"`)]
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(stack), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve")
	if code != 0 || !regexp.MustCompile(`(?m)^web\s+`+ns+`\s+uninstall`).MatchString(out) {
		t.Fatalf("apply after removing web: exit %d\n%s\n%s", code, out, errOut)
	}
	if h := statusOf(t, ns, "web"); len(h) != 0 {
		t.Fatalf("web still has records: %s", revisions(h))
	}

	code, out, errOut = runConvoy(t, "destroy", "-C", dir, "--kubeconfig", kc, "--auto-approve")
	if code != 0 || !strings.Contains(out, "Plan: 2 to uninstall.") || !strings.Contains(out, "- release.api (uninstall)") {
		t.Fatalf("destroy exit %d\n%s\n%s", code, out, errOut)
	}
	for _, name := range []string{"db", "api"} {
		if h := statusOf(t, ns, name); len(h) != 0 {
			t.Fatalf("%s still has records after destroy: %s", name, revisions(h))
		}
	}
	assertNoConfigMaps(t, cluster.Client(), ns)
}

func assertNoConfigMaps(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	list, err := c.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" {
			t.Errorf("ConfigMap %s left after destroy", cm.Name)
		}
	}
}

func TestApplyRefusesWithoutAutoApproveOffTerminal(t *testing.T) {
	cluster.Need(t)
	dir := writeStack(t, threeTier(appChart(t), "unused", "v1"))
	code, _, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", cluster.Kubeconfig())
	if code != 1 || !strings.Contains(errOut, "--auto-approve") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestFailedReleaseSkipsDependentsOnly(t *testing.T) {
	ns := cluster.Namespace(t)
	chart := appChart(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "db" {
  chart = %[1]q
}
release "api" {
  chart      = %[1]q
  depends_on = [release.db]
  values     = [{ neverReady = true }]
  wait       = true
  timeout    = "3s"
}
release "web" {
  chart      = %[1]q
  depends_on = [release.api]
}
release "docs" {
  chart = %[1]q
}
`, chart, ns))
	code, out, _ := runConvoy(t, "apply", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{
		`(?m)^db\s+` + ns + `\s+install\s+1\s+deployed`,
		`(?m)^docs\s+` + ns + `\s+install\s+1\s+deployed`,
		`(?m)^api\s+` + ns + `\s+install\s+1\s+failed`,
		`(?m)^web\s+` + ns + `\s+install\s+-\s+skipped \(dependency release.api failed\)`,
		`ContainersNotReady`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("report lacks %s:\n%s", want, out)
		}
	}
	if h := statusOf(t, ns, "web"); len(h) != 0 {
		t.Fatalf("skipped release was installed: %s", revisions(h))
	}
}

func TestStackAtomicRestoresEveryReleaseChangedInTheRun(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	chart := appChart(t)
	stack := func(version string, apiBroken bool, withCache bool) string {
		s := fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "db" {
  chart  = %[1]q
  values = [{ message = "db-%[3]s" }]
}
release "api" {
  chart      = %[1]q
  depends_on = [release.db]
  values     = [{ message = "api-%[3]s", neverReady = %[4]t }]
  wait       = true
  timeout    = "3s"
}
`, chart, ns, version, apiBroken)
		if withCache {
			s += fmt.Sprintf("release \"cache\" {\n  chart = %q\n}\n", chart)
		}
		return s
	}
	dir := writeStack(t, stack("v1", false, false))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("first apply: %d\n%s\n%s", code, out, errOut)
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(stack("v2", true, true)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--atomic")
	if code != 1 {
		t.Fatalf("atomic apply with a failing release: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{`(?m)^db\s.*restored`, `(?m)^api\s.*restored`, `(?m)^cache\s.*restored`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("report lacks %s:\n%s", want, out)
		}
	}
	for name, want := range map[string]string{"db-config": "db-v1", "api-config": "api-v1"} {
		cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || cm.Data["message"] != want {
			t.Errorf("%s not restored: %v %v", name, cm.Data, err)
		}
	}
	if h := statusOf(t, ns, "cache"); len(h) != 0 {
		t.Errorf("release installed by the failed run was not uninstalled: %s", revisions(h))
	}
	if h := statusOf(t, ns, "db"); h[len(h)-1].Info.Status != release.StatusDeployed || h[len(h)-1].Info.Description != "Rollback to 1" {
		t.Errorf("db history: %s", revisions(h))
	}
}

func TestConcurrentAppliesRunOneAtATime(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	stackName := "locked-" + ns[len(ns)-6:]
	dir := writeStack(t, fmt.Sprintf(`
stack %[3]q {
  default_namespace = %[2]q
}
release "slow" {
  chart   = %[1]q
  values  = [{ neverReady = true }]
  wait    = true
  timeout = "6s"
}
`, appChart(t), ns, stackName))
	first := make(chan int)
	go func() {
		code, _, _ := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve")
		first <- code
	}()
	// Start the second apply while the first holds the lock.
	leases := cluster.Client().CoordinationV1().Leases("default")
	devtest.Eventually(t, 20*time.Second, func() bool {
		_, err := leases.Get(context.Background(), stacklock.Name(stackName), metav1.GetOptions{})
		return err == nil
	}, func() string { return "the first apply never took the stack lock" })
	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve")
	if code != 1 || !strings.Contains(errOut, "is locked by") || !strings.Contains(errOut, "pid") || out != "" {
		t.Fatalf("second apply: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	<-first // it fails on its never-ready release; what matters is it ran alone
	if h := statusOf(t, ns, "slow"); len(h) != 1 {
		t.Fatalf("want exactly one run's revision, got %s", revisions(h))
	}
	if _, err := leases.Get(context.Background(), stacklock.Name(stackName), metav1.GetOptions{}); err == nil {
		t.Fatal("the lock outlived the apply that held it")
	}
}

func TestOutputsOfADependencyResolveAtApply(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "db" {
  chart  = %[1]q
  values = [{ message = "from-db" }]
}
release "api" {
  chart  = %[1]q
  values = [{
    message = "${release.db.resources["v1/ConfigMap/db-config"].data.message} at revision ${release.db.revision} of ${length(release.db.resources)} objects"
  }]
}
`, appChart(t), ns))
	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve")
	if code != 0 {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}
	cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(context.Background(), "api-config", metav1.GetOptions{})
	if err != nil || cm.Data["message"] != "from-db at revision 1 of 2 objects" {
		t.Fatalf("output reference resolved to %q (%v)", cm.Data["message"], err)
	}

	// Nothing changed: the plan reads the one object of db's that api's
	// values read, by key, with a GET, not with a second, full list of
	// its kind in the namespace (the one list of ConfigMaps is the
	// metadata the plan proves both releases unchanged with); db's
	// Deployment, only counted, is not read.
	code, out, errOut = runConvoy(t, "apply", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve", "--stats")
	if code != 0 || !strings.Contains(out, "No changes") {
		t.Fatalf("apply without a change: %d\n%s\n%s", code, out, errOut)
	}
	line := regexp.MustCompile(`(?m)^stats: .*$`).FindString(errOut)
	for _, want := range []string{" get configmaps=1 ", " list configmaps=1 "} {
		if !strings.Contains(line+" ", want) {
			t.Errorf("want%s in the stats\n%s", want, line)
		}
	}
	if strings.Contains(line, " get deployments=") {
		t.Errorf("db's Deployment was read, although api only counts it\n%s", line)
	}

	// db with three ConfigMaps of the namespace's four or five (api's,
	// the root CA's), and api reading all of db's objects: db's
	// ConfigMaps are read with one full list, not three GETs; its one
	// Deployment still with a GET.
	src, err := os.ReadFile(filepath.Join(dir, "stack.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	stack := strings.Replace(string(src), `values = [{ message = "from-db" }]`, `values = [{ message = "from-db", extraConfigMap = true, keptConfigMap = true }]`, 1)
	stack = strings.Replace(stack, `of ${length(release.db.resources)} objects`, `of ${join(",", [for k, o in release.db.resources : o.metadata.name])}`, 1)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(stack), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve"); code != 0 {
		t.Fatalf("apply with db's extra ConfigMaps: %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runConvoy(t, "apply", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve", "--stats")
	if code != 0 || !strings.Contains(out, "No changes") {
		t.Fatalf("apply without a change: %d\n%s\n%s", code, out, errOut)
	}
	line = regexp.MustCompile(`(?m)^stats: .*$`).FindString(errOut)
	if strings.Contains(line, " get configmaps=") || !strings.Contains(line+" ", " list configmaps=2 ") || !strings.Contains(line+" ", " get deployments=1 ") {
		t.Errorf("want list configmaps=2 (metadata, then db's in full), no get configmaps, get deployments=1\n%s", line)
	}
}

// TestOutputsReadTheNewestDeployedRevision: when a dependency's history
// holds two deployed records (as a crash between Helm's two record writes
// of an upgrade leaves it), the plan reads the outputs of the newest, as
// the apply does and as Helm takes the newest as the deployed release.
func TestOutputsReadTheNewestDeployedRevision(t *testing.T) {
	ns := cluster.Namespace(t)
	stack := func(msg string) string {
		return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "db" {
  chart  = %[1]q
  values = [{ message = %[3]q }]
}
release "api" {
  chart  = %[1]q
  values = [{ message = "db at revision ${release.db.revision}" }]
}
`, appChart(t), ns, msg)
	}
	dir := writeStack(t, stack("v1"))
	kc := cluster.Kubeconfig()
	for _, msg := range []string{"v1", "v2"} {
		if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(stack(msg)), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
			t.Fatalf("apply %s: %d\n%s\n%s", msg, code, out, errOut)
		}
	}
	cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(context.Background(), "api-config", metav1.GetOptions{})
	if err != nil || cm.Data["message"] != "db at revision 2" {
		t.Fatalf("api's message %q (%v)", cm.Data["message"], err)
	}
	eng, err := release.NewEngine(context.Background(), cluster.RESTConfig(), release.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := eng.Storage(ns).History(context.Background(), "db")
	if err != nil || len(h) != 2 || h[0].Info.Status != release.StatusSuperseded {
		t.Fatalf("db's history: %s (%v)", revisions(h), err)
	}
	h[0].Info.Status = release.StatusDeployed
	if err := eng.Storage(ns).Update(context.Background(), h[0]); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan with two deployed revisions of db: %d, want 0 (no changes)\n%s\n%s", code, out, errOut)
	}
}

func TestSavedPlanAppliesOnceAndStalePlansAreRefused(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, threeTier(appChart(t), ns, "v1"))
	planFile := filepath.Join(t.TempDir(), "plan.cvp")
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--out", planFile); code != 0 {
		t.Fatalf("plan: %d\n%s\n%s", code, out, errOut)
	}
	if fi, err := os.Stat(planFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("plan file mode: %v %v", fi.Mode(), err)
	}
	code, out, errOut := runConvoy(t, "apply", planFile, "-C", dir, "--kubeconfig", kc)
	if code != 0 {
		t.Fatalf("apply of the saved plan: %d\n%s\n%s", code, out, errOut)
	}
	if got := revisions(statusOf(t, ns, "api")); got != "1:deployed" {
		t.Fatalf("api: %s", got)
	}
	// The same plan again: the releases it planned to install exist now.
	code, _, errOut = runConvoy(t, "apply", planFile, "-C", dir, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, "stale") {
		t.Fatalf("re-applying a used plan: exit %d, %s", code, errOut)
	}

	// A plan made before someone edits an affected object is stale too.
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(threeTier(appChart(t), ns, "v2")), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--out", planFile); code != 0 {
		t.Fatalf("plan: %d\n%s\n%s", code, out, errOut)
	}
	cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(context.Background(), "api-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["message"] = "edited by hand"
	if _, err := cluster.Client().CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runConvoy(t, "apply", planFile, "-C", dir, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, "stale") || !strings.Contains(errOut, "api-config") {
		t.Fatalf("applying a plan after an edit: exit %d, %s", code, errOut)
	}
	if got := revisions(statusOf(t, ns, "api")); got != "1:deployed" {
		t.Fatalf("a stale plan changed the release: %s", got)
	}
}

func TestApplyOfAnUnchangedStackChangesNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, threeTier(appChart(t), ns, "v1"))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve")
	if code != 0 {
		t.Fatalf("second apply: %d\n%s\n%s", code, out, errOut)
	}
	for _, name := range []string{"db", "api", "web"} {
		if got := revisions(statusOf(t, ns, name)); got != "1:deployed" {
			t.Errorf("%s: %s (an unchanged release got a new revision)", name, got)
		}
	}
}

func cmData(t *testing.T, ns, name string) (map[string]string, bool) {
	t.Helper()
	cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return nil, false
	}
	return cm.Data, true
}

func TestForceUnlockReleasesAStaleLock(t *testing.T) {
	ns := cluster.Namespace(t)
	stackName := "stale-" + ns[len(ns)-6:]
	dir := writeStack(t, fmt.Sprintf("stack %q {\n  default_namespace = %q\n}\nrelease \"a\" {\n  chart = %q\n}\n", stackName, ns, appChart(t)))
	// A lock left by a run that died.
	if _, err := stacklock.Acquire(context.Background(), cluster.Client(), stackName, stacklock.Options{Command: "convoy apply"}); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve")
	if code != 1 || !strings.Contains(errOut, "is locked by") {
		t.Fatalf("apply against a held lock: exit %d, %s", code, errOut)
	}
	// Its holder (this test's process) is running on this host: left
	// alone, unless forced.
	code, out, errOut := runConvoy(t, "force-unlock", "-C", dir, "--kubeconfig", cluster.Kubeconfig())
	if code != 1 || !strings.Contains(errOut, fmt.Sprintf("whose process (pid %d) is running on this host", os.Getpid())) || !strings.Contains(errOut, "--force") {
		t.Fatalf("force-unlock of a live holder's lock: exit %d, %s%s", code, out, errOut)
	}
	code, out, _ = runConvoy(t, "force-unlock", "--force", "-C", dir, "--kubeconfig", cluster.Kubeconfig())
	if code != 0 || !strings.Contains(out, "Released the lock") || !strings.Contains(out, "pid") {
		t.Fatalf("force-unlock: exit %d, %s", code, out)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve"); code != 0 {
		t.Fatalf("apply after force-unlock: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestUnreachableClusterIsReportedOnce(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: gone, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: gone, context: {cluster: gone, user: u}}]
current-context: gone
`), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := writeStack(t, fmt.Sprintf("release \"a\" {\n  chart = %q\n  count = 20\n}\n", appChart(t)))
	// Refused requests are retried until the bound: a short one keeps the
	// test short.
	for _, cmd := range []string{"plan", "apply"} {
		code, _, errOut := runConvoy(t, cmd, "-C", dir, "--kubeconfig", kc, "--unreachable-timeout", "3s", "--auto-approve")
		if cmd == "plan" {
			code, _, errOut = runConvoy(t, cmd, "-C", dir, "--kubeconfig", kc, "--unreachable-timeout", "3s")
		}
		if code != 1 || strings.Count(errOut, "Error:") != 1 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "the default cluster: ") || !strings.Contains(errOut, "127.0.0.1:1") {
			t.Errorf("%s: exit %d, the unreachable cluster should be named once:\n%s", cmd, code, errOut)
		}
	}
}

func TestInterruptedApplyRecordsWhatHappenedAndUnlocks(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "slow" {
  chart   = %[1]q
  values  = [{ neverReady = true }]
  wait    = true
  timeout = "2m"
}
`, appChart(t), ns))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		var out, errb strings.Builder
		done <- execute(ctx, []string{"apply", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve", "--no-progress"}, streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	}()
	// Interrupt once the release is being waited for.
	devtest.Eventually(t, 30*time.Second, func() bool {
		h := statusOf(t, ns, "slow")
		return len(h) == 1 && h[0].Info.Status == release.StatusPendingInstall
	}, func() string { return "the apply never reached its wait" })
	time.Sleep(300 * time.Millisecond)
	cancel()
	if code := <-done; code != 1 {
		t.Fatalf("interrupted apply exited %d", code)
	}
	h := statusOf(t, ns, "slow")
	if len(h) != 1 || h[0].Info.Status != release.StatusFailed || !strings.Contains(h[0].Info.Description, "interrupted") || !strings.Contains(h[0].Info.Description, "ContainersNotReady") {
		t.Fatalf("record after interruption: %s %q", revisions(h), h[0].Info.Description)
	}
	if _, err := cluster.Client().CoordinationV1().Leases("default").Get(context.Background(), stacklock.Name(ns), metav1.GetOptions{}); err == nil {
		t.Fatal("the interrupted apply kept the stack lock")
	}
}

func TestMissingKubeconfigIsExplained(t *testing.T) {
	dir := writeStack(t, fmt.Sprintf("release \"a\" {\n  chart = %q\n}\n", appChart(t)))
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("HOME", t.TempDir())
	code, _, errOut := runConvoy(t, "plan", "-C", dir)
	if code != 1 || !strings.Contains(errOut, "no kubeconfig found") || strings.Contains(errOut, "KUBERNETES_MASTER") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
