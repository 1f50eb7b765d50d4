package release_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/testfiles"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// countedChart writes a chart of .Values.count ConfigMaps, cm-0, cm-1, …
func countedChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "counted")
	testfiles.Write(t, dir, map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: counted\nversion: 0.1.0\n",
		"values.yaml": "count: 4\n",
		"templates/configmaps.yaml": `{{- range $i := until (int .Values.count) }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-{{ $i }}
data:
  index: "{{ $i }}"
{{- end }}
`,
	})
	return dir
}

// An atomic upgrade from 4 ConfigMaps to 6 in a namespace whose quota
// refuses the 6th is rolled back, and the rollback deletes the ConfigMap
// the failed upgrade created, as helm 4's --rollback-on-failure does on
// the same chart and quota: nothing is left counting against the quota.
func TestAtomicRollbackDeletesWhatTheFailedUpgradeCreated(t *testing.T) {
	dir := countedChart(t)
	ch, err := chart.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	deploy := func(count int, atomic bool) (*release.Release, error) {
		return e.Deploy(ctx, &release.Request{Name: "counted", Namespace: ns, Chart: ch, Values: map[string]any{"count": count}, Atomic: atomic, Timeout: 30 * time.Second})
	}
	if _, err := deploy(4, false); err != nil {
		t.Fatal(err)
	}
	cluster.LimitConfigMaps(t, ns, 5)
	rel, err := deploy(6, true)
	if err == nil || !strings.Contains(err.Error(), "rolled back to revision 1") || !strings.Contains(err.Error(), "exceeded quota") {
		t.Fatalf("atomic upgrade past the quota: %v", err)
	}
	if rel.Version != 3 || rel.Info.Status != release.StatusDeployed {
		t.Fatalf("returned record %d %s", rel.Version, rel.Info.Status)
	}
	want := "cm-0 cm-1 cm-2 cm-3"
	if got := cluster.HelmConfigMaps(t, ns); got != want {
		t.Errorf("after convoy's atomic rollback: %s, want %s", got, want)
	}
	if got := helmHistory(t, cluster.Helm, ns, "counted"); got != "1:superseded 2:failed 3:deployed" {
		t.Errorf("helm history: %s", got)
	}

	// helm 4 on the same shape.
	hns := cluster.Namespace(t)
	if out, err := cluster.Helm(t, "install", "counted", dir, "-n", hns, "--set", "count=4"); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	cluster.LimitConfigMaps(t, hns, 5)
	out, err := cluster.Helm(t, "upgrade", "counted", dir, "-n", hns, "--set", "count=6", "--rollback-on-failure", "--timeout", "30s")
	if err == nil {
		t.Fatalf("helm upgrade past the quota succeeded:\n%s", out)
	}
	if got := helmHistory(t, cluster.Helm, hns, "counted"); got != "1:superseded 2:failed 3:deployed" {
		t.Errorf("helm's own history: %s", got)
	}
	if got := cluster.HelmConfigMaps(t, hns); got != want {
		t.Errorf("after helm's rollback: %s, want %s (convoy left %s)", got, want, cluster.HelmConfigMaps(t, ns))
	}

	// helm 3's --atomic, the same.
	h3ns := cluster.Namespace(t)
	if out, err := cluster.Helm3(t, "install", "counted", dir, "-n", h3ns, "--set", "count=4"); err != nil {
		t.Fatalf("helm 3 install: %v\n%s", err, out)
	}
	cluster.LimitConfigMaps(t, h3ns, 5)
	if out, err := cluster.Helm3(t, "upgrade", "counted", dir, "-n", h3ns, "--set", "count=6", "--atomic", "--timeout", "30s"); err == nil {
		t.Fatalf("helm 3 upgrade past the quota succeeded:\n%s", out)
	}
	if got := cluster.HelmConfigMaps(t, h3ns); got != want {
		t.Errorf("after helm 3's atomic rollback: %s, want %s", got, want)
	}
}

// The rollback deletes only what the release still owns: an object of
// the failed revision that another release took over since stays.
func TestRollbackLeavesALeftoverSomeoneElseOwns(t *testing.T) {
	dir := countedChart(t)
	ch, err := chart.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	deploy := func(count int) error {
		_, err := e.Deploy(ctx, &release.Request{Name: "counted", Namespace: ns, Chart: ch, Values: map[string]any{"count": count}, Timeout: 30 * time.Second})
		return err
	}
	if err := deploy(4); err != nil {
		t.Fatal(err)
	}
	cluster.LimitConfigMaps(t, ns, 5)
	if err := deploy(6); err == nil {
		t.Fatal("upgrade past the quota succeeded")
	}
	// Whichever of cm-4 and cm-5 the quota let in, another release takes
	// it over.
	var created string
	for _, name := range []string{"cm-4", "cm-5"} {
		cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		created = name
		cm.Annotations["meta.helm.sh/release-name"] = "other"
		if _, err := cluster.Client().CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if created == "" {
		t.Fatal("the failed upgrade created neither cm-4 nor cm-5")
	}
	if _, err := e.Rollback(ctx, release.RollbackRequest{Name: "counted", Namespace: ns, Revision: 1}); err != nil {
		t.Fatal(err)
	}
	if got, want := cluster.HelmConfigMaps(t, ns), fmt.Sprintf("cm-0 cm-1 cm-2 cm-3 %s", created); got != want {
		t.Errorf("after the rollback: %s, want %s", got, want)
	}
}
