package stack_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A Stack's spec.storage keeps its release records in PostgreSQL, in
// Helm's tables, with the connection string from a Secret of its own
// namespace: a wrong one fails the plan naming the driver and the host,
// never the password, and nothing is applied; the right one installs, and
// no record Secret is written.
func TestStackRecordsInSQL(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	pg := cluster.Postgres(t)
	dbName, conn := pg.CreateDatabase(t)
	reg := sourcetest.StartRegistry(t, "", "")
	dir := filepath.Join(t.TempDir(), "stack")
	appChart(t, filepath.Join(dir, "charts", "app"))
	hcl := fmt.Sprintf("stack %[1]q {\n  default_namespace = %[1]q\n}\nrelease \"api\" {\n  chart = \"./charts/app\"\n}\n", ns)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	push(t, reg, dir, "v1")
	wrong := strings.Replace(conn, pg.Password, "Wr0ngPassw0rd", 1)
	create(t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "records-db", Namespace: ns}, Data: map[string][]byte{"connection": []byte(wrong)}})
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.Storage = &v1alpha1.StorageSpec{Driver: "sql", SecretRef: &v1alpha1.LocalSecretKeyRef{Name: "records-db"}}
	}))
	startController(t, ns, nil)
	st := waitStack(t, c, ns, "shop", 60*time.Second, "failing", isCond("Ready", metav1.ConditionFalse, "PlanFailed"))
	if msg := st.Status.LastError; !strings.Contains(msg, "sql storage (PostgreSQL at "+pg.Host+")") || strings.Contains(msg, "Wr0ngPassw0rd") {
		t.Fatalf("the error does not name the driver and the host, or shows the password:%s", describe(st))
	}
	if m := configMessage(t, c, ns, "api"); !strings.HasPrefix(m, "(") {
		t.Fatalf("applied with a wrong password: %q", m)
	}

	var s corev1.Secret
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "records-db"}, &s); err != nil {
		t.Fatal(err)
	}
	s.Data["connection"] = []byte(conn)
	if err := c.Update(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	st = waitStack(t, c, ns, "shop", 90*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, ""))
	if revisionsOf(st) != "api:1:deployed" {
		t.Fatalf("applied:%s", describe(st))
	}
	var n int
	if err := pg.Open(t, dbName).QueryRow(
		`SELECT count(*) FROM releases_v1 WHERE namespace = $1 AND name = 'api' AND status = 'deployed'`, ns).Scan(&n); err != nil || n != 1 {
		t.Fatalf("deployed rows of api in SQL: %d, %v", n, err)
	}
	var secrets corev1.SecretList
	if err := c.List(context.Background(), &secrets); err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		if s.Namespace == ns && s.Type == "helm.sh/release.v1" {
			t.Fatalf("a record Secret was written: %s", s.Name)
		}
	}
}
