package stack_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/run"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A stack with a registry chart travels with its lock file: the controller
// fills its own chart cache with exactly the locked version; a release the
// lock file lacks is an error that says what to do.
func TestRemoteChartFromTheLockFile(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	charts := t.TempDir()
	reg.Push(t, sourcetest.Package(t, charts, "api", "1.0.0"), "charts")
	dir := filepath.Join(t.TempDir(), "stack")
	write := func(extra string) {
		t.Helper()
		hcl := fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "api" {
  chart   = "oci://%[2]s/charts/api"
  version = "^1.0"
}
%[3]s`, ns, reg.Host, extra)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	// convoy init, with a cache of its own: the controller's is another.
	res := &source.Resolver{Cache: source.Cache{Dir: t.TempDir()}}
	if _, err := runInit(context.Background(), run.Options{Source: run.Source{Dir: dir}, ChartCache: res.Cache.Dir}, run.InitRequest{Resolver: res}); err != nil {
		t.Fatal(err)
	}
	reg.Push(t, sourcetest.Package(t, charts, "api", "1.1.0"), "charts") // newer, not locked
	push(t, reg, dir, "v1")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", nil))
	startController(t, ns, nil)
	st := waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, ""))
	if revisionsOf(st) != "api:1:deployed" || st.Status.Plan.Summary != "applied: 1 installed" {
		t.Fatalf("applied:%s", describe(st))
	}
	h := statusOf(t, ns, "api")
	if len(h) != 1 || h[0].Chart.Metadata.Version != "1.0.0" {
		t.Fatalf("deployed %s, not the locked 1.0.0", h[0].Chart.Metadata.Version)
	}

	// A release added without convoy init.
	write(`release "worker" {
  chart   = "oci://` + reg.Host + `/charts/api"
  version = "^1.0"
}`)
	push(t, reg, dir, "v1")
	st = waitStack(t, c, ns, "shop", 60*time.Second, "failing", isCond("Ready", metav1.ConditionFalse, "PlanFailed"))
	if !strings.Contains(st.Status.LastError, `out of date for release "worker": run convoy init and push the stack again`) {
		t.Fatalf("lastError %q", st.Status.LastError)
	}
}

func statusOf(t *testing.T, ns, name string) []*release.Release {
	t.Helper()
	e, err := release.NewEngine(context.Background(), cluster.RESTConfig(), release.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := e.Storage(ns).History(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
