package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestManifestsRelease deploys plain YAML files as a Helm release: they are
// not templated, objects keep their own namespaces, and the release has
// history that helm rollback understands.
func TestManifestsRelease(t *testing.T) {
	ns, other := cluster.Namespace(t), cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "raw" {
  manifests = ["k8s/*.yaml"]
}
`, ns))
	if err := os.MkdirAll(filepath.Join(dir, "k8s"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(message string) {
		t.Helper()
		files := map[string]string{
			"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: raw-config\ndata:\n  message: " + message + "\n  template: \"{{ .Values.notTemplated }}\"\n",
			"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: raw-elsewhere\n  namespace: " + other + "\ndata:\n  k: v\n",
		}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, "k8s", name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	message := func() string {
		t.Helper()
		cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(context.Background(), "raw-config", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data["template"] != "{{ .Values.notTemplated }}" {
			t.Errorf("the file was templated: %v", cm.Data)
		}
		return cm.Data["message"]
	}

	write("one")
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := cluster.Client().CoreV1().ConfigMaps(other).Get(context.Background(), "raw-elsewhere", metav1.GetOptions{}); err != nil {
		t.Fatalf("the object lost its namespace: %v", err)
	}
	write("two")
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 || !strings.Contains(out, "upgrade") {
		t.Fatalf("upgrade: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := message(); got != "two" {
		t.Fatalf("after the upgrade: %q", got)
	}
	if got := revisions(statusOf(t, ns, "raw")); got != "1:superseded 2:deployed" {
		t.Fatalf("history: %s", got)
	}
	if out, err := cluster.Helm(t, "rollback", "raw", "1", "-n", ns); err != nil {
		t.Fatalf("helm rollback: %v\n%s", err, out)
	}
	if got := message(); got != "one" {
		t.Fatalf("after helm rollback: %q", got)
	}
	manifest, err := cluster.Helm(t, "get", "manifest", "raw", "-n", ns)
	if err != nil || !strings.Contains(manifest, "message: one") || !strings.Contains(manifest, "namespace: "+other) {
		t.Fatalf("helm get manifest: %v\n%s", err, manifest)
	}
	// convoy sees the rolled-back release as drifted from the files (two).
	code, out, _ := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "release.raw (upgrade)") {
		t.Fatalf("plan after helm rollback: exit %d\n%s", code, out)
	}
}
