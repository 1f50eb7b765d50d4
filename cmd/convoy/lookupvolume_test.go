package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// A helm-installed release whose template fills a field by lookup of live
// state (grafana's lookupVolumeName: spec.volumeName of its bound claim,
// absent when helm installed it) plans clean once imported, and a real
// change names the object and field that differ (issue 37.9).
func TestImportedLookupFieldPlansClean(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	if out, err := cluster.Helm(t, "install", "grafana", testChart(t, "lookup-volume"), "-n", ns); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		c, err := cluster.Client().CoreV1().PersistentVolumeClaims(ns).Get(ctx, "grafana", metav1.GetOptions{})
		return err == nil && c.Status.Phase == corev1.ClaimBound, err
	}); err != nil {
		t.Fatalf("claim not bound: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "imported")
	if code, out, errOut := runConvoy(t, "import", "releases", "-n", ns, "-o", dir, "--kubeconfig", kc); code != 0 {
		t.Fatalf("import releases: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "init", "-C", dir); code != 0 {
		t.Fatalf("init: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan of the imported release: exit %d\n%s\n%s", code, out, errOut)
	}
	// A change of the rendering is a difference, and the plan names the
	// object and field; the lookup-filled field is not one.
	cm := filepath.Join(dir, "charts", "lookup-volume-1.0.0", "templates", "configmap.yaml")
	text, err := os.ReadFile(cm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cm, append(text, []byte("  extra: \"x\"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "v1 ConfigMap "+ns+"/grafana-config: data.extra") || strings.Contains(out, "volumeName") {
		t.Fatalf("plan of a changed template: exit %d\n%s\n%s", code, out, errOut)
	}
}
