package plan_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func transformChart(t *testing.T) string { return chartPath(t, "testdata", "charts", "transform") }

func transformStack(chart, ns, extra string) string {
	return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
variable "secret" {
  type      = string
  sensitive = true
}
release "t" {
  chart         = %[1]q
  set_sensitive = { secret = var.secret }
  %[3]s
}
`, chart, ns, extra)
}

// TestPlanRejectsAnInvalidNewObject: a new object the API server refuses
// fails the plan, naming the template and the object, also in a namespace
// create_namespace creates; nothing is created.
func TestPlanRejectsAnInvalidNewObject(t *testing.T) {
	ns := cluster.Namespace(t)
	fresh := ns + "-new"
	t.Cleanup(func() {
		_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), fresh, metav1.DeleteOptions{})
	})
	extra := fmt.Sprintf("namespace = %q\n  create_namespace = true\n  values = [{ badName = true }]", fresh)
	e := newEnv(t, transformStack(transformChart(t), ns, extra))
	_, err := e.plan(map[string]string{"secret": "s3cret-value"}, nil, false)
	if err == nil {
		t.Fatal("plan of an invalid object succeeded")
	}
	for _, want := range []string{"release.t: ", "template transform/templates/bad-name.yaml", "v1 ConfigMap " + fresh + "/Bad_Name!!", "metadata.name: Invalid value"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if _, err := cluster.Client().CoreV1().Namespaces().Get(context.Background(), fresh, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("namespace %s: %v", fresh, err)
	}

	// Valid objects in the namespace the release creates plan as creates,
	// without warnings.
	writeStack(t, e.dir, transformStack(transformChart(t), ns, fmt.Sprintf("namespace = %q\n  create_namespace = true", fresh)))
	p := e.mustPlan(map[string]string{"secret": "s3cret-value"})
	r := p.Release("release.t")
	if r.Action != plan.ActionInstall || len(r.Objects) != 1 || r.Objects[0].Action != plan.ObjectCreate || len(r.Warnings) != 0 {
		t.Fatalf("release: %s %+v warnings %q", r.Action, r.Objects, r.Warnings)
	}
	// Without create_namespace, apply depends on someone else creating it.
	writeStack(t, e.dir, transformStack(transformChart(t), ns, fmt.Sprintf("namespace = %q", fresh)))
	p = e.mustPlan(map[string]string{"secret": "s3cret-value"})
	if w := p.Release("release.t").Warnings; len(w) != 1 || !strings.Contains(w[0], "namespace "+fresh+" does not exist") {
		t.Fatalf("warnings: %q", w)
	}
}

// TestPlanReportsARecordTooLargeToStore: a chart whose release record
// exceeds what a Secret holds fails the plan with the size and the limit.
func TestPlanReportsARecordTooLargeToStore(t *testing.T) {
	ns := cluster.Namespace(t)
	chart := filepath.Join(t.TempDir(), "big")
	blob := make([]byte, 1200<<10)
	if _, err := rand.Read(blob); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"Chart.yaml":          "apiVersion: v2\nname: big\nversion: 0.1.0\n",
		"templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  size: {{ len (.Files.Get \"files/blob\") | quote }}\n",
		"files/blob":          base64.StdEncoding.EncodeToString(blob),
		"templates/NOTES.txt": "big\n",
	} {
		path := filepath.Join(chart, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t, fmt.Sprintf("stack %[2]q {\n  default_namespace = %[2]q\n}\nrelease \"big\" {\n  chart = %[1]q\n}\n", chart, ns))
	_, err := e.plan(nil, nil, false)
	if err == nil {
		t.Fatal("plan of an oversized release succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, "release.big: release big revision 1: the release record would be ") || !strings.Contains(msg, fmt.Sprintf("more than the %d bytes", release.MaxRecordBytes)) {
		t.Fatalf("error does not name the size and the limit: %v", err)
	}
}
