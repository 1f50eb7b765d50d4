package stackset_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/controller/controllertest"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	"github.com/convoy-sh/convoy/internal/testfiles"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var cluster = controllertest.Cluster

// fleetStack writes a stack of one release (a ConfigMap whose message
// is api-REGION-VERSION) on the cluster block "target".
func fleetStack(t *testing.T, ns, version string) string {
	t.Helper()
	return namedFleetStack(t, "fleet", ns, version)
}

// namedFleetStack is fleetStack with another stack name: a second stack
// on the same clusters.
func namedFleetStack(t *testing.T, name, ns, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "stack")
	testfiles.Write(t, filepath.Join(dir, "charts", "cm"), map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: cm\nversion: 0.1.0\n",
		"values.yaml": "message: none\n",
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  message: {{ .Values.message | quote }}
`,
	})
	hcl := fmt.Sprintf(`
stack %q {
  default_namespace = %q
}
cluster "target" {}
variable "region" {
  default = "none"
}
release "api" {
  chart            = "./charts/cm"
  cluster          = cluster.target
  create_namespace = true
  values           = [{ message = "api-${var.region}-%s" }]
}
`, name, ns, version)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pinLog records, from a watch, when each Stack was first seen pinned to
// a digest and Ready on it.
type pinLog struct {
	mu            sync.Mutex
	pinned, ready map[string]time.Time // "stack@digest"
	notes         []string             // what ended a watch
}

func watchPins(t *testing.T, ns string) *pinLog {
	t.Helper()
	s, err := ctl.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	wc, err := client.NewWithWatch(cluster.RESTConfig(), client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l := &pinLog{pinned: map[string]time.Time{}, ready: map[string]time.Time{}}
	record := func(st *v1alpha1.Stack) {
		ref, err := artifact.ParseRef(st.Spec.Source)
		if err != nil || ref.Digest == "" {
			return
		}
		k, now := st.Name+"@"+ref.Digest, time.Now()
		rc := meta.FindStatusCondition(st.Status.Conditions, "Ready")
		ready := rc != nil && rc.Status == metav1.ConditionTrue && rc.ObservedGeneration == st.Generation &&
			st.Status.Source != nil && st.Status.Source.Digest == ref.Digest
		l.mu.Lock()
		defer l.mu.Unlock()
		if _, ok := l.pinned[k]; !ok {
			l.pinned[k] = now
		}
		if _, ok := l.ready[k]; !ok && ready {
			l.ready[k] = now
		}
	}
	// The API server may end a watch at any time: it is resumed from the
	// last resource version seen, so no change of a Stack goes unseen.
	rv := ""
	w, err := wc.Watch(ctx, &v1alpha1.StackList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			for ev := range w.ResultChan() {
				st, ok := ev.Object.(*v1alpha1.Stack)
				if !ok {
					l.mu.Lock()
					l.notes = append(l.notes, fmt.Sprintf("%s %v", ev.Type, ev.Object))
					l.mu.Unlock()
					rv = "" // an expired version: resume from now
					continue
				}
				rv = st.ResourceVersion
				if ev.Type != watch.Deleted {
					record(st)
				}
			}
			if ctx.Err() != nil {
				return
			}
			for {
				if w, err = wc.Watch(ctx, &v1alpha1.StackList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}}); err == nil || ctx.Err() != nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if ctx.Err() != nil {
				return
			}
		}
	}()
	return l
}

func (l *pinLog) times(stack, digest string) (pinned, ready time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pinned[stack+"@"+digest], l.ready[stack+"@"+digest]
}

func getStackSet(t *testing.T, c client.Client, ns, name string) *v1alpha1.StackSet {
	t.Helper()
	var ss v1alpha1.StackSet
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &ss); err != nil {
		t.Fatal(err)
	}
	return &ss
}

func fleetPlan(t *testing.T, ss *v1alpha1.StackSet) string {
	t.Helper()
	var b bytes.Buffer
	if err := ctl.WriteFleetPlan(&b, ss); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func waitStackSet(t *testing.T, c client.Client, ns, name string, timeout time.Duration, what string, ok func(*v1alpha1.StackSet) bool) *v1alpha1.StackSet {
	t.Helper()
	var last *v1alpha1.StackSet
	devtest.Eventually(t, timeout, func() bool {
		last = getStackSet(t, c, ns, name)
		return ok(last)
	}, func() string { return fmt.Sprintf("StackSet %s/%s not %s:\n%s", ns, name, what, fleetPlan(t, last)) })
	return last
}

func readyIs(status metav1.ConditionStatus, reason string) func(*v1alpha1.StackSet) bool {
	return func(ss *v1alpha1.StackSet) bool {
		c := meta.FindStatusCondition(ss.Status.Conditions, "Ready")
		return c != nil && c.Status == status && c.Reason == reason && ss.Status.ObservedGeneration == ss.Generation
	}
}

func updateStackSet(t *testing.T, c client.Client, ns, name string, mod func(*v1alpha1.StackSet)) {
	t.Helper()
	for range 10 {
		ss := getStackSet(t, c, ns, name)
		mod(ss)
		err := c.Update(context.Background(), ss)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	t.Fatal("StackSet update: conflicts")
}

// message is the api ConfigMap's message on a cluster ("" when absent).
func message(t *testing.T, k kubernetes.Interface, ns string) string {
	t.Helper()
	cm, err := k.CoreV1().ConfigMaps(ns).Get(context.Background(), "api-config", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data["message"]
}

func register(t *testing.T, c client.Client, ns, name, kubeconfig string, labels map[string]string, allow ...string) {
	t.Helper()
	kc, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.RegisterCluster(context.Background(), c, ctl.RegisterRequest{
		Namespace: ns, Name: name, Kubeconfig: kc, Labels: labels, AllowedNamespaces: allow,
	}); err != nil {
		t.Fatal(err)
	}
}

// The acceptance, on three real control planes (the shared
// devcluster and two started here): three registrations; a StackSet over
// them plans all three before anything moves (the grouped fleet plan),
// then rolls out step by step; a new digest reaches step 2 only after
// step 1 baked, and a gate failing on step 2 halts the rollout with the
// third cluster unchanged; pause holds a newer digest; a hand edit is
// restored; a cluster leaving the selection loses its Stack, not its
// release. A tenant's StackSet may not select a registration that does
// not allow its namespace; bad input stalls naming what and why.
func TestFleet(t *testing.T) {
	ctx := context.Background()
	ns := cluster.Namespace(t)
	c := controllertest.Kube(t)
	tools := devtest.Tools(t)
	var others [2]*devcluster.Cluster
	var errs [2]error
	var wg sync.WaitGroup
	for i := range others {
		wg.Go(func() { others[i], errs[i] = devcluster.Start(ctx, devcluster.Options{Tools: tools, Nodes: 1}) })
	}
	wg.Wait()
	for i, o := range others {
		if o != nil {
			t.Cleanup(o.Stop)
		}
		if errs[i] != nil {
			t.Fatalf("cluster %d: %v", i+2, errs[i])
		}
	}
	kubes := map[string]kubernetes.Interface{"c1": cluster.Client()}
	for i, o := range others {
		kubes[fmt.Sprintf("c%d", i+2)] = kubernetes.NewForConfigOrDie(o.RESTConfig())
	}
	for _, k := range []string{"c2", "c3"} {
		t.Cleanup(func() { _ = kubes[k].CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}) })
	}

	// Registrations (convoy cluster add), listed with their versions.
	register(t, c, ns, "c1", cluster.Kubeconfig(), map[string]string{"fleet": "yes", "ring": "one", "region": "eu"})
	register(t, c, ns, "c2", others[0].Kubeconfig(), map[string]string{"fleet": "yes", "ring": "two", "region": "us"})
	register(t, c, ns, "c3", others[1].Kubeconfig(), map[string]string{"fleet": "yes", "ring": "three", "region": "ap"}, "some-other-team")
	regs, err := ctl.ListClusters(ctx, c, ns, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(regs) != 3 {
		t.Fatalf("registrations: %+v", regs)
	}
	for _, r := range regs {
		if r.Err != nil || !strings.HasPrefix(r.Version, "v1.") || r.Server == "" {
			t.Fatalf("registration %s: reachable %v, version %q, server %q", r.Name, r.Err, r.Version, r.Server)
		}
	}

	reg := sourcetest.StartRegistry(t, "", "")
	src := "oci://" + reg.Host + "/stacks/app:live"
	d1 := controllertest.Push(t, reg, fleetStack(t, ns, "v1"), "live")
	startController(t, ns)

	// Manual approval: every Stack plans, nothing moves; the fleet plan
	// groups the three identical plans.
	create(t, c, &v1alpha1.StackSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: v1alpha1.StackSetSpec{
			Generators: []v1alpha1.Generator{{Clusters: &v1alpha1.ClustersGenerator{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "yes"}}}}},
			Template: v1alpha1.StackTemplate{Spec: v1alpha1.StackSpec{
				Source: src, Approval: v1alpha1.ApprovalManual, Interval: &metav1.Duration{Duration: 2 * time.Second},
				Vars: map[string]string{"region": "{{cluster.labels.region}}"},
			}},
		},
	})
	ss := waitStackSet(t, c, ns, "web", 2*time.Minute, "planned on every cluster", func(ss *v1alpha1.StackSet) bool {
		return len(ss.Status.Plans) == 1 && len(ss.Status.Plans[0].Stacks) == 3 && strings.Contains(ss.Status.Plans[0].Plan, "install release.api")
	})
	out := fleetPlan(t, ss)
	t.Logf("convoy show --stackset web, before anything moves:\n%s", out)
	if !strings.Contains(out, "3 Stacks: 1 to install, 0 to upgrade, 0 to uninstall, 0 unchanged (install release.api)") {
		t.Fatalf("fleet plan:\n%s", out)
	}
	for name, k := range kubes {
		if m := message(t, k, ns); m != "" {
			t.Fatalf("cluster %s changed before approval: %q", name, m)
		}
	}
	for _, n := range []string{"c1", "c2", "c3"} {
		st := controllertest.GetStack(t, c, ns, "web-"+n)
		if st.Labels[v1alpha1.StackSetLabel] != "web" || metav1.GetControllerOf(st) == nil || metav1.GetControllerOf(st).Name != "web" {
			t.Fatalf("Stack web-%s: labels %v, owners %v", n, st.Labels, st.OwnerReferences)
		}
	}

	// The group of three identical plans is approved at once: refused to
	// an editor (each Stack's approval is the verb approve on it, as for
	// convoy approve), recorded on each Stack as the approver.
	editor, _ := controllertest.ServiceAccount(t, ns, "editor", "convoy-editor")
	approver, approverName := controllertest.ServiceAccount(t, ns, "approver", "convoy-approver")
	waitApprovalPolicy(t, editor, ns)
	if _, err := ctl.ApproveGroup(ctx, editor, ctl.GroupApproveRequest{Namespace: ns, Name: "web"}); err == nil || !strings.Contains(err.Error(), "may not approve convoy.dev/v1alpha1 Stack "+ns+"/web-c1") {
		t.Fatalf("a group approval by an editor: %v", err)
	}
	for _, n := range []string{"c1", "c2", "c3"} {
		if st := controllertest.GetStack(t, c, ns, "web-"+n); st.Spec.ApprovedPlan != "" || st.Spec.Approvals != nil {
			t.Fatalf("the editor's refused group approval approved web-%s: %+v", n, st.Spec.Approvals)
		}
	}
	res, err := ctl.ApproveGroup(ctx, approver, ctl.GroupApproveRequest{Namespace: ns, Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Stacks, ",") != "web-c1,web-c2,web-c3" || !strings.Contains(res.Plan, "install release.api") || len(res.Others) != 0 {
		t.Fatalf("group approval: %+v", res)
	}
	waitStackSet(t, c, ns, "web", 2*time.Minute, "applied once approved", readyIs(metav1.ConditionTrue, v1alpha1.ReasonUpToDate))
	for name, region := range map[string]string{"c1": "eu", "c2": "us", "c3": "ap"} {
		if m := message(t, kubes[name], ns); m != "api-"+region+"-v1" {
			t.Fatalf("cluster %s after the group approval: %q", name, m)
		}
		st := controllertest.GetStack(t, c, ns, "web-"+name)
		if a := st.Status.LastAppliedApproval; a == nil || strings.Join(a.ApprovedBy, ",") != approverName {
			t.Fatalf("web-%s applied with approval %+v, want by %s", name, a, approverName)
		}
	}
	if _, err := ctl.ApproveGroup(ctx, approver, ctl.GroupApproveRequest{Namespace: ns, Name: "web"}); err == nil || !strings.Contains(err.Error(), "no Stack waits for approval") {
		t.Fatalf("a group approval with nothing waiting: %v", err)
	}

	// The template's approval is an approval too (the controller writes it
	// on every Stack): an editor may not turn it to auto, nor approve a
	// plan through the template.
	for what, edit := range map[string]func(*v1alpha1.StackSet){
		"approval auto":   func(ss *v1alpha1.StackSet) { ss.Spec.Template.Spec.Approval = v1alpha1.ApprovalAuto },
		"an approvedPlan": func(ss *v1alpha1.StackSet) { ss.Spec.Template.Spec.ApprovedPlan = "sha256:" + strings.Repeat("0", 64) },
	} {
		var err error
		devtest.Eventually(t, 30*time.Second, func() bool {
			ss := &v1alpha1.StackSet{}
			if err = editor.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, ss); err != nil {
				return false
			}
			edit(ss)
			err = editor.Update(ctx, ss, client.DryRunAll)
			return err != nil && strings.Contains(err.Error(), "may not approve convoy.dev/v1alpha1 StackSet "+ns+"/web")
		}, func() string { return fmt.Sprintf("an editor's StackSet edit (%s): %v, want refused", what, err) })
	}

	// Approved as a rolling rollout: step by step, a gate on step 2 that
	// fails for v2.
	bake := 2 * time.Second
	pins := watchPins(t, ns)
	updateStackSet(t, c, ns, "web", func(ss *v1alpha1.StackSet) {
		ss.Spec.Template.Spec.Approval = v1alpha1.ApprovalAuto
		ss.Spec.Strategy = &v1alpha1.StackSetStrategy{Rolling: &v1alpha1.RollingStrategy{Steps: []v1alpha1.RolloutStep{
			{Name: "canary", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "one"}}, Bake: &metav1.Duration{Duration: bake}},
			{Name: "second", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "two"}}, Bake: &metav1.Duration{Duration: bake}, Rollback: true,
				Gates: []v1alpha1.Gate{{CEL: "objects.all(o, o.kind != 'ConfigMap' || !o.data.message.endsWith('-v2'))"}}},
			{Name: "rest"},
		}}}
	})
	waitStackSet(t, c, ns, "web", 3*time.Minute, "Ready on v1", readyIs(metav1.ConditionTrue, v1alpha1.ReasonUpToDate))
	for name, region := range map[string]string{"c1": "eu", "c2": "us", "c3": "ap"} {
		if m := message(t, kubes[name], ns); m != "api-"+region+"-v1" {
			t.Fatalf("cluster %s: message %q", name, m)
		}
	}

	// v2: step 1, baked, then step 2, whose gate fails: halted, c3 on v1,
	// c2 rolled back to v1 (rollback: true).
	d2 := controllertest.Push(t, reg, fleetStack(t, ns, "v2"), "live")
	ss = waitStackSet(t, c, ns, "web", 3*time.Minute, "halted on v2", readyIs(metav1.ConditionFalse, v1alpha1.ReasonHalted))
	t.Logf("halted:\n%s", fleetPlan(t, ss))
	_, c1Ready := pins.times("web-c1", d2)
	c2Pinned, _ := pins.times("web-c2", d2)
	// The bake's start is recorded in the Pipeline's status as a
	// metav1.Time, to the second: a bake may end up to 1s early.
	if c1Ready.IsZero() || c2Pinned.IsZero() {
		t.Fatalf("the watch saw web-c1 Ready on %s at %v, web-c2 pinned to it at %v (watch errors: %q)", d2, c1Ready, c2Pinned, pins.notes)
	}
	if c2Pinned.Sub(c1Ready) < bake-time.Second {
		t.Fatalf("step 2 started %s after step 1 was Ready on %s (bake %s)", c2Pinned.Sub(c1Ready), d2, bake)
	}
	t.Logf("step 2 pinned %s after step 1 was Ready (bake %s)", c2Pinned.Sub(c1Ready).Round(10*time.Millisecond), bake)
	if c3, _ := pins.times("web-c3", d2); !c3.IsZero() {
		t.Fatalf("web-c3 was pinned to %s past the failed step", d2)
	}
	if m := message(t, kubes["c3"], ns); m != "api-ap-v1" {
		t.Fatalf("cluster c3 changed past the halt: %q", m)
	}
	if !strings.Contains(ss.Status.Steps[1].Message+ss.Status.Steps[1].FailedGate.Output, "web-c2") {
		t.Fatalf("the failed step does not name its Stack: %+v", ss.Status.Steps[1])
	}
	if msg := meta.FindStatusCondition(ss.Status.Conditions, "Ready").Message; !strings.Contains(msg, "step second failed") || !strings.Contains(msg, "(cluster "+ns+"/c2)") {
		t.Fatalf("Halted does not name the step and its cluster: %s", msg)
	}
	controllertest.WaitStack(t, c, ns, "web-c2", 2*time.Minute, "rolled back to v1 and Ready", func(st *v1alpha1.Stack) bool {
		return strings.HasSuffix(st.Spec.Source, "@"+d1) && st.Status.Source != nil && st.Status.Source.Digest == d1 && controllertest.IsCond("Ready", metav1.ConditionTrue, "")(st)
	})
	if m := message(t, kubes["c2"], ns); m != "api-us-v1" {
		t.Fatalf("cluster c2 after the rollback: %q", m)
	}

	// Paused: v3 is not pinned while the Stacks go on reconciling.
	if err := ctl.PauseStackSet(ctx, c, ns, "web", true); err != nil {
		t.Fatal(err)
	}
	waitStackSet(t, c, ns, "web", time.Minute, "paused", func(ss *v1alpha1.StackSet) bool {
		return ss.Status.ObservedGeneration == ss.Generation && ss.Spec.Paused
	})
	d3 := controllertest.Push(t, reg, fleetStack(t, ns, "v3"), "live")
	controllertest.WaitReconciles(t, c, ns, 3, "web-c1")
	if p, _ := pins.times("web-c1", d3); !p.IsZero() {
		t.Fatal("a paused StackSet pinned web-c1 to the new digest")
	}
	if err := ctl.PauseStackSet(ctx, c, ns, "web", false); err != nil {
		t.Fatal(err)
	}
	waitStackSet(t, c, ns, "web", 3*time.Minute, "Ready on v3", readyIs(metav1.ConditionTrue, v1alpha1.ReasonUpToDate))
	if m := message(t, kubes["c3"], ns); m != "api-ap-v3" {
		t.Fatalf("cluster c3 after resume: %q", m)
	}

	// A hand edit is restored and reported.
	controllertest.Update(t, c, ns, "web-c2", func(st *v1alpha1.Stack) { st.Spec.Vars["region"] = "mars" })
	ss = waitStackSet(t, c, ns, "web", time.Minute, "restoring web-c2", func(ss *v1alpha1.StackSet) bool {
		return len(ss.Status.Drifted) == 1 && ss.Status.Drifted[0] == "web-c2"
	})
	if v := controllertest.GetStack(t, c, ns, "web-c2").Spec.Vars["region"]; v != "us" {
		t.Fatalf("web-c2's var region %q after restore", v)
	}

	// c3 leaves the selection: its Stack goes (orphan), its release stays.
	kc, _ := os.ReadFile(others[1].Kubeconfig())
	if _, err := ctl.RegisterCluster(ctx, c, ctl.RegisterRequest{Namespace: ns, Name: "c3", Kubeconfig: kc, Labels: map[string]string{"ring": "three"}, AllowedNamespaces: []string{"some-other-team"}}); err != nil {
		t.Fatal(err)
	}
	devtest.Eventually(t, time.Minute, func() bool {
		var st v1alpha1.Stack
		return apierrors.IsNotFound(c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web-c3"}, &st))
	}, func() string { return "web-c3 is not removed" })
	if m := message(t, kubes["c3"], ns); m != "api-ap-v3" {
		t.Fatalf("orphaned release on c3: %q", m)
	}

	// removal: destroy: c2 leaves the selection, its release is uninstalled.
	updateStackSet(t, c, ns, "web", func(ss *v1alpha1.StackSet) { ss.Spec.Removal = v1alpha1.RemovalDestroy })
	register(t, c, ns, "c2", others[0].Kubeconfig(), map[string]string{"ring": "two", "region": "us"})
	devtest.Eventually(t, 2*time.Minute, func() bool {
		var st v1alpha1.Stack
		return apierrors.IsNotFound(c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web-c2"}, &st)) && message(t, kubes["c2"], ns) == ""
	}, func() string { return "web-c2 is not removed with its release (removal: destroy)" })
	if m := message(t, kubes["c3"], ns); m != "api-ap-v3" {
		t.Fatalf("the orphaned release on c3 after another removal: %q", m)
	}

	t.Run("unreachable cluster", func(t *testing.T) {
		// A registration whose API server does not answer, in the second
		// of three steps: its Stack fails, the rollout holds naming the
		// cluster, the first step's cluster applies, the third's is not
		// touched.
		ns2 := ns + "-reach"
		for _, k := range []string{"c1", "c3"} {
			t.Cleanup(func() { _ = kubes[k].CoreV1().Namespaces().Delete(ctx, ns2, metav1.DeleteOptions{}) })
		}
		register(t, c, ns, "dead", deadKubeconfig(t), map[string]string{"ring": "dead"})
		controllertest.Push(t, reg, namedFleetStack(t, "reach", ns2, "v1"), "reach")
		ss := &v1alpha1.StackSet{
			ObjectMeta: metav1.ObjectMeta{Name: "reach", Namespace: ns},
			Spec: v1alpha1.StackSetSpec{
				Generators: []v1alpha1.Generator{{Clusters: &v1alpha1.ClustersGenerator{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "ring", Operator: metav1.LabelSelectorOpIn, Values: []string{"one", "dead", "three"}},
				}}}}},
				Template: v1alpha1.StackTemplate{Spec: v1alpha1.StackSpec{Source: "oci://" + reg.Host + "/stacks/app:reach", Interval: &metav1.Duration{Duration: 2 * time.Second}}},
				Strategy: &v1alpha1.StackSetStrategy{Rolling: &v1alpha1.RollingStrategy{Steps: []v1alpha1.RolloutStep{
					{Name: "first", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "one"}}},
					{Name: "unreachable", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "dead"}}},
					{Name: "last"},
				}}},
			},
		}
		create(t, c, ss)
		ss = waitStackSet(t, c, ns, "reach", 3*time.Minute, "halted on the unreachable cluster", readyIs(metav1.ConditionFalse, v1alpha1.ReasonHalted))
		msg := meta.FindStatusCondition(ss.Status.Conditions, "Ready").Message
		t.Logf("Ready=False Halted: %s", msg)
		if !strings.Contains(msg, "step unreachable") || !strings.Contains(msg, "Stack reach-dead on cluster "+ns+"/dead failed") {
			t.Fatalf("Halted does not name the step, the Stack and its cluster: %s", msg)
		}
		if m := message(t, kubes["c1"], ns2); m != "api-none-v1" {
			t.Fatalf("the first step's cluster c1: %q", m)
		}
		if st := controllertest.GetStack(t, c, ns, "reach-c3"); st.Spec.Source != "" {
			t.Fatalf("reach-c3, past the held step, was pinned to %s", st.Spec.Source)
		}
		if m := message(t, kubes["c3"], ns2); m != "" {
			t.Fatalf("cluster c3 changed past the held step: %q", m)
		}
		if m := message(t, kubes["c1"], ns); m != "api-eu-v3" {
			t.Fatalf("web's release on c1 changed: %q", m)
		}
		// Removing the dead registration lets the rollout go on (the
		// Stack goes, orphaned: nothing to uninstall where nothing was).
		if err := c.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dead"}}); err != nil {
			t.Fatal(err)
		}
		waitStackSet(t, c, ns, "reach", 3*time.Minute, "Ready without the dead cluster", readyIs(metav1.ConditionTrue, v1alpha1.ReasonUpToDate))
		if m := message(t, kubes["c3"], ns2); m != "api-none-v1" {
			t.Fatalf("cluster c3 once the dead cluster left: %q", m)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		// Parameters in the template's environment pass the CRD's schema
		// (a Stack's environment is an identifier).
		env := stackSet(ns, "env", map[string]string{"fleet": "yes"}, "")
		env.Spec.Template.Spec.Environment = "{{cluster.labels.region}}"
		if err := c.Create(ctx, env, client.DryRunAll); err != nil {
			t.Fatalf("a template environment with a parameter: %v", err)
		}
		// A selector matching nothing.
		create(t, c, stackSet(ns, "none", map[string]string{"ring": "nowhere"}, ""))
		waitStackSet(t, c, ns, "none", time.Minute, "NoClusters", readyIs(metav1.ConditionFalse, v1alpha1.ReasonNoClusters))
		// A template rendering an invalid Stack: nothing created.
		create(t, c, stackSet(ns, "bad", map[string]string{"fleet": "yes"}, "{{cluster.labels.nope}}"))
		ss := waitStackSet(t, c, ns, "bad", time.Minute, "TemplateInvalid", readyIs(metav1.ConditionFalse, v1alpha1.ReasonTemplateInvalid))
		msg := meta.FindStatusCondition(ss.Status.Conditions, "Ready").Message
		if !strings.Contains(msg, `element "c1"`) || !strings.Contains(msg, "{{cluster.labels.nope}}") {
			t.Fatalf("TemplateInvalid message: %s", msg)
		}
		// Another StackSet generating web's Stack names is refused.
		dup := stackSet(ns, "dup", map[string]string{"fleet": "yes"}, "")
		dup.Spec.Template.Name = "web-{{cluster.name}}"
		create(t, c, dup)
		ss = waitStackSet(t, c, ns, "dup", time.Minute, "StackConflict", readyIs(metav1.ConditionFalse, v1alpha1.ReasonStackConflict))
		if msg := meta.FindStatusCondition(ss.Status.Conditions, "Ready").Message; !strings.Contains(msg, "StackSet web") {
			t.Fatalf("StackConflict message: %s", msg)
		}
		var l v1alpha1.StackList
		if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, st := range l.Items {
			if owner := st.Labels[v1alpha1.StackSetLabel]; owner == "none" || owner == "bad" || owner == "dup" {
				t.Fatalf("Stack %s generated by %s", st.Name, owner)
			}
		}
	})

	t.Run("tenant", func(t *testing.T) {
		tenant := controllertest.Team(t, c)
		controllertest.StartController(t, tenant, func(o *controller.Options) {
			o.Tenancy, o.DefaultServiceAccount = controller.TenancyStrict, "deployer"
		})
		// c3 allows some-other-team only; c2 no other namespace.
		ts := stackSet(tenant, "grab", map[string]string{"ring": "three"}, "")
		ts.Spec.Generators[0].Clusters.Namespace = ns
		create(t, c, ts)
		ss := waitStackSet(t, c, tenant, "grab", time.Minute, "Forbidden", readyIs(metav1.ConditionFalse, v1alpha1.ReasonForbidden))
		msg := meta.FindStatusCondition(ss.Status.Conditions, "Ready").Message
		if !strings.Contains(msg, "v1 Secret "+ns+"/c3") || !strings.Contains(msg, "does not allow namespace "+tenant) {
			t.Fatalf("Forbidden message: %s", msg)
		}
		var l v1alpha1.StackList
		if err := c.List(ctx, &l, client.InNamespace(tenant)); err != nil || len(l.Items) != 0 {
			t.Fatalf("the tenant's StackSet generated %d Stacks (%v)", len(l.Items), err)
		}
	})
}

func stackSet(ns, name string, sel map[string]string, region string) *v1alpha1.StackSet {
	ss := &v1alpha1.StackSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.StackSetSpec{
			Generators: []v1alpha1.Generator{{Clusters: &v1alpha1.ClustersGenerator{Selector: &metav1.LabelSelector{MatchLabels: sel}}}},
			Template:   v1alpha1.StackTemplate{Spec: v1alpha1.StackSpec{Approval: v1alpha1.ApprovalManual}},
		},
	}
	if region != "" {
		ss.Spec.Template.Spec.Vars = map[string]string{"region": region}
	}
	return ss
}

func create(t *testing.T, c client.Client, obj client.Object) { controllertest.Create(t, c, obj) }

func startController(t *testing.T, ns string) { controllertest.StartController(t, ns, nil) }

// deadKubeconfig is the shared devcluster's kubeconfig with its server
// moved to a local address no one listens on.
func deadKubeconfig(t *testing.T) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range cfg.Clusters {
		cl.Server = "https://" + controllertest.FreeAddr(t)
	}
	path := filepath.Join(t.TempDir(), "dead.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
