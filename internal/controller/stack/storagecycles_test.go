package stack_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/testfiles"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sqlCycles is how many plans TestStackSQLConnectionsAfterManyCycles
// counts: CONVOY_TEST_SQL_CYCLES, else 48 (the 1,000 take about
// ten minutes on two busy cores).
func sqlCycles(t *testing.T) int {
	s := os.Getenv("CONVOY_TEST_SQL_CYCLES")
	if s == "" {
		return 48
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("CONVOY_TEST_SQL_CYCLES=%q: want a number", s)
	}
	return n
}

// TestStackSQLConnectionsAfterManyCycles: Stacks on SQL storage,
// reconciled again and again by one controller (plans, mostly of no
// change, and an apply every tenth plan), leave no connection open on the
// PostgreSQL server: none once they are suspended while the controller
// still runs, none once it stopped (pg_stat_activity).
func TestStackSQLConnectionsAfterManyCycles(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	pg := cluster.Postgres(t)
	dbName, conn := pg.CreateDatabase(t)
	reg := sourcetest.StartRegistry(t, "", "")
	create(t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "records-db", Namespace: ns}, Data: map[string][]byte{"connection": []byte(conn)}})
	const stacks = 6
	names := make([]string, stacks)
	for i := range stacks {
		names[i] = fmt.Sprintf("cyc-%d", i)
		dir := filepath.Join(t.TempDir(), "stack")
		testfiles.Write(t, dir, map[string]string{
			"charts/one/Chart.yaml": "apiVersion: v2\nname: one\nversion: 0.1.0\n",
			"charts/one/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\n" +
				"data:\n  message: {{ .Values.message | quote }}\n",
			"stack.hcl": fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[2]q
}
variable "message" {
  default = "0"
}
release %[1]q {
  chart  = "./charts/one"
  values = [{ message = var.message }]
  wait   = false
}
`, names[i], ns),
		})
		push(t, reg, dir, names[i])
		create(t, c, newStack(ns, names[i], "oci://"+reg.Host+"/stacks/app:"+names[i], func(st *v1alpha1.Stack) {
			st.Spec.Storage = &v1alpha1.StorageSpec{Driver: "sql", SecretRef: &v1alpha1.LocalSecretKeyRef{Name: "records-db"}}
			st.Spec.Interval = &metav1.Duration{Duration: time.Second}
			st.Spec.Vars = map[string]string{"message": "0"}
		}))
	}
	stop := startController(t, ns, func(o *controller.Options) { o.Concurrency = stacks })

	// Count plans: each moves its Stack's status.plan.createdAt (a time
	// to the second; a Stack is planned at most every second). Every
	// tenth changes a Stack's var.message, which its next plan applies.
	cycles := sqlCycles(t)
	last := map[string]time.Time{}
	plans, changes, peak := 0, 0, 0
	start := time.Now()
	deadline := start.Add(time.Duration(cycles)*2*time.Second/stacks + 3*time.Minute)
	db := pg.Open(t, "postgres")
	for plans < cycles {
		if time.Now().After(deadline) {
			t.Fatalf("%d plans of %d in %s", plans, cycles, time.Since(start).Round(time.Second))
		}
		for _, name := range names {
			st := getStack(t, c, ns, name)
			if p := st.Status.Plan; p != nil && p.CreatedAt != nil && p.CreatedAt.After(last[name]) {
				if !last[name].IsZero() {
					plans++
				}
				last[name] = p.CreatedAt.Time
				if st.Status.LastError != "" {
					t.Fatalf("Stack %s failed:%s", name, describe(st))
				}
			}
		}
		if plans/10 > changes {
			changes++
			name := names[changes%stacks]
			update(t, c, ns, name, func(st *v1alpha1.Stack) { st.Spec.Vars = map[string]string{"message": strconv.Itoa(changes)} })
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, dbName).Scan(&n); err != nil {
			t.Fatal(err)
		}
		peak = max(peak, n)
		time.Sleep(250 * time.Millisecond)
	}
	// The applies happened: each changed Stack's ConfigMap says its last
	// message (once its plan after the change is applied).
	applied := 0
	for i, name := range names {
		want := "0"
		for ch := 1; ch <= changes; ch++ {
			if ch%stacks == i {
				want = strconv.Itoa(ch)
			}
		}
		waitStack(t, c, ns, name, 2*time.Minute, "applied message "+want, func(st *v1alpha1.Stack) bool {
			return configMessage(t, c, ns, name) == want && isCond("Ready", metav1.ConditionTrue, "")(st)
		})
		if want != "0" {
			applied++
		}
	}
	t.Logf("%d plans of %d Stacks (%d changes, applied) in %s; at most %d connections at once", plans, stacks, changes, time.Since(start).Round(time.Second), peak)
	if applied == 0 {
		t.Fatal("no Stack applied a change")
	}

	// Suspended, the Stacks are reconciled no more: the running
	// controller holds no connection.
	for _, name := range names {
		update(t, c, ns, name, func(st *v1alpha1.Stack) { st.Spec.Suspend = true })
	}
	for _, name := range names {
		waitStack(t, c, ns, name, time.Minute, "suspended", isCond("Ready", metav1.ConditionFalse, v1alpha1.ReasonSuspended))
	}
	if n := pg.Connections(t, dbName); n != 0 {
		t.Fatalf("after %d plans, the running controller holds %d connections to the records' database", plans, n)
	}
	stop()
	if n := pg.Connections(t, dbName); n != 0 {
		t.Fatalf("after the controller stopped, %d connections to the records' database are open", n)
	}
}
