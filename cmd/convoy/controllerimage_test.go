package main

import (
	"context"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/deploy"
	"github.com/convoy-sh/convoy/internal/version"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// convoy controller install --image REF runs the controller's Deployment
// from REF; without --image, from ghcr.io/convoy-sh/convoy:<version>.
func TestControllerInstallImage(t *testing.T) {
	cluster.Need(t)
	kc := cluster.Kubeconfig()
	c := cluster.Client()
	t.Cleanup(func() {
		_ = c.AppsV1().Deployments("convoy-system").Delete(context.Background(), "convoy-controller", metav1.DeleteOptions{})
	})
	image := func() string {
		t.Helper()
		d, err := c.AppsV1().Deployments("convoy-system").Get(context.Background(), "convoy-controller", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d.Spec.Template.Spec.Containers[0].Image
	}

	const mine = "127.0.0.1:5000/convoy:test"
	code, out, errOut := runConvoy(t, "controller", "install", "--kubeconfig", kc, "--image", mine, "--min-interval", "1s")
	if code != 0 || !strings.Contains(out, "applied apps/v1 Deployment convoy-system/convoy-controller (image "+mine+")") {
		t.Fatalf("controller install --image: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := image(); got != mine {
		t.Errorf("after install --image %s the Deployment runs %s", mine, got)
	}

	code, out, errOut = runConvoy(t, "controller", "install", "--kubeconfig", kc, "--deployment", "--min-interval", "1s")
	if code != 0 {
		t.Fatalf("controller install --deployment: exit %d\n%s\n%s", code, out, errOut)
	}
	if got, want := image(), deploy.DefaultImage(version.Get().Version); got != want {
		t.Errorf("after install --deployment the Deployment runs %s, want %s", got, want)
	}
}

// A malformed --image is refused before the cluster is reached.
func TestControllerInstallRefusesABadImage(t *testing.T) {
	for _, bad := range []string{"http://registry/convoy:1", "convoy: 1", "registry/convoy:"} {
		code, _, errOut := runConvoy(t, "controller", "install", "--kubeconfig", "/nonexistent", "--image", bad)
		if code == 0 || !strings.Contains(errOut, "--image") || strings.Contains(errOut, "nonexistent") {
			t.Errorf("--image %q: exit %d: %s", bad, code, errOut)
		}
	}
}
