package release_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// managers lists an object's managedFields as manager/operation[/subresource].
func managers(mfs []metav1.ManagedFieldsEntry) []string {
	var out []string
	for _, mf := range mfs {
		s := mf.Manager + "/" + string(mf.Operation)
		if mf.Subresource != "" {
			s += "/" + mf.Subresource
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func configMapManagers(t *testing.T, ns, name string) []string {
	t.Helper()
	cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return managers(cm.ManagedFields)
}

// helmHistory is `helm history -o json`, as revision:status.
func helmHistory(t *testing.T, helm func(testing.TB, ...string) (string, error), ns, name string) string {
	t.Helper()
	out, err := helm(t, "history", name, "-n", ns, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var h []struct {
		Revision int
		Status   string
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("helm history: %v\n%s", err, out)
	}
	var s []string
	for _, r := range h {
		s = append(s, strconv.Itoa(r.Revision)+":"+r.Status)
	}
	return strings.Join(s, " ")
}

// helmValues is `helm get values -o json` of the deployed revision.
func helmValues(t *testing.T, ns, name string) string {
	t.Helper()
	out, err := cluster.Helm(t, "get", "values", name, "-n", ns, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// helm upgrade and rollback of what convoy applied need no flags: convoy
// applies as helm's own field manager and records apply_method ssa.
func TestHelmUpgradesAndRollsBackAConvoyReleaseWithoutFlags(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	ctx := context.Background()
	for _, msg := range []string{"v1", "v2"} {
		if _, err := e.Deploy(ctx, appRequest(t, ns, "web", map[string]any{"message": msg})); err != nil {
			t.Fatal(err)
		}
	}
	if got := configMapManagers(t, ns, "web-config"); !slices.Equal(got, []string{"helm/Apply"}) {
		t.Fatalf("managers after convoy applies: %v", got)
	}
	if out, err := cluster.Helm(t, "upgrade", "web", filepath.Join("testdata", "charts", "app"), "-n", ns, "--reuse-values", "--set", "replicas=2", "--wait"); err != nil {
		t.Fatalf("helm upgrade --reuse-values: %v\n%s", err, out)
	}
	if d, _ := configMapData(t, ns, "web-config"); d["message"] != "v2" || d["revision"] != "3" {
		t.Fatalf("helm upgrade not live: %v", d)
	}
	if got := helmValues(t, ns, "web"); got != `{"message":"v2","replicas":2}` {
		t.Fatalf("helm get values after helm upgrade: %s", got)
	}
	if _, err := cluster.Helm(t, "rollback", "web", "1", "-n", ns, "--wait"); err != nil {
		t.Fatal(err)
	}
	if d, _ := configMapData(t, ns, "web-config"); d["message"] != "v1" || d["revision"] != "1" {
		t.Fatalf("helm rollback not live: %v", d)
	}
	want := "1:superseded 2:superseded 3:superseded 4:deployed"
	if got := statuses(history(t, e, ns, "web")); got != want {
		t.Fatalf("convoy's history: %s, want %s", got, want)
	}
	if got := helmHistory(t, cluster.Helm, ns, "web"); got != want {
		t.Fatalf("helm history: %s, want %s", got, want)
	}
	// convoy goes on on top of helm's revisions, still one manager.
	rel, err := e.Deploy(ctx, appRequest(t, ns, "web", map[string]any{"message": "v5"}))
	if err != nil || rel.Version != 5 {
		t.Fatalf("convoy after helm: %v", err)
	}
	if got := configMapManagers(t, ns, "web-config"); !slices.Equal(got, []string{"helm/Apply"}) {
		t.Fatalf("managers: %v", got)
	}
	if got := helmValues(t, ns, "web"); got != `{"message":"v5"}` {
		t.Fatalf("helm get values: %s", got)
	}
	out, err := cluster.Helm(t, "status", "web", "-n", ns)
	if err != nil || !strings.Contains(out, "REVISION: 5") || !strings.Contains(out, "STATUS: deployed") {
		t.Fatalf("helm status: %s %v", out, err)
	}
}

// A release Helm 3 installed (client-side apply: fields owned by "helm"
// with Update operations) is upgraded by convoy without conflicts and
// without losing fields, and rolled back by helm.
func TestConvoyUpgradesAHelm3ReleaseAndHelmRollsItBack(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	ctx := context.Background()
	chartDir := filepath.Join("testdata", "charts", "app")
	// Its pods carry a label that keeps them from getting ready.
	if out, err := cluster.Helm3(t, "install", "legacy", chartDir, "-n", ns, "--set", "message=from-helm3,extraConfigMap=true,neverReady=true"); err != nil {
		t.Fatalf("helm3 install: %v\n%s", err, out)
	}
	if got := configMapManagers(t, ns, "legacy-config"); !slices.Contains(got, "helm/Update") || slices.Contains(got, "helm/Apply") {
		t.Fatalf("helm 3 did not apply client-side: %v", got)
	}
	// A field someone else set is not the release's, and stays theirs.
	cms := cluster.Client().CoreV1().ConfigMaps(ns)
	cm, err := cms.Get(ctx, "legacy-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Annotations = map[string]string{"example.com/owner": "team-a"}
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-annotate"}); err != nil {
		t.Fatal(err)
	}

	rel, err := e.Deploy(ctx, appRequest(t, ns, "legacy", map[string]any{"message": "from-convoy", "extraConfigMap": true}))
	if err != nil {
		t.Fatalf("convoy upgrade of a helm 3 release: %v", err)
	}
	if rel.Version != 2 {
		t.Fatalf("revision %d", rel.Version)
	}
	cm, err = cms.Get(ctx, "legacy-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["message"] != "from-convoy" || cm.Data["revision"] != "2" || cm.Labels["app.kubernetes.io/instance"] != "legacy" ||
		cm.Annotations["example.com/owner"] != "team-a" || cm.Annotations["meta.helm.sh/release-name"] != "legacy" {
		t.Fatalf("after convoy's upgrade: labels %v annotations %v data %v", cm.Labels, cm.Annotations, cm.Data)
	}
	// helm's client-side fields became convoy's (helm's) applied fields.
	if got := managers(cm.ManagedFields); !slices.Equal(got, []string{"helm/Apply", "kubectl-annotate/Update"}) {
		t.Fatalf("managers after convoy's upgrade: %v", got)
	}
	if d, ok := configMapData(t, ns, "legacy-extra"); !ok || d["extra"] != "yes" {
		t.Fatalf("legacy-extra lost: %v", d)
	}
	// A field the release stops setting goes away though helm 3 wrote it
	// (the pods became ready: convoy waited for them).
	dep, err := cluster.Client().AppsV1().Deployments(ns).Get(ctx, "legacy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l := dep.Spec.Template.Labels; l["devcluster.convoy.dev/never-ready"] != "" || l["app"] != "legacy" {
		t.Fatalf("pod template labels after convoy's upgrade: %v", l)
	}
	if _, err := e.Deploy(ctx, appRequest(t, ns, "legacy", map[string]any{"message": "from-convoy"})); err != nil {
		t.Fatal(err)
	}
	if _, ok := configMapData(t, ns, "legacy-extra"); ok {
		t.Fatal("legacy-extra was not deleted")
	}

	// helm 4 rolls back to helm 3's revision (client-side, as recorded;
	// not waiting: its pods never get ready).
	if out, err := cluster.Helm(t, "rollback", "legacy", "1", "-n", ns); err != nil {
		t.Fatalf("helm rollback: %v\n%s", err, out)
	}
	if d, _ := configMapData(t, ns, "legacy-config"); d["message"] != "from-helm3" || d["revision"] != "1" {
		t.Fatalf("rollback not live: %v", d)
	}
	if d, ok := configMapData(t, ns, "legacy-extra"); !ok || d["extra"] != "yes" {
		t.Fatalf("rollback did not restore legacy-extra: %v", d)
	}
	if got := helmValues(t, ns, "legacy"); got != `{"extraConfigMap":true,"message":"from-helm3","neverReady":true}` {
		t.Fatalf("helm get values: %s", got)
	}
	want := "1:superseded 2:superseded 3:superseded 4:deployed"
	if got := statuses(history(t, e, ns, "legacy")); got != want {
		t.Fatalf("convoy's history: %s", got)
	}
	for name, helm := range map[string]func(testing.TB, ...string) (string, error){"helm": cluster.Helm, "helm3": cluster.Helm3} {
		if got := helmHistory(t, helm, ns, "legacy"); got != want {
			t.Errorf("%s history: %s, want %s", name, got, want)
		}
	}
	// ... and convoy takes it from there.
	if rel, err = e.Deploy(ctx, appRequest(t, ns, "legacy", map[string]any{"message": "again"})); err != nil || rel.Version != 5 {
		t.Fatalf("convoy after helm's rollback: %v", err)
	}
	if d, _ := configMapData(t, ns, "legacy-config"); d["message"] != "again" {
		t.Fatalf("not upgraded: %v", d)
	}
}

// A release Helm 4 installed (server-side, manager helm) is upgraded by
// convoy and rolled back by helm, without flags.
func TestConvoyUpgradesAHelm4ReleaseAndHelmRollsItBack(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	ctx := context.Background()
	if _, err := cluster.Helm(t, "install", "modern", filepath.Join("testdata", "charts", "app"), "-n", ns, "--set", "message=from-helm", "--wait"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Deploy(ctx, appRequest(t, ns, "modern", map[string]any{"message": "from-convoy"})); err != nil {
		t.Fatal(err)
	}
	if got := configMapManagers(t, ns, "modern-config"); !slices.Equal(got, []string{"helm/Apply"}) {
		t.Fatalf("managers: %v", got)
	}
	if out, err := cluster.Helm(t, "rollback", "modern", "1", "-n", ns, "--wait"); err != nil {
		t.Fatalf("helm rollback: %v\n%s", err, out)
	}
	if d, _ := configMapData(t, ns, "modern-config"); d["message"] != "from-helm" {
		t.Fatalf("rollback not live: %v", d)
	}
	if got := statuses(history(t, e, ns, "modern")); got != "1:superseded 2:superseded 3:deployed" {
		t.Fatalf("history: %s", got)
	}
	if h := history(t, e, ns, "modern"); h[2].ApplyMethod != release.ApplyMethodSSA {
		t.Fatalf("helm's rollback recorded apply_method %q", h[2].ApplyMethod)
	}
}
