package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// migrateStack is a stack of releases named names of the big chart (no
// blobs) at rev, its records in driver.
func migrateStack(t *testing.T, dir, ns, driver string, rev int, names ...string) string {
	t.Helper()
	storage := ""
	if driver != "" {
		storage = fmt.Sprintf("storage {\n    driver = %q\n  }", driver)
	}
	hcl := fmt.Sprintf("stack %[1]q {\n  default_namespace = %[1]q\n  %[2]s\n}\n", ns, storage)
	for _, n := range names {
		hcl += fmt.Sprintf("release %q {\n  chart = %q\n  set   = { rev = %d }\n}\n", n, dir, rev)
	}
	return writeStack(t, hcl)
}

// helmHistory is `helm history -o json` of a release with HELM_DRIVER
// driver (sql: on conn's database).
func helmHistory(t *testing.T, helm, driver, conn, ns, name string) (string, error) {
	t.Helper()
	if driver == "sql" {
		return helmSQL(t, helm, conn, "history", name, "-n", ns, "-o", "json")
	}
	return cluster.Helm(t, "history", name, "-n", ns, "-o", "json")
}

// TestRecordsMigrateRoundTrip: a release of 3 revisions on Secrets moves
// to PostgreSQL (convoy records migrate --to sql), then back (--to
// secret): helm history, helm being the oracle with HELM_DRIVER=sql and
// then secret, is identical at each step, the driver left holds nothing,
// and convoy plans the stack unchanged from the moved records.
func TestRecordsMigrateRoundTrip(t *testing.T) {
	ns := cluster.Namespace(t)
	pg := cluster.Postgres(t)
	_, conn := pg.CreateDatabase(t)
	t.Setenv("HELM_DRIVER_SQL_CONNECTION_STRING", conn)
	helm := devtest.HelmBinary(t)
	kc := cluster.Kubeconfig()
	chart := bigChart(t, 0, 0)
	for rev := 1; rev <= 3; rev++ {
		if code, out, errOut := runConvoy(t, "apply", "-C", migrateStack(t, chart, ns, "", rev, "web"), "--kubeconfig", kc, "--auto-approve"); code != 0 {
			t.Fatalf("apply rev=%d: exit %d\n%s\n%s", rev, code, out, errOut)
		}
	}
	before, err := helmHistory(t, helm, "secret", conn, ns, "web")
	if err != nil || strings.Count(before, `"revision"`) != 3 {
		t.Fatalf("helm history on Secrets: %v\n%s", err, before)
	}

	steps := []struct{ stackDriver, to, from string }{{"", "sql", "secret"}, {"sql", "secret", "sql"}}
	for _, st := range steps {
		code, out, errOut := runConvoy(t, "records", "migrate", "--to", st.to, "-C", migrateStack(t, chart, ns, st.stackDriver, 3, "web"), "--kubeconfig", kc)
		if code != 0 {
			t.Fatalf("records migrate --to %s: exit %d\n%s\n%s", st.to, code, out, errOut)
		}
		if want := fmt.Sprintf("3 revisions moved from %s to %s, each verified", st.from, st.to); !strings.Contains(out, want) || strings.Count(out, "release JSON sha256:") != 3 {
			t.Fatalf("records migrate --to %s does not say %q with 3 checksums:\n%s", st.to, want, out)
		}
		if strings.Contains(out+errOut, pg.Password) {
			t.Fatal("the output shows the database password")
		}
		after, err := helmHistory(t, helm, st.to, conn, ns, "web")
		if err != nil || after != before {
			t.Fatalf("helm history (HELM_DRIVER=%s) after the move: %v\n%s\nwant\n%s", st.to, err, after, before)
		}
		if left, err := helmHistory(t, helm, st.from, conn, ns, "web"); err == nil {
			t.Fatalf("helm history (HELM_DRIVER=%s) still finds the release:\n%s", st.from, left)
		}
		// convoy reads the moved records: the stack is unchanged.
		if code, out, errOut := runConvoy(t, "plan", "-C", migrateStack(t, chart, ns, st.to, 3, "web"), "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
			t.Fatalf("plan on %s after the move: exit %d\n%s\n%s", st.to, code, out, errOut)
		}
	}
}

// TestRecordsMigrateKilledIsFinishedByTheNextRun: `convoy records migrate
// --to sql` of two releases is SIGKILLed as soon as it marks the first
// release's Secrets as moved (its copies verified), mid-move. Until the
// move is run again, an apply on either driver is refused, naming the
// unfinished move; the next run finishes it: every revision in
// PostgreSQL, helm history as before, no Secret left, no mark left, and
// the stack plans unchanged.
func TestRecordsMigrateKilledIsFinishedByTheNextRun(t *testing.T) {
	ns := cluster.Namespace(t)
	pg := cluster.Postgres(t)
	dbName, conn := pg.CreateDatabase(t)
	t.Setenv("HELM_DRIVER_SQL_CONNECTION_STRING", conn)
	helm := devtest.HelmBinary(t)
	kc := cluster.Kubeconfig()
	bin := buildConvoy(t)
	chart := bigChart(t, 0, 0)
	names := []string{"api", "web"}
	for rev := 1; rev <= 3; rev++ {
		if code, out, errOut := runConvoy(t, "apply", "-C", migrateStack(t, chart, ns, "", rev, names...), "--kubeconfig", kc, "--auto-approve"); code != 0 {
			t.Fatalf("apply rev=%d: exit %d\n%s\n%s", rev, code, out, errOut)
		}
	}
	before := map[string]string{}
	for _, n := range names {
		h, err := helmHistory(t, helm, "secret", conn, ns, n)
		if err != nil {
			t.Fatal(err)
		}
		before[n] = h
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w, err := cluster.Client().CoreV1().Secrets(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cmd := exec.Command(bin, "records", "migrate", "--to", "sql", "-C", migrateStack(t, chart, ns, "", 3, names...), "--kubeconfig", kc)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	for ev := range w.ResultChan() {
		if ev.Type != watch.Modified {
			continue
		}
		if obj, ok := ev.Object.(metav1.Object); ok && obj.GetLabels()[release.MovedToLabel] == "sql" {
			cmd.Process.Signal(syscall.SIGKILL)
			killed = true
			break
		}
	}
	cmd.Wait()
	if !killed {
		t.Fatalf("the move never marked a Secret moved:\n%s", out.String())
	}
	t.Logf("killed; it had printed:\n%s", out.String())

	// Mid-move: some release's records are marked, and no revision is
	// written on either driver until the move is run again.
	for _, driver := range []string{"", "sql"} {
		code, o, errOut := runConvoy(t, "apply", "-C", migrateStack(t, chart, ns, driver, 4, names...), "--kubeconfig", kc, "--auto-approve")
		if code == 0 || !strings.Contains(errOut, "did not finish") {
			t.Fatalf("apply (driver %q) during an unfinished move: exit %d\n%s\n%s", driver, code, o, errOut)
		}
	}

	code, o, errOut := runConvoy(t, "records", "migrate", "--to", "sql", "-C", migrateStack(t, chart, ns, "", 3, names...), "--kubeconfig", kc)
	if code != 0 {
		t.Fatalf("the next records migrate: exit %d\n%s\n%s", code, o, errOut)
	}
	t.Logf("the next run:\n%s", o)
	for _, n := range names {
		h, err := helmHistory(t, helm, "sql", conn, ns, n)
		if err != nil || h != before[n] {
			t.Fatalf("%s: helm history on SQL after the next run: %v\n%s\nwant\n%s", n, err, h, before[n])
		}
	}
	secrets, err := cluster.Client().CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil || len(secrets.Items) != 0 {
		t.Fatalf("%d record Secrets left: %v", len(secrets.Items), err)
	}
	var marks int
	if err := pg.Open(t, dbName).QueryRow(`SELECT count(*) FROM custom_labels_v1 WHERE key LIKE 'convoy.dev/mov%'`).Scan(&marks); err != nil || marks != 0 {
		t.Fatalf("%d labels of the move left on the records: %v", marks, err)
	}
	if code, o, errOut := runConvoy(t, "plan", "-C", migrateStack(t, chart, ns, "sql", 3, names...), "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan on sql after the move: exit %d\n%s\n%s", code, o, errOut)
	}
}
