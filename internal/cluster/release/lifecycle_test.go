package release_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

var cluster = devtest.New()

func TestMain(m *testing.M) { os.Exit(cluster.Run(m)) }

func newEngine(t *testing.T) (*release.Engine, *bytes.Buffer) {
	t.Helper()
	var log bytes.Buffer
	e, err := release.NewEngine(context.Background(), cluster.RESTConfig(), release.EngineOptions{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	return e, &log
}

func loadChart(t *testing.T, name string) *chart.Chart {
	t.Helper()
	ch, err := chart.Load(filepath.Join("testdata", "charts", name))
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func appRequest(t *testing.T, ns, name string, values map[string]any) *release.Request {
	return &release.Request{Name: name, Namespace: ns, Chart: loadChart(t, "app"), Values: values, Wait: release.WaitReady, Timeout: 30 * time.Second}
}

func history(t *testing.T, e *release.Engine, ns, name string) []*release.Release {
	t.Helper()
	h, err := e.Storage(ns).History(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func statuses(h []*release.Release) string {
	var s []string
	for _, r := range h {
		s = append(s, strconv.Itoa(r.Version)+":"+string(r.Info.Status))
	}
	return strings.Join(s, " ")
}

func configMapData(t *testing.T, ns, name string) (map[string]string, bool) {
	t.Helper()
	cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data, true
}

// helmList is `helm list -o json` of one release.
type helmList struct {
	Name, Namespace, Revision, Status, Chart string
	AppVersion                               string `json:"app_version"`
}

func TestInstallUpgradeAndHelmInterop(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	ctx := context.Background()

	rel, err := e.Deploy(ctx, appRequest(t, ns, "web", map[string]any{"message": "v1"}))
	if err != nil {
		t.Fatal(err)
	}
	if rel.Version != 1 || rel.Info.Status != release.StatusDeployed || rel.Info.Description != "Install complete" {
		t.Fatalf("install: revision %d %s %q", rel.Version, rel.Info.Status, rel.Info.Description)
	}

	// helm reads convoy's records.
	out, err := cluster.Helm(t, "list", "-n", ns, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var list []helmList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("helm list: %v\n%s", err, out)
	}
	if len(list) != 1 || list[0].Name != "web" || list[0].Revision != "1" || list[0].Status != "deployed" || list[0].Chart != "app-0.1.0" || list[0].AppVersion != "1.0" {
		t.Fatalf("helm list: %+v", list)
	}
	manifest, err := cluster.Helm(t, "get", "manifest", "web", "-n", ns)
	if err != nil {
		t.Fatal(err)
	}
	if manifest != rel.Manifest+"\n" && manifest != rel.Manifest {
		t.Fatalf("helm get manifest differs from the recorded manifest:\n%s\n---- recorded:\n%s", manifest, rel.Manifest)
	}
	values, err := cluster.Helm(t, "get", "values", "web", "-n", ns, "-o", "json")
	if err != nil || strings.TrimSpace(values) != `{"message":"v1"}` {
		t.Fatalf("helm get values: %q %v", values, err)
	}

	// Upgrade: revision 2 deployed, 1 superseded, the change is live.
	rel, err = e.Deploy(ctx, appRequest(t, ns, "web", map[string]any{"message": "v2"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(history(t, e, ns, "web")); got != "1:superseded 2:deployed" {
		t.Fatalf("history after upgrade: %s", got)
	}
	if d, _ := configMapData(t, ns, "web-config"); d["message"] != "v2" {
		t.Fatalf("upgrade not applied: %v", d)
	}
	hist, err := cluster.Helm(t, "history", "web", "-n", ns, "-o", "json")
	if err != nil || !strings.Contains(hist, `"status":"superseded"`) || !strings.Contains(hist, `"description":"Upgrade complete"`) {
		t.Fatalf("helm history: %s %v", hist, err)
	}

	// helm rollback of a convoy release, without flags; convoy sees
	// revision 3.
	if _, err := cluster.Helm(t, "rollback", "web", "1", "-n", ns, "--wait"); err != nil {
		t.Fatal(err)
	}
	if got := statuses(history(t, e, ns, "web")); got != "1:superseded 2:superseded 3:deployed" {
		t.Fatalf("history after helm rollback: %s", got)
	}
	if d, _ := configMapData(t, ns, "web-config"); d["message"] != "v1" {
		t.Fatalf("helm rollback not live: %v", d)
	}
	// ... and convoy upgrades it on top.
	if rel, err = e.Deploy(ctx, appRequest(t, ns, "web", map[string]any{"message": "v4"})); err != nil || rel.Version != 4 {
		t.Fatalf("upgrade after helm rollback: %v", err)
	}
}

func TestConvoyUpgradesAHelmInstalledRelease(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	if _, err := cluster.Helm(t, "install", "legacy", filepath.Join("testdata", "charts", "app"), "-n", ns, "--set", "message=from-helm", "--wait"); err != nil {
		t.Fatal(err)
	}
	rel, err := e.Deploy(context.Background(), appRequest(t, ns, "legacy", map[string]any{"message": "from-convoy"}))
	if err != nil {
		t.Fatal(err)
	}
	if rel.Version != 2 {
		t.Fatalf("revision %d, want 2", rel.Version)
	}
	if got := statuses(history(t, e, ns, "legacy")); got != "1:superseded 2:deployed" {
		t.Fatalf("history: %s", got)
	}
	if d, _ := configMapData(t, ns, "legacy-config"); d["message"] != "from-convoy" {
		t.Fatalf("not upgraded: %v", d)
	}
	out, err := cluster.Helm(t, "status", "legacy", "-n", ns)
	if err != nil || !strings.Contains(out, "REVISION: 2") || !strings.Contains(out, "STATUS: deployed") {
		t.Fatalf("helm status after convoy upgrade: %s %v", out, err)
	}
}

// event is one watched creation or completion, ordered by resourceVersion.
type event struct {
	rv   int
	what string
}

func TestHooksRunInWeightOrderAroundResources(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var events []event
	// The watcher ends once it has seen the sentinels created after the
	// deploy: a watch delivers in resourceVersion order, so every earlier
	// event of its kind has been delivered by then.
	const sentinel = "zz-sentinel"
	done := make(chan struct{})
	jobs, err := cluster.Client().BatchV1().Jobs(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cms, err := cluster.Client().CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(done)
		completed := map[string]bool{}
		var jobSentinel, cmSentinel bool
		for !jobSentinel || !cmSentinel {
			select {
			case ev, ok := <-jobs.ResultChan():
				if !ok {
					return
				}
				j, ok := ev.Object.(*batchv1.Job)
				if !ok {
					continue
				}
				if j.Name == sentinel {
					jobSentinel = true
					continue
				}
				rv, _ := strconv.Atoi(j.ResourceVersion)
				if ev.Type == watch.Added {
					events = append(events, event{rv, "create " + j.Name})
				}
				for _, c := range j.Status.Conditions {
					if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue && !completed[j.Name] {
						completed[j.Name] = true
						events = append(events, event{rv, "complete " + j.Name})
					}
				}
			case ev, ok := <-cms.ResultChan():
				if !ok {
					return
				}
				if cm, ok := ev.Object.(*corev1.ConfigMap); ok && cm.Name == sentinel {
					cmSentinel = true
				} else if ok && ev.Type == watch.Added && cm.Name != "kube-root-ca.crt" {
					rv, _ := strconv.Atoi(cm.ResourceVersion)
					events = append(events, event{rv, "create " + cm.Name})
				}
			case <-ctx.Done():
				return
			}
		}
	}()

	rel, err := e.Deploy(ctx, &release.Request{Name: "hk", Namespace: ns, Chart: loadChart(t, "hooks"), Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Client().CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: sentinel}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	suspended := true
	if _, err := cluster.Client().BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: sentinel},
		Spec: batchv1.JobSpec{Suspend: &suspended, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox:1.36"}},
		}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the watches did not deliver the sentinels within 30s")
	}
	cancel()
	slices.SortStableFunc(events, func(a, b event) int { return a.rv - b.rv })
	var got []string
	for _, ev := range events {
		got = append(got, ev.what)
	}
	want := []string{
		"create pre-minus-five", "complete pre-minus-five",
		"create pre-zero", "complete pre-zero",
		"create pre-five", "complete pre-five",
		"create hk-main",
		"create post", "complete post",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("cluster saw\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	// Delete policies: hook-succeeded hooks are gone, the others remain.
	for name, wantExists := range map[string]bool{"pre-minus-five": true, "pre-zero": false, "pre-five": true, "post": false} {
		_, err := cluster.Client().BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		if exists := err == nil; exists != wantExists {
			t.Errorf("hook Job %s exists=%v, want %v (%v)", name, exists, wantExists, err)
		}
	}
	for _, h := range rel.Hooks {
		if slices.Contains(h.Events, chart.HookPreInstall) && h.LastRun.Phase != release.HookPhaseSucceeded {
			t.Errorf("hook %s recorded phase %q", h.Name, h.LastRun.Phase)
		}
	}
}

func TestWaitTimeoutFailsWithThePodReason(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	req := appRequest(t, ns, "stuck", map[string]any{"neverReady": true})
	req.Timeout = 3 * time.Second
	rel, err := e.Deploy(context.Background(), req)
	if err == nil {
		t.Fatal("deploy of never-ready pods succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, "apps/v1 Deployment "+ns+"/stuck") || !strings.Contains(msg, "ContainersNotReady") || !strings.Contains(msg, "timed out after 3s") {
		t.Fatalf("error does not name the deployment and the pod reason:\n%s", msg)
	}
	if rel == nil || rel.Info.Status != release.StatusFailed || !strings.Contains(rel.Info.Description, "apps/v1 Deployment "+ns+"/stuck") {
		t.Fatalf("record: %+v", rel)
	}
	if got := statuses(history(t, e, ns, "stuck")); got != "1:failed" {
		t.Fatalf("history %s", got)
	}
}

func TestAtomicUpgradeRestoresThePreviousRevision(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	ctx := context.Background()
	if _, err := e.Deploy(ctx, appRequest(t, ns, "web", map[string]any{"message": "good"})); err != nil {
		t.Fatal(err)
	}
	req := appRequest(t, ns, "web", map[string]any{"message": "bad", "neverReady": true})
	req.Timeout, req.Atomic = 3*time.Second, true
	rel, err := e.Deploy(ctx, req)
	if err == nil || !strings.Contains(err.Error(), "rolled back to revision 1") {
		t.Fatalf("atomic upgrade: %v", err)
	}
	if rel.Version != 3 || rel.Info.Status != release.StatusDeployed || rel.Info.Description != "Rollback to 1" {
		t.Fatalf("returned record %d %s %q", rel.Version, rel.Info.Status, rel.Info.Description)
	}
	if got := statuses(history(t, e, ns, "web")); got != "1:superseded 2:failed 3:deployed" {
		t.Fatalf("history %s", got)
	}
	if d, _ := configMapData(t, ns, "web-config"); d["message"] != "good" {
		t.Fatalf("previous values not restored: %v", d)
	}
	// ... and serving: the restored Deployment's pods are ready again.
	d, err := cluster.Client().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, bad := d.Spec.Template.Labels["devcluster.convoy.dev/never-ready"]; bad || !deploymentAvailable(d) {
		t.Fatalf("restored deployment not serving: labels %v status %+v", d.Spec.Template.Labels, d.Status)
	}
}

func deploymentAvailable(d *appsv1.Deployment) bool {
	return d.Status.ObservedGeneration >= d.Generation && d.Status.AvailableReplicas == *d.Spec.Replicas && d.Status.UpdatedReplicas == *d.Spec.Replicas
}

func TestAtomicInstallLeavesNothingBehind(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	req := appRequest(t, ns, "doomed", map[string]any{"neverReady": true, "extraConfigMap": true})
	req.Timeout, req.Atomic = 3*time.Second, true
	if _, err := e.Deploy(context.Background(), req); err == nil || !strings.Contains(err.Error(), "uninstalled (atomic)") {
		t.Fatalf("atomic install: %v", err)
	}
	if h := history(t, e, ns, "doomed"); len(h) != 0 {
		t.Fatalf("records left: %s", statuses(h))
	}
	for _, name := range []string{"doomed-config", "doomed-extra"} {
		if _, ok := configMapData(t, ns, name); ok {
			t.Errorf("ConfigMap %s left behind", name)
		}
	}
	if _, err := cluster.Client().AppsV1().Deployments(ns).Get(context.Background(), "doomed", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Deployment left behind: %v", err)
	}
}

func TestCleanupOnFailRemovesWhatTheUpgradeCreated(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	ctx := context.Background()
	if _, err := e.Deploy(ctx, appRequest(t, ns, "web", nil)); err != nil {
		t.Fatal(err)
	}
	req := appRequest(t, ns, "web", map[string]any{"neverReady": true, "extraConfigMap": true})
	req.Timeout, req.CleanupOnFail = 3*time.Second, true
	if _, err := e.Deploy(ctx, req); err == nil {
		t.Fatal("upgrade to never-ready pods succeeded")
	}
	if _, ok := configMapData(t, ns, "web-extra"); ok {
		t.Fatal("cleanup_on_fail left the ConfigMap the failed upgrade created")
	}
	if _, ok := configMapData(t, ns, "web-config"); !ok {
		t.Fatal("cleanup_on_fail deleted an object that existed before the upgrade")
	}
	if got := statuses(history(t, e, ns, "web")); got != "1:deployed 2:failed" {
		t.Fatalf("history %s", got)
	}
}

func TestFailingPreUpgradeHookChangesNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	ctx := context.Background()
	if _, err := e.Deploy(ctx, appRequest(t, ns, "web", map[string]any{"message": "before"})); err != nil {
		t.Fatal(err)
	}
	_, err := e.Deploy(ctx, appRequest(t, ns, "web", map[string]any{"message": "after", "extraConfigMap": true, "preUpgradeHook": true, "preUpgradeHookFails": true}))
	var hookErr *release.HookError
	if !errors.As(err, &hookErr) || hookErr.Hook != "app/templates/hook.yaml" || !strings.Contains(err.Error(), "pre-upgrade") {
		t.Fatalf("want a pre-upgrade HookError naming app/templates/hook.yaml, got %v", err)
	}
	// The event, the hook and its Job are each named once.
	want := "pre-upgrade hook app/templates/hook.yaml: batch/v1 Job " + ns + "/web-pre-upgrade: failed: BackoffLimitExceeded"
	if msg := err.Error(); !strings.HasPrefix(msg, want) || strings.Count(msg, "pre-upgrade hook") != 1 || strings.Count(msg, "batch/v1 Job") != 1 {
		t.Fatalf("hook error:\n%s\nwant it to start with\n%s", msg, want)
	}
	if h := history(t, e, ns, "web"); !strings.HasPrefix(h[len(h)-1].Info.Description, `Upgrade "web" failed: `+want) {
		t.Fatalf("failed revision's description: %s", h[len(h)-1].Info.Description)
	}
	if d, _ := configMapData(t, ns, "web-config"); d["message"] != "before" {
		t.Fatalf("a resource changed although the pre-upgrade hook failed: %v", d)
	}
	if _, ok := configMapData(t, ns, "web-extra"); ok {
		t.Fatal("a resource was created although the pre-upgrade hook failed")
	}
	h := history(t, e, ns, "web")
	if got := statuses(h); got != "1:deployed 2:failed" || !strings.Contains(h[1].Info.Description, "web-pre-upgrade") {
		t.Fatalf("history %s, description %q", got, h[1].Info.Description)
	}
}

func TestInvalidManifestRecordsNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	_, err := e.Deploy(context.Background(), appRequest(t, ns, "broken", map[string]any{"invalid": true}))
	if err == nil || !strings.Contains(err.Error(), "app/templates/invalid.yaml") || !strings.Contains(err.Error(), "apps/v1 Deployment "+ns+"/broken-broken") {
		t.Fatalf("want an error naming the template and the object, got %v", err)
	}
	if h := history(t, e, ns, "broken"); len(h) != 0 {
		t.Fatalf("a revision was recorded: %s", statuses(h))
	}
	if _, ok := configMapData(t, ns, "broken-config"); ok {
		t.Fatal("objects were applied although the release is invalid")
	}
}

func TestUninstallRunsHooksAndRemovesEverything(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run("keep_history="+strconv.FormatBool(keep), func(t *testing.T) {
			ns := cluster.Namespace(t)
			e, _ := newEngine(t)
			ctx := context.Background()
			if _, err := e.Deploy(ctx, &release.Request{Name: "hk", Namespace: ns, Chart: loadChart(t, "hooks"), Timeout: 30 * time.Second}); err != nil {
				t.Fatal(err)
			}
			res, err := e.Uninstall(ctx, release.UninstallRequest{Name: "hk", Namespace: ns, KeepHistory: keep, Wait: true, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := configMapData(t, ns, "hk-main"); ok {
				t.Fatal("release resource survived uninstall")
			}
			if _, err := cluster.Client().BatchV1().Jobs(ns).Get(ctx, "pre-delete", metav1.GetOptions{}); err != nil {
				t.Fatalf("pre-delete hook did not run: %v", err)
			}
			h := history(t, e, ns, "hk")
			if keep {
				if got := statuses(h); got != "1:uninstalled" || res.Release.Info.Description != "Uninstallation complete" {
					t.Fatalf("history %s", got)
				}
			} else if len(h) != 0 {
				t.Fatalf("records left: %s", statuses(h))
			}
		})
	}
}

func TestPendingReleaseIsReportedAndRecovered(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	ctx := context.Background()
	if _, err := e.Deploy(ctx, appRequest(t, ns, "web", nil)); err != nil {
		t.Fatal(err)
	}
	// A crashed upgrade: revision 2 left pending-upgrade.
	store := e.Storage(ns)
	last, _ := store.Last(ctx, "web")
	crashed := *last
	crashed.Version, crashed.Info = 2, &release.Info{Status: release.StatusPendingUpgrade, LastDeployed: time.Now().Add(-5 * time.Minute), Description: "Preparing upgrade"}
	if err := store.Create(ctx, &crashed); err != nil {
		t.Fatal(err)
	}
	_, err := e.Deploy(ctx, appRequest(t, ns, "web", map[string]any{"message": "x"}))
	var pe *release.PendingError
	if !errors.As(err, &pe) || pe.Status != release.StatusPendingUpgrade || !strings.Contains(err.Error(), "convoy recover web") || !strings.Contains(err.Error(), "5m0s ago") {
		t.Fatalf("want a PendingError with age and remedy, got %v", err)
	}
	if _, err := e.Recover(ctx, "web", ns); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Deploy(ctx, appRequest(t, ns, "web", map[string]any{"message": "x"})); err != nil {
		t.Fatalf("deploy after recover: %v", err)
	}
	if got := statuses(history(t, e, ns, "web")); got != "1:superseded 2:failed 3:deployed" {
		t.Fatalf("history %s", got)
	}
	if _, err := e.Recover(ctx, "web", ns); err == nil {
		t.Fatal("recover of a release that is not pending succeeded")
	}
}

func TestUpgradeDeletesRemovedResourcesButKeepsResourcePolicyKeep(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	ctx := context.Background()
	if _, err := e.Deploy(ctx, appRequest(t, ns, "web", map[string]any{"extraConfigMap": true, "keptConfigMap": true})); err != nil {
		t.Fatal(err)
	}
	if _, ok := configMapData(t, ns, "web-extra"); !ok {
		t.Fatal("extra ConfigMap not created")
	}
	if _, err := e.Deploy(ctx, appRequest(t, ns, "web", nil)); err != nil {
		t.Fatal(err)
	}
	if _, ok := configMapData(t, ns, "web-extra"); ok {
		t.Fatal("upgrade left an object the new revision no longer has")
	}
	if _, ok := configMapData(t, ns, "web-kept"); !ok {
		t.Fatal("upgrade deleted an object annotated helm.sh/resource-policy: keep")
	}
}

func TestInvalidYAMLNamesTemplateAndLine(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	_, err := e.Deploy(context.Background(), appRequest(t, ns, "yaml", map[string]any{"brokenYAML": true}))
	if err == nil || !strings.Contains(err.Error(), "app/templates/broken-yaml.yaml") || !regexp.MustCompile(`line \d+`).MatchString(err.Error()) {
		t.Fatalf("want an error naming the template file and line, got %v", err)
	}
	if h := history(t, e, ns, "yaml"); len(h) != 0 {
		t.Fatalf("a revision was recorded: %s", statuses(h))
	}
}

func TestExistingObjectsAreAdoptedOnlyWithTakeOwnership(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	ctx := context.Background()
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config", Namespace: ns}, Data: map[string]string{"message": "hand-made"}}
	if _, err := cluster.Client().CoreV1().ConfigMaps(ns).Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := e.Deploy(ctx, appRequest(t, ns, "web", nil))
	var oe *release.OwnershipError
	if !errors.As(err, &oe) || oe.Ref.String() != "v1 ConfigMap "+ns+"/web-config" {
		t.Fatalf("want an OwnershipError for the ConfigMap, got %v", err)
	}
	if h := history(t, e, ns, "web"); len(h) != 0 {
		t.Fatalf("a revision was recorded: %s", statuses(h))
	}
	if d, _ := configMapData(t, ns, "web-config"); d["message"] != "hand-made" {
		t.Fatalf("the existing object was changed: %v", d)
	}
	req := appRequest(t, ns, "web", nil)
	req.TakeOwnership = true
	if _, err := e.Deploy(ctx, req); err != nil {
		t.Fatal(err)
	}
	cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{})
	if err != nil || cm.Data["message"] != "hello" || cm.Annotations["meta.helm.sh/release-name"] != "web" || cm.Labels["app.kubernetes.io/managed-by"] != "Helm" {
		t.Fatalf("not adopted: %+v %v", cm, err)
	}
}

func TestCRDsAreInstalledBeforeTheirCustomResources(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	rel, err := e.Deploy(context.Background(), &release.Request{Name: "cr", Namespace: ns, Chart: loadChart(t, "crd"), Wait: release.WaitReady, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rel.Manifest, "CustomResourceDefinition") {
		t.Fatal("the CRD from crds/ is in the release manifest; Helm keeps it out")
	}
	got, err := e.Kube().Get(context.Background(), kube.Ref{Group: "test.convoy.dev", Version: "v1", Kind: "Widget", Namespace: ns, Name: "cr-widget"})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 3 {
		t.Fatalf("widget spec %v", got.Object["spec"])
	}
}

func TestLookupReadsTheLiveCluster(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	ctx := context.Background()
	src := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "source", Namespace: ns}, Data: map[string]string{"value": "from-the-cluster"}}
	if _, err := cluster.Client().CoreV1().ConfigMaps(ns).Create(ctx, src, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Deploy(ctx, appRequest(t, ns, "web", map[string]any{"lookupFrom": "source"})); err != nil {
		t.Fatal(err)
	}
	d, _ := configMapData(t, ns, "web-looked-up")
	if d["found"] != "from-the-cluster" {
		t.Fatalf("lookup of an existing object rendered %q", d["found"])
	}
	if n, _ := strconv.Atoi(d["namespaces"]); n < 4 {
		t.Fatalf("lookup list of namespaces rendered %q", d["namespaces"])
	}
	if _, err := e.Deploy(ctx, appRequest(t, ns, "web", map[string]any{"lookupFrom": "missing"})); err != nil {
		t.Fatal(err)
	}
	if d, _ := configMapData(t, ns, "web-looked-up"); d["found"] != "nothing" {
		t.Fatalf("lookup of a missing object rendered %q", d["found"])
	}
}

// TestObjectRenderedOnlyWhenLookupMissesItIsInstalled: a rendering whose
// lookups missed its own objects is rendered again with them found (so that
// a checksum of a generated Secret agrees with it), but a chart that renders
// an object only while lookup misses it keeps its first rendering.
func TestObjectRenderedOnlyWhenLookupMissesItIsInstalled(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	req := &release.Request{Name: "one", Namespace: ns, Chart: loadChart(t, "created-once"), Timeout: 30 * time.Second}
	if _, err := e.Deploy(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if d, ok := configMapData(t, ns, "one-once"); !ok || d["created"] != "on install" {
		t.Fatalf("the object was not installed: %v", d)
	}
}

// An object the plan found absent (Request.Absent) is created without
// being read, create-only: when someone created it since, the apply is
// refused as the ownership check refuses it, naming the object, and leaves
// it as it was; one carrying this release's ownership is applied, and
// take_ownership adopts any.
func TestObjectsFoundAbsentAreCreatedOnlyIfStillAbsent(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	ctx := context.Background()
	// create makes release name's ConfigMap by hand, with annotations, and
	// returns the request of a plan that saw it absent.
	create := func(name string, annotations map[string]string) *release.Request {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-config", Namespace: ns, Annotations: annotations}, Data: map[string]string{"message": "hand-made"}}
		if _, err := cluster.Client().CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		req := appRequest(t, ns, name, nil)
		req.Wait, req.Absent = release.WaitNone, []kube.Ref{{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: cm.Name}}
		return req
	}

	rel, err := e.Deploy(ctx, create("web", nil))
	var oe *release.OwnershipError
	if !errors.As(err, &oe) || oe.Ref.String() != "v1 ConfigMap "+ns+"/web-config" {
		t.Fatalf("want an OwnershipError for the ConfigMap, got %v", err)
	}
	if d, _ := configMapData(t, ns, "web-config"); d["message"] != "hand-made" {
		t.Fatalf("the existing object was changed: %v", d)
	}
	if rel == nil || rel.Info.Status != release.StatusFailed || !strings.Contains(rel.Info.Description, "web-config exists and cannot be imported") {
		t.Fatalf("the record does not say what happened: %+v", rel)
	}

	if _, err := e.Deploy(ctx, create("mine", map[string]string{"meta.helm.sh/release-name": "mine", "meta.helm.sh/release-namespace": ns})); err != nil {
		t.Fatal(err)
	}
	if d, _ := configMapData(t, ns, "mine-config"); d["message"] != "hello" {
		t.Fatalf("the release's own object was not applied: %v", d)
	}

	req := create("adopter", nil)
	req.TakeOwnership = true
	if _, err := e.Deploy(ctx, req); err != nil {
		t.Fatal(err)
	}
	cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(ctx, "adopter-config", metav1.GetOptions{})
	if err != nil || cm.Data["message"] != "hello" || cm.Annotations["meta.helm.sh/release-name"] != "adopter" {
		t.Fatalf("not adopted: %+v %v", cm, err)
	}
}

// history_max prunes the oldest revisions once the history read before a
// deploy and the new revision exceed it (a deploy within it lists nothing
// to prune).
func TestHistoryMaxPrunesOldRevisions(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	for i, message := range []string{"one", "two", "three"} {
		req := appRequest(t, ns, "kept", map[string]any{"message": message})
		req.Wait, req.HistoryMax = release.WaitNone, 2
		if _, err := e.Deploy(context.Background(), req); err != nil {
			t.Fatalf("deploy %d: %v", i+1, err)
		}
	}
	if got, want := statuses(history(t, e, ns, "kept")), "2:superseded 3:deployed"; got != want {
		t.Fatalf("history %s, want %s", got, want)
	}
}

// TestUpgradesPrepareFromTheNewestRecords: preparing an upgrade decodes
// the newest and the deployed record only (the others as their labels say:
// a large release's revisions are not each decoded), and each revision
// keeps the install's first-deployed time, as Helm's upgrades do.
func TestUpgradesPrepareFromTheNewestRecords(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	ctx := context.Background()
	for i, message := range []string{"one", "two", "three", "four"} {
		req := appRequest(t, ns, "web", map[string]any{"message": message})
		req.Wait = release.WaitNone
		if i == 3 {
			p, err := e.Prepare(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			var decoded []int
			for _, r := range p.History {
				if r.Chart != nil {
					decoded = append(decoded, r.Version)
				}
			}
			if len(p.History) != 3 || fmt.Sprint(decoded) != "[3]" || p.Deployed == nil || p.Deployed.Manifest == "" {
				t.Fatalf("prepared from %d records, decoded %v, want 3 and [3] (the newest, deployed)", len(p.History), decoded)
			}
		}
		if _, err := e.Deploy(ctx, req); err != nil {
			t.Fatalf("deploy %d: %v", i+1, err)
		}
	}
	h := history(t, e, ns, "web")
	if got := statuses(h); got != "1:superseded 2:superseded 3:superseded 4:deployed" {
		t.Fatalf("history %s", got)
	}
	first := h[0].Info.FirstDeployed
	for _, r := range h {
		if !r.Info.FirstDeployed.Equal(first) {
			t.Fatalf("revision %d was first deployed %s, revision 1 %s", r.Version, r.Info.FirstDeployed, first)
		}
		if r.Chart == nil || r.Manifest == "" {
			t.Fatalf("revision %d lost its chart or manifest", r.Version)
		}
	}
}
