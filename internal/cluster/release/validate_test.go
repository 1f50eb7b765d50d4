package release_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/testfiles"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// freshNamespace is a namespace name no one created, deleted after the
// test in case it was.
func freshNamespace(t *testing.T) string {
	ns := cluster.Namespace(t) + "-new"
	t.Cleanup(func() {
		_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	return ns
}

func namespaceExists(t *testing.T, ns string) bool {
	t.Helper()
	_, err := cluster.Client().CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestInvalidObjectCreatesNotEvenTheNamespace: every object is dry-run
// before create_namespace creates the namespace; an invalid one fails the
// install naming its template and leaves nothing behind.
func TestInvalidObjectCreatesNotEvenTheNamespace(t *testing.T) {
	ns := freshNamespace(t)
	e, _ := newEngine(t)
	req := appRequest(t, ns, "broken", map[string]any{"invalid": true})
	req.CreateNamespace = true
	_, err := e.Deploy(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "template app/templates/invalid.yaml") || !strings.Contains(err.Error(), "apps/v1 Deployment "+ns+"/broken-broken") {
		t.Fatalf("want an error naming the template and the object, got %v", err)
	}
	if namespaceExists(t, ns) {
		t.Fatalf("namespace %s was created although the release is invalid", ns)
	}

	// Valid objects in the namespace create_namespace creates are validated
	// before it exists, then installed.
	req = appRequest(t, ns, "ok", nil)
	req.CreateNamespace, req.Wait = true, release.WaitNone
	if _, err := e.Deploy(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := statuses(history(t, e, ns, "ok")); got != "1:deployed" {
		t.Fatalf("history %s", got)
	}
}

// TestOversizedRecordIsRefusedBeforeAnything: a release whose record a
// Secret cannot hold fails before anything is created.
func TestOversizedRecordIsRefusedBeforeAnything(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := filepath.Join(t.TempDir(), "big")
	blob := make([]byte, 1200<<10)
	if _, err := rand.Read(blob); err != nil {
		t.Fatal(err)
	}
	ch := loadChartFiles(t, dir, map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: big\nversion: 0.1.0\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
		"files/blob":        base64.StdEncoding.EncodeToString(blob),
	})
	e, _ := newEngine(t)
	_, err := e.Deploy(context.Background(), &release.Request{Name: "big", Namespace: ns, Chart: ch})
	var tooLarge *release.RecordTooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Limit != 1<<20 || tooLarge.Size <= tooLarge.Limit {
		t.Fatalf("want a RecordTooLargeError, got %v", err)
	}
	if h := history(t, e, ns, "big"); len(h) != 0 {
		t.Fatalf("records: %s", statuses(h))
	}
	if _, ok := configMapData(t, ns, "big"); ok {
		t.Fatal("the ConfigMap was created")
	}
}

// TestLargeCompressibleRecordIsAccepted: a record whose JSON is too large
// to skip the compression in the size check (a 900 KiB file in the chart)
// but compresses well is checked compressed, and installed.
func TestLargeCompressibleRecordIsAccepted(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := filepath.Join(t.TempDir(), "roomy")
	ch := loadChartFiles(t, dir, map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: roomy\nversion: 0.1.0\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
		"files/text":        strings.Repeat("the same line, over and over\n", 900<<10/29),
	})
	e, _ := newEngine(t)
	if _, err := e.Deploy(context.Background(), &release.Request{Name: "roomy", Namespace: ns, Chart: ch}); err != nil {
		t.Fatal(err)
	}
	if got := statuses(history(t, e, ns, "roomy")); got != "1:deployed" {
		t.Fatalf("history %s", got)
	}
}

// loadChartFiles writes a chart's files (path relative to dir → content)
// and loads it.
func loadChartFiles(t *testing.T, dir string, files map[string]string) *chart.Chart {
	t.Helper()
	testfiles.Write(t, dir, files)
	ch, err := chart.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}
