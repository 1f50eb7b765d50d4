package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestEnvironmentsTwoNamespaces deploys one stack to two environments, each
// in its own namespace (from environment.name), and checks that they are
// separate deployments: neither plans the other's releases as removed, a
// plan saved for one is refused for the other, and the plan names its
// environment.
func TestEnvironmentsTwoNamespaces(t *testing.T) {
	base := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, fmt.Sprintf(`
stack "envs" {}
variable "message" {
  type = string
}
environment "staging" {
  vars = { message = "hello staging" }
}
environment "prod" {
  var_files = ["envs/prod.vars.hcl"]
}
release "web" {
  chart            = %q
  namespace        = "%s-${environment.name}"
  create_namespace = true
  values           = [{ message = var.message }]
}
`, appChart(t), base))
	if err := os.MkdirAll(filepath.Join(dir, "envs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "envs", "prod.vars.hcl"), []byte(`message = "hello prod"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"staging", "prod"} {
		ns := base + "-" + env
		t.Cleanup(func() {
			_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		})
	}

	// Without --env the stack refuses to guess.
	code, _, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, `No environment chosen`) || !strings.Contains(errOut, `"prod", "staging"`) {
		t.Fatalf("plan without --env: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--env", "qa")
	if code != 1 || !strings.Contains(errOut, `no environment "qa". Declared environments: "prod", "staging"`) {
		t.Fatalf("plan --env qa: exit %d\n%s", code, errOut)
	}

	for _, env := range []string{"staging", "prod"} {
		code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--env", env, "--auto-approve")
		if code != 0 {
			t.Fatalf("apply --env %s: exit %d\n%s\n%s", env, code, out, errOut)
		}
		if !strings.Contains(out, fmt.Sprintf(`stack "envs" (environment %q)`, env)) {
			t.Errorf("apply --env %s: the plan does not name the environment:\n%s", env, out)
		}
		if strings.Contains(out, "(uninstall)") || !strings.Contains(out, "0 to uninstall") {
			t.Errorf("apply --env %s touches the other environment:\n%s", env, out)
		}
	}
	for _, env := range []string{"staging", "prod"} {
		h := statusOf(t, base+"-"+env, "web")
		if revisions(h) != "1:deployed" {
			t.Fatalf("%s: %s", env, revisions(h))
		}
		if got := h[0].Labels[release.StackLabel]; got != "envs."+env {
			t.Errorf("%s: owner label %q", env, got)
		}
		cm, err := cluster.Client().CoreV1().ConfigMaps(base+"-"+env).Get(context.Background(), "web-config", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(fmt.Sprint(cm.Data), "hello "+env) {
			t.Errorf("%s: configmap %v", env, cm.Data)
		}
	}

	// Both environments are deployed and unchanged.
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--env", "prod", "--detailed-exitcode")
	if code != 0 {
		t.Fatalf("plan --env prod after apply: exit %d\n%s\n%s", code, out, errOut)
	}

	// A plan saved for staging is refused for prod.
	planFile := filepath.Join(t.TempDir(), "staging.plan")
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--env", "staging", "--var", "message=changed", "--out", planFile)
	if code != 0 {
		t.Fatalf("plan --out: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--env", "prod", "--var", "message=changed", planFile)
	if code != 1 || !strings.Contains(errOut, `the plan is for environment "staging", not environment "prod"`) {
		t.Fatalf("apply of a staging plan with --env prod: exit %d\n%s", code, errOut)
	}
	t.Setenv("CONVOY_ENV", "staging")
	code, out, errOut = runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--var", "message=changed", planFile)
	if code != 0 {
		t.Fatalf("apply of the staging plan with CONVOY_ENV=staging: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := revisions(statusOf(t, base+"-staging", "web")); got != "1:superseded 2:deployed" {
		t.Errorf("staging: %s", got)
	}
	if got := revisions(statusOf(t, base+"-prod", "web")); got != "1:deployed" {
		t.Errorf("prod: %s", got)
	}
}
