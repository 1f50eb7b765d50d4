package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// bigChart writes a chart of n ConfigMaps of size bytes each of
// incompressible data (from the chart's files), plus one ConfigMap that
// says .Values.rev: a release of n*size bytes of ConfigMaps.
func bigChart(t *testing.T, n, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "big")
	files := map[string]string{
		"Chart.yaml":         "apiVersion: v2\nname: big\nversion: 0.1.0\n",
		"values.yaml":        "rev: 1\n",
		"templates/rev.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-rev\ndata:\n  rev: {{ .Values.rev | quote }}\n",
		"templates/blobs.yaml": `{{- range $path, $_ := .Files.Glob "blobs/*" }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $.Release.Name }}-{{ base $path }}
data:
  blob: {{ $.Files.Get $path | quote }}
{{- end }}
`,
	}
	for i := range n {
		blob := make([]byte, size*3/4)
		if _, err := rand.Read(blob); err != nil {
			t.Fatal(err)
		}
		files[fmt.Sprintf("blobs/b%d", i)] = base64.StdEncoding.EncodeToString(blob)
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// helmSQL runs a helm binary on the SQL storage of conn.
func helmSQL(t *testing.T, bin, conn string, args ...string) (string, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(bin, append([]string{"--kubeconfig", cluster.Kubeconfig()}, args...)...)
	cmd.Env = append(os.Environ(), "HELM_DRIVER=sql", "HELM_DRIVER_SQL_CONNECTION_STRING="+conn,
		"HELM_CONFIG_HOME="+home+"/config", "HELM_CACHE_HOME="+home+"/cache", "HELM_DATA_HOME="+home+"/data")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// sqlHistory is `helm history -o json` on SQL storage, as
// revision:status, comma-separated.
func sqlHistory(t *testing.T, bin, conn, ns, name string) string {
	t.Helper()
	out, err := helmSQL(t, bin, conn, "history", name, "-n", ns, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var revs []struct {
		Revision int    `json:"revision"`
		Status   string `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &revs); err != nil {
		t.Fatalf("helm history: %v\n%s", err, out)
	}
	var s []string
	for _, r := range revs {
		s = append(s, fmt.Sprintf("%d:%s", r.Revision, r.Status))
	}
	return strings.Join(s, ",")
}

// TestLargeReleaseOnSQLStorage: a release of 3 MiB of ConfigMaps cannot be
// recorded in a Secret: the plan fails naming the size and the way out,
// and nothing is applied. With storage { driver = "sql" } it installs,
// upgrades and rolls back, and helm (v4 and v3, HELM_DRIVER=sql) lists it
// and shows its history; helm rolls it back too, and convoy finds the
// stack unchanged from helm's revision.
func TestLargeReleaseOnSQLStorage(t *testing.T) {
	ns := cluster.Namespace(t)
	pg := cluster.Postgres(t)
	_, conn := pg.CreateDatabase(t)
	helm, helm3 := devtest.HelmBinary(t), locateHelm3(t)
	chart := bigChart(t, 6, 512<<10)
	stack := func(storage string, rev int) string {
		return writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
  %[2]s
}
variable "records_db" {
  sensitive = true
  default   = null
}
release "big" {
  chart = %[3]q
  set   = { rev = %[4]d }
}
`, ns, storage, chart, rev))
	}
	kc := cluster.Kubeconfig()

	// On Secrets: refused at plan, naming the size, the limit and the
	// ways out; nothing applied.
	code, out, errOut := runConvoy(t, "apply", "-C", stack("", 1), "--kubeconfig", kc, "--auto-approve")
	if code == 0 {
		t.Fatalf("apply of a 3 MiB release on Secrets succeeded:\n%s", out)
	}
	for _, want := range []string{"release big revision 1 in namespace " + ns, "more than the 1048576 bytes (1.0 MiB) a Secret holds", `storage { driver = "sql" }`, "heaviest parts are"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, errOut)
		}
	}
	if cms := listConfigMaps(t, ns, "big-"); len(cms) != 0 {
		t.Fatalf("ConfigMaps applied by a refused plan: %v", cms)
	}

	// On SQL storage, the connection string from an environment
	// variable: installed, then upgraded.
	t.Setenv("CONVOY_VAR_records_db", conn)
	sqlStorage := `storage {
    driver     = "sql"
    connection = var.records_db
  }`
	for rev := 1; rev <= 2; rev++ {
		code, out, errOut := runConvoy(t, "apply", "-C", stack(sqlStorage, rev), "--kubeconfig", kc, "--auto-approve")
		if code != 0 {
			t.Fatalf("apply rev=%d on SQL storage: exit %d\n%s\n%s", rev, code, out, errOut)
		}
		if strings.Contains(out+errOut, pg.Password) {
			t.Fatal("the output shows the database password")
		}
	}
	if got := len(listConfigMaps(t, ns, "big-")); got != 7 {
		t.Fatalf("%d ConfigMaps of the release, want 7", got)
	}
	if got := sqlHistory(t, helm, conn, ns, "big"); got != "1:superseded,2:deployed" {
		t.Fatalf("helm history on SQL: %s", got)
	}
	if out, err := helmSQL(t, helm3, conn, "list", "-n", ns, "-q"); err != nil || strings.TrimSpace(out) != "big" {
		t.Fatalf("helm 3 list on SQL: %q %v", out, err)
	}
	// The plan JSON says how large the record is, and that SQL holds it.
	code, out, errOut = runConvoy(t, "plan", "-C", stack(sqlStorage, 3), "--kubeconfig", kc, "--json")
	var planned struct {
		Releases []struct {
			Record *struct {
				Bytes      int `json:"bytes"`
				LimitBytes int `json:"limit_bytes"`
			} `json:"record"`
		} `json:"releases"`
	}
	if err := json.Unmarshal([]byte(out), &planned); code != 0 || err != nil || len(planned.Releases) != 1 {
		t.Fatalf("plan JSON on SQL: exit %d, %v\n%.2000s\n%s", code, err, out, errOut)
	}
	// 3 MiB of base64 text, in the manifest and in the chart's files:
	// gzip gives back a quarter of each, base64 adds a third.
	if r := planned.Releases[0].Record; r == nil || r.Bytes < 3<<20 || r.LimitBytes != 1<<30-1 {
		t.Fatalf("plan JSON's record size on SQL: %+v", r)
	}

	// convoy rolls back; helm shows it, and rolls back in its turn.
	if code, out, errOut := runConvoy(t, "rollback", "big", "1", "-C", stack(sqlStorage, 2), "--kubeconfig", kc); code != 0 {
		t.Fatalf("convoy rollback on SQL: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := configMapValue(t, ns, "big-rev", "rev"); got != "1" {
		t.Fatalf("after convoy's rollback rev is %q", got)
	}
	if got := sqlHistory(t, helm, conn, ns, "big"); got != "1:superseded,2:superseded,3:deployed" {
		t.Fatalf("helm history after convoy's rollback: %s", got)
	}
	if out, err := helmSQL(t, helm, conn, "rollback", "big", "2", "-n", ns); err != nil {
		t.Fatalf("helm rollback on SQL: %v\n%s", err, out)
	}
	if got := configMapValue(t, ns, "big-rev", "rev"); got != "2" {
		t.Fatalf("after helm's rollback rev is %q", got)
	}
	// convoy reads what helm wrote: the stack at rev = 2 is what helm
	// rolled back to, unchanged.
	if code, out, errOut := runConvoy(t, "plan", "-C", stack(sqlStorage, 2), "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after helm's rollback: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestHelmInstallOnSQLIsUpgradedByConvoy: a release helm installed into
// SQL storage (v4, then v3 on another) is planned and upgraded by convoy
// on the same database; helm reads the revision convoy wrote.
func TestHelmInstallOnSQLIsUpgradedByConvoy(t *testing.T) {
	ns := cluster.Namespace(t)
	pg := cluster.Postgres(t)
	_, conn := pg.CreateDatabase(t)
	helm, helm3 := devtest.HelmBinary(t), locateHelm3(t)
	chart := bigChart(t, 1, 1<<10)
	if out, err := helmSQL(t, helm, conn, "install", "by-helm4", chart, "-n", ns); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	if out, err := helmSQL(t, helm3, conn, "install", "by-helm3", chart, "-n", ns); err != nil {
		t.Fatalf("helm 3 install: %v\n%s", err, out)
	}
	t.Setenv("HELM_DRIVER_SQL_CONNECTION_STRING", conn)
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
  storage {
    driver = "sql"
  }
}
release "by-helm4" {
  chart = %[2]q
  set   = { rev = 2 }
  adopt = true
}
release "by-helm3" {
  chart = %[2]q
  set   = { rev = 2 }
  adopt = true
}
`, ns, chart))
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "upgrade") {
		t.Fatalf("plan of helm's releases: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, name := range []string{"by-helm4", "by-helm3"} {
		if got := sqlHistory(t, helm, conn, ns, name); got != "1:superseded,2:deployed" {
			t.Fatalf("%s: helm history: %s", name, got)
		}
		if got := configMapValue(t, ns, name+"-rev", "rev"); got != "2" {
			t.Fatalf("%s: rev %q after convoy's upgrade", name, got)
		}
	}
	if out, err := helmSQL(t, helm3, conn, "get", "values", "by-helm3", "-n", ns, "-o", "json"); err != nil || !strings.Contains(out, `"rev":2`) {
		t.Fatalf("helm 3 get values of convoy's revision: %s %v", out, err)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after apply: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestSQLStorageUnreachableFailsThePlan: a wrong password fails the plan
// naming the driver and the host, never the password; nothing is applied.
func TestSQLStorageUnreachableFailsThePlan(t *testing.T) {
	ns := cluster.Namespace(t)
	pg := cluster.Postgres(t)
	_, conn := pg.CreateDatabase(t)
	wrong := strings.Replace(conn, pg.Password, "Wr0ngPassw0rd", 1)
	t.Setenv("CONVOY_VAR_records_db", wrong)
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
  storage {
    driver     = "sql"
    connection = var.records_db
  }
}
variable "records_db" {
  sensitive = true
}
release "small" {
  chart = %[2]q
}
`, ns, bigChart(t, 1, 1<<10)))
	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve")
	if code == 0 {
		t.Fatal("apply with a wrong database password succeeded")
	}
	if !strings.Contains(errOut, "sql storage (PostgreSQL at "+pg.Host+")") || !strings.Contains(errOut, "password authentication failed") {
		t.Fatalf("the error does not name the driver, the host and the cause:\n%s", errOut)
	}
	if strings.Contains(out+errOut, "Wr0ngPassw0rd") {
		t.Fatalf("the output shows the password:\n%s\n%s", out, errOut)
	}
	if cms := listConfigMaps(t, ns, "small-"); len(cms) != 0 {
		t.Fatalf("applied: %v", cms)
	}
}

func locateHelm3(t *testing.T) string {
	t.Helper()
	bin, err := devcluster.LocateHelm3(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// listConfigMaps names the ConfigMaps of ns whose name starts with prefix.
func listConfigMaps(t *testing.T, ns, prefix string) []string {
	t.Helper()
	list, err := cluster.Client().CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, cm := range list.Items {
		if strings.HasPrefix(cm.Name, prefix) {
			out = append(out, cm.Name)
		}
	}
	return out
}

// configMapValue is a key of ConfigMap ns/name ("" when absent).
func configMapValue(t *testing.T, ns, name, key string) string {
	t.Helper()
	cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data[key]
}

// TestNoChangePlanOnSQLQueriesPerNamespace: a plan of 100 unchanged
// releases in two namespaces on SQL storage reads their records with at
// most 3 queries per namespace (convoy plan --stats: sql-queries).
func TestNoChangePlanOnSQLQueriesPerNamespace(t *testing.T) {
	nsA, nsB := cluster.Namespace(t), cluster.Namespace(t)
	pg := cluster.Postgres(t)
	_, conn := pg.CreateDatabase(t)
	t.Setenv("HELM_DRIVER_SQL_CONNECTION_STRING", conn)
	chart := bigChart(t, 0, 0)
	hcl := fmt.Sprintf(`
stack "fleet" {
  storage {
    driver = "sql"
  }
}
release "a" {
  for_each  = toset([for i in range(50) : tostring(i)])
  name      = "a${each.key}"
  namespace = %q
  chart     = %q
}
release "b" {
  for_each  = toset([for i in range(50) : tostring(i)])
  name      = "b${each.key}"
  namespace = %q
  chart     = %[2]q
}
`, nsA, chart, nsB)
	dir := writeStack(t, hcl)
	kc := cluster.Kubeconfig()
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "-p", "16"); code != 0 {
		t.Fatalf("apply: exit %d\n%.3000s\n%s", code, out, errOut)
	}
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode", "--stats")
	if code != 0 {
		t.Fatalf("no-change plan: exit %d\n%.3000s\n%s", code, out, errOut)
	}
	m := regexp.MustCompile(`sql-queries=(\d+)`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("--stats says no sql-queries:\n%s", errOut)
	}
	if n, _ := strconv.Atoi(m[1]); n > 2*3 {
		t.Fatalf("a no-change plan of 100 releases in 2 namespaces made %d queries, want at most 3 per namespace:\n%s", n, errOut)
	}
	t.Logf("%s", strings.TrimSpace(errOut))
}

// TestSQLPoolClosedOnEveryExitPath: runs of the CLI on SQL storage that
// end every way a run ends — a no-change plan, an apply, a plan that
// fails rendering after the database was opened, an apply refused at
// plan — leave no connection open on the PostgreSQL server
// (pg_stat_activity), however many there were.
func TestSQLPoolClosedOnEveryExitPath(t *testing.T) {
	ns := cluster.Namespace(t)
	pg := cluster.Postgres(t)
	dbName, conn := pg.CreateDatabase(t)
	t.Setenv("HELM_DRIVER_SQL_CONNECTION_STRING", conn)
	chart := filepath.Join(t.TempDir(), "req")
	for name, data := range map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: req\nversion: 0.1.0\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  x: {{ required \"x is required\" .Values.x | quote }}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(chart, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(chart, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stack := func(set string) string {
		return writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
  storage {
    driver = "sql"
  }
}
release "a" {
  chart = %[2]q
  %[3]s
}
`, ns, chart, set))
	}
	kc := cluster.Kubeconfig()
	good, bad := stack(`set = { x = "1" }`), stack("")
	if code, out, errOut := runConvoy(t, "apply", "-C", good, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	const rounds = 10
	runs := 0
	for i := range rounds {
		next := stack(fmt.Sprintf(`set = { x = "%d" }`, i+2))
		for _, c := range []struct {
			args []string
			code int
		}{
			{[]string{"plan", "-C", good, "--detailed-exitcode"}, 0},
			{[]string{"plan", "-C", bad}, 1},
			{[]string{"apply", "-C", bad, "--auto-approve"}, 1},
			{[]string{"apply", "-C", next, "--auto-approve"}, 0},
		} {
			code, out, errOut := runConvoy(t, append(c.args, "--kubeconfig", kc)...)
			if code != c.code {
				t.Fatalf("%s: exit %d, want %d\n%s\n%s", strings.Join(c.args, " "), code, c.code, out, errOut)
			}
			if c.code == 1 && !strings.Contains(errOut, "x is required") {
				t.Fatalf("%s did not fail rendering:\n%s", strings.Join(c.args, " "), errOut)
			}
			runs++
		}
		good = next
	}
	if n := pg.Connections(t, dbName); n != 0 {
		t.Fatalf("after %d runs the server holds %d connections to the records' database", runs, n)
	}
	t.Logf("%d runs, 0 connections left", runs)
}

// TestStorageSwitchedWithoutMovingFailsThePlan: a stack applied on
// Secrets whose storage block then says sql, its records not moved, fails
// its plan naming the release and the command that moves them, instead of
// proposing to install it anew; once moved, the plan is clean.
func TestStorageSwitchedWithoutMovingFailsThePlan(t *testing.T) {
	ns := cluster.Namespace(t)
	pg := cluster.Postgres(t)
	dbName, conn := pg.CreateDatabase(t)
	t.Setenv("HELM_DRIVER_SQL_CONNECTION_STRING", conn)
	chart := bigChart(t, 0, 0)
	stack := func(storage string) string {
		return writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
  %[2]s
}
release "small" {
  chart = %[3]q
}
`, ns, storage, chart))
	}
	kc := cluster.Kubeconfig()
	if code, out, errOut := runConvoy(t, "apply", "-C", stack(""), "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply on Secrets: exit %d\n%s\n%s", code, out, errOut)
	}
	onSQL := stack(`storage {
    driver = "sql"
  }`)
	code, out, errOut := runConvoy(t, "plan", "-C", onSQL, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 1 {
		t.Fatalf("plan on SQL of records left in Secrets: exit %d, want 1 (failed)\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"release small in namespace " + ns, "Secrets) holds 1", "convoy records migrate --to sql --from secret small"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the failure does not say %q:\n%s", want, errOut)
		}
	}
	if code, out, errOut := runConvoy(t, "records", "migrate", "--to", "sql", "--from", "secret", "small", "-C", onSQL, "--kubeconfig", kc); code != 0 {
		t.Fatalf("records migrate: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", onSQL, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan on SQL after the move: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := pg.Connections(t, dbName); n != 0 {
		t.Fatalf("%d connections left", n)
	}
}
