package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/run"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// --cache-max-size: with a bound smaller than any entry, three Stacks that
// share an OCI chart are still planned and applied (what a reconcile
// holds is never removed), and once they are idle the cache is emptied
// of their stacks and chart.
func TestCacheMaxSizeEvictsWhatIsNotInUse(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	reg.Push(t, sourcetest.Package(t, t.TempDir(), "api", "1.0.0"), "charts")
	names := []string{"one", "two", "three"}
	for _, name := range names {
		dir := filepath.Join(t.TempDir(), "stack")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		hcl := fmt.Sprintf("stack %[1]q {\n  default_namespace = %[2]q\n}\nrelease %[1]q {\n  chart   = \"oci://%[3]s/charts/api\"\n  version = \"^1.0\"\n}\n", name, ns, reg.Host)
		if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
			t.Fatal(err)
		}
		res := &source.Resolver{Cache: source.Cache{Dir: t.TempDir()}}
		if _, err := runInit(context.Background(), run.Options{Source: run.Source{Dir: dir}, ChartCache: res.Cache.Dir}, run.InitRequest{Resolver: res}); err != nil {
			t.Fatal(err)
		}
		push(t, reg, dir, name)
		create(t, c, newStack(ns, name, "oci://"+reg.Host+"/stacks/app:"+name, func(st *v1alpha1.Stack) {
			st.Spec.Interval = &metav1.Duration{Duration: time.Hour}
		}))
	}
	cacheDir := t.TempDir()
	startController(t, ns, func(o *controller.Options) {
		o.CacheDir = cacheDir
		o.CacheMaxSize = 1
	})
	for _, name := range names {
		st := waitStack(t, c, ns, name, 90*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
		if revisionsOf(st) != name+":1:deployed" {
			t.Fatalf("Stack %s:%s", name, describe(st))
		}
	}
	var stacks, charts []string
	devtest.Eventually(t, 30*time.Second, func() bool {
		stacks, _ = filepath.Glob(filepath.Join(cacheDir, "stacks", "sha256-*"))
		charts, _ = filepath.Glob(filepath.Join(cacheDir, "charts", "sha256", "*.tgz"))
		return len(stacks)+len(charts) == 0
	}, func() string { return fmt.Sprintf("the idle cache still holds %v %v", stacks, charts) })
}
