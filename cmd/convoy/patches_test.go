package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPatches patches a chart's rendered objects: a strategic-merge patch
// adds a sidecar container (merged by name into the chart's containers) and
// an annotation, and a JSON 6902 patch changes that annotation. The plan
// shows the patched objects, the release record (helm get manifest) holds
// them, and a patch that matches nothing is an error naming it.
func TestPatches(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	stack := func(extra string) string {
		return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "web" {
  chart = %[1]q
  wait  = false
  patches = [
    {
      target = { kind = "Deployment", name = "web" }
      patch = yamlencode({
        metadata = { annotations = { "example.com/owner" = "team-a" } }
        spec = { template = { spec = { containers = [{ name = "sidecar", image = "busybox:1.36" }] } } }
      })
    },
    {
      target = { kind = "Deployment" }
      patch  = jsonencode([{ op = "replace", path = "/metadata/annotations/example.com~1owner", value = "team-b" }])
    },
    %[3]s
  ]
}
`, appChart(t), ns, extra)
	}
	dir := writeStack(t, stack(""))

	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--json")
	if code != 0 || !strings.Contains(out, `sidecar`) || !strings.Contains(out, `team-b`) || strings.Contains(out, "team-a") {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runConvoy(t, "render", "-C", dir)
	if code != 0 || !strings.Contains(out, "name: sidecar") || !strings.Contains(out, "example.com/owner: team-b") {
		t.Fatalf("render: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	manifest, err := cluster.Helm(t, "get", "manifest", "web", "-n", ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"name: sidecar", "image: busybox:1.36", "name: web", "example.com/owner: team-b"} {
		if !strings.Contains(manifest, want) {
			t.Errorf("helm get manifest lacks %q:\n%s", want, manifest)
		}
	}
	// The patched release is in sync: a new plan changes nothing.
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after apply: exit %d\n%s\n%s", code, out, errOut)
	}

	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(stack(`{ target = { kind = "Deployment", name = "nope" }, patch = yamlencode({ spec = { replicas = 3 } }) },`)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, "patches[2] matches no rendered object (target: kind Deployment, name nope)") {
		t.Fatalf("plan with a patch matching nothing: exit %d\n%s", code, errOut)
	}
}
