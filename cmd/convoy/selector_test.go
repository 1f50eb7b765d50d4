package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
)

func tieredStack(chart, ns string) string {
	return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "db" {
  chart  = %[1]q
  labels = { tier = "data" }
  values = [{ message = "db" }]
}
release "api" {
  chart      = %[1]q
  labels     = { tier = "api" }
  depends_on = [release.db]
  values     = [{ message = "api" }]
}
release "web" {
  chart      = %[1]q
  labels     = { tier = "web" }
  depends_on = [release.api]
  values     = [{ message = "web" }]
}
`, chart, ns)
}

// TestSelectors applies, destroys, renders and shows releases chosen by
// label (-l) and address (--target), with and without their dependencies.
func TestSelectors(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, tieredStack(appChart(t), ns))
	installed := func() string {
		t.Helper()
		var s []string
		for _, name := range []string{"db", "api", "web"} {
			e, err := release.NewEngine(t.Context(), cluster.RESTConfig(), release.EngineOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if h, _ := e.Storage(ns).History(t.Context(), name); len(h) > 0 && h[len(h)-1].Info.Status == release.StatusDeployed {
				s = append(s, name)
			}
		}
		return strings.Join(s, " ")
	}

	// The plan says which releases --include-deps adds, and why.
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "-l", "tier=api", "--include-deps")
	if code != 0 || !strings.Contains(out, "Selected: release.api (-l tier=api)") ||
		!strings.Contains(out, "Included: release.db, a dependency of release.api (--include-deps)") || strings.Contains(out, "release.web") {
		t.Fatalf("plan -l tier=api --include-deps: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "-l", "tier=api", "--include-deps", "--json")
	var jp struct {
		Selectors []string `json:"selectors"`
		Releases  []struct {
			Address     string   `json:"address"`
			IncludedFor []string `json:"included_for"`
		} `json:"releases"`
	}
	if err := json.Unmarshal([]byte(out), &jp); code != 0 || err != nil {
		t.Fatalf("plan --json: exit %d, %v\n%s", code, err, out)
	}
	if fmt.Sprint(jp.Selectors) != "[tier=api]" || len(jp.Releases) != 2 || jp.Releases[0].Address != "release.db" ||
		fmt.Sprint(jp.Releases[0].IncludedFor) != "[release.api]" || jp.Releases[1].IncludedFor != nil {
		t.Fatalf("plan --json: %+v", jp)
	}

	// -l alone applies only the selected release.
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "-l", "tier=api", "--auto-approve"); code != 0 {
		t.Fatalf("apply -l tier=api: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := installed(); got != "api" {
		t.Fatalf("after apply -l tier=api: %q installed", got)
	}
	// With --include-deps, what the selection depends on comes along.
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "-l", "tier=web", "--include-deps", "--auto-approve"); code != 0 {
		t.Fatalf("apply -l tier=web --include-deps: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := installed(); got != "db api web" {
		t.Fatalf("after apply -l tier=web --include-deps: %q installed", got)
	}

	// status and render with a selector show only the selected.
	code, out, _ = runConvoy(t, "status", "-C", dir, "--kubeconfig", kc, "-l", "tier!=api")
	if code != 0 || !strings.Contains(out, "db ") || !strings.Contains(out, "web ") || strings.Contains(out, "api ") {
		t.Fatalf("status -l tier!=api: exit %d\n%s", code, out)
	}
	code, out, _ = runConvoy(t, "render", "-C", dir, "-l", "tier=web")
	if code != 0 || !strings.Contains(out, "name: web-config") || strings.Contains(out, "db-config") || strings.Contains(out, "api-config") {
		t.Fatalf("render -l tier=web: exit %d\n%s", code, out)
	}
	code, _, errOut = runConvoy(t, "render", "-C", dir, "-l", "tier=cache")
	if code != 1 || !strings.Contains(errOut, "matches no release") {
		t.Fatalf("render -l tier=cache: exit %d\n%s", code, errOut)
	}

	// destroy --target uninstalls only the target.
	if code, out, errOut := runConvoy(t, "destroy", "-C", dir, "--kubeconfig", kc, "--target", "release.web", "--auto-approve"); code != 0 {
		t.Fatalf("destroy --target release.web: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := installed(); got != "db api" {
		t.Fatalf("after destroy --target release.web: %q installed", got)
	}
	// apply --target works as plan --target.
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--target", "release.web", "--auto-approve"); code != 0 {
		t.Fatalf("apply --target release.web: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := installed(); got != "db api web" {
		t.Fatalf("after apply --target release.web: %q installed", got)
	}
}
