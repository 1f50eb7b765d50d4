package controller_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/config"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// privateChartsStack writes and locks (convoy init, with the credentials
// and a cache of its own) a stack of ns with an OCI chart of reg and a
// chart of the HTTP repository repo, both private: the registry's
// credentials come from spec.sourceSecretRef, the repository's password
// from the variable repo_password.
func privateChartsStack(t *testing.T, ns string, reg *sourcetest.Registry, repo *sourcetest.HTTPRepo, user, pass string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "stack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hcl := fmt.Sprintf(`stack "shop-%[1]s" {
  default_namespace = %[1]q
}
variable "repo_password" {
  type      = string
  default   = ""
  sensitive = true
}
repository "private" {
  url      = %[2]q
  username = %[3]q
  password = var.repo_password
}
release "api" {
  chart   = "oci://%[4]s/charts/api"
  version = "1.0.0"
}
release "web" {
  chart   = "private/web"
  version = "1.0.0"
}
`, ns, repo.URL(), user, reg.Host)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	res := &source.Resolver{Cache: source.Cache{Dir: t.TempDir()}, RegistryConfigs: []string{dockerConfig(t, reg.Host, user, pass)}}
	vars := config.RawValues{config.VariableValue(config.ValueFromCLIArg, "--var", "repo_password", pass)}
	if _, err := runInit(context.Background(), run.Options{Source: run.Source{Dir: dir, Variables: vars}, ChartCache: res.Cache.Dir}, run.InitRequest{Resolver: res}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The chart cache is shared by every namespace's Stacks, but a chart one
// Stack pulled with its credentials (an OCI chart with
// spec.sourceSecretRef's, a chart repository's with the password of its
// varsFrom Secret) is not served to a Stack of another namespace whose
// stack locks the same digests without the credentials: it fails at plan
// naming each chart and the Stack, nothing is applied, and no password
// shows. Given its own Secrets of the same credentials, that Stack is
// applied from the cache: the registry and the repository are asked for
// the manifest, the index and a HEAD, and download nothing again.
func TestChartCacheServesOnlyWhoMayPull(t *testing.T) {
	nsA, nsB := cluster.Namespace(t), cluster.Namespace(t)
	c := kube(t)
	const user, pass = "team-a", "s3cret-chart-pa55"
	reg := sourcetest.StartRegistry(t, user, pass)
	reg.Push(t, sourcetest.Package(t, t.TempDir(), "api", "1.0.0"), "charts")
	repo := sourcetest.NewHTTPRepo(t, false)
	repo.Publish(t, "web", "1.0.0")
	repo.Wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
	stacks := sourcetest.StartRegistry(t, "", "") // the stacks are public
	src := map[string]string{}
	layer := ""
	for _, ns := range []string{nsA, nsB} {
		dir := privateChartsStack(t, ns, reg, repo, user, pass)
		src[ns] = "oci://" + stacks.Host + "/stacks/app@" + push(t, stacks, dir, ns)
		lock, diags := source.ReadLock(dir)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		layer = lock.Releases["api"].Digest
	}
	downloads := func() (oci, http int) {
		for _, q := range repo.Requests() {
			if q == "GET /web-1.0.0.tgz" {
				http++
			}
		}
		return reg.Count("GET", "/blobs/"+layer), http
	}
	ociBefore, httpBefore := downloads() // convoy init's

	withCredentials := func(st *v1alpha1.Stack) {
		st.Labels = map[string]string{v1alpha1.ShardLabel: shardOf(nsA)}
		st.Spec.SourceSecretRef = &v1alpha1.LocalObjectReference{Name: "pull"}
		st.Spec.VarsFrom = []v1alpha1.VarsFrom{{Kind: "Secret", Name: "repo"}}
	}
	secrets := func(ns string) {
		create(t, c, dockerSecret(ns, "pull", reg.Host, user, pass))
		create(t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "repo", Namespace: ns}, StringData: map[string]string{"repo_password": pass}})
	}
	secrets(nsA)
	create(t, c, newStack(nsA, "shop", src[nsA], withCredentials))
	// One controller for both namespaces, of a shard of this test's own.
	t.Cleanup(func() { dropFinalizers(t, nsB) }) // once the controller stopped
	startController(t, nsA, func(o *controller.Options) { o.Namespace, o.Shard = "", shardOf(nsA) })
	st := waitStack(t, c, nsA, "shop", 90*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if revisionsOf(st) != "api:1:deployed web:1:deployed" {
		t.Fatalf("Stack %s/shop:%s", nsA, describe(st))
	}
	oci, web := downloads()
	if oci != ociBefore+1 || web != httpBefore+1 {
		t.Fatalf("the controller downloaded the OCI chart %d times and the repository's %d times, want once each", oci-ociBefore, web-httpBefore)
	}

	// Another namespace, the same charts locked, no credentials.
	create(t, c, newStack(nsB, "shop", src[nsB], func(st *v1alpha1.Stack) {
		st.Labels = map[string]string{v1alpha1.ShardLabel: shardOf(nsA)}
	}))
	st = waitStack(t, c, nsB, "shop", 60*time.Second, "PlanFailed", isCond("Ready", metav1.ConditionFalse, v1alpha1.ReasonPlanFailed))
	for _, want := range []string{
		"release.api: Stack " + nsB + "/shop may not pull chart oci://" + reg.Host + "/charts/api 1.0.0",
		"release.web: Stack " + nsB + "/shop may not pull chart web from " + repo.URL() + " 1.0.0",
		"401 Unauthorized",
		"set spec.sourceSecretRef",
	} {
		if !strings.Contains(st.Status.LastError, want) {
			t.Errorf("lastError lacks %q:\n%s", want, st.Status.LastError)
		}
	}
	if len(st.Status.Releases) > 0 || st.Status.Plan != nil {
		t.Errorf("Stack %s/shop was planned:%s", nsB, describe(st))
	}
	var cms corev1.ConfigMapList
	if err := c.List(context.Background(), &cms, client.InNamespace(nsB)); err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		if cm.Name == "api-api" || cm.Name == "web-web" {
			t.Errorf("ConfigMap %s/%s of a chart was applied", nsB, cm.Name)
		}
	}
	var events corev1.EventList
	if err := c.List(context.Background(), &events, client.InNamespace(nsB)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if strings.Contains(e.Message, pass) {
			t.Errorf("event %s shows the password", e.Name)
		}
	}
	if strings.Contains(describe(st), pass) {
		t.Errorf("Stack %s/shop shows the password", nsB)
	}

	// Its own Secrets of the same credentials: applied from the cache.
	secrets(nsB)
	update(t, c, nsB, "shop", withCredentials)
	st = waitStack(t, c, nsB, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if revisionsOf(st) != "api:1:deployed web:1:deployed" {
		t.Fatalf("Stack %s/shop:%s", nsB, describe(st))
	}
	if o, h := downloads(); o != oci || h != web {
		t.Fatalf("Stack %s/shop downloaded the charts again (OCI %d, repository %d)", nsB, o-oci, h-web)
	}
	if n := reg.Count("GET", "/manifests/"); n == 0 {
		t.Fatal("the registry was never asked for a manifest")
	}
}

// shardOf is a shard label of a test's own.
func shardOf(ns string) string { return "chartcache-" + ns[len(ns)-6:] }
