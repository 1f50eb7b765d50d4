package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/testfiles"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// delivery is a platform team's set-up of a Pipeline across namespaces:
// the Pipeline "app" (created by start) in namespace delivery with its
// service account "promoter", stage staging → Stack "app" of namespace
// staging, stage production → Stack "app" of namespace prod. The promoter
// may read the Stacks of both (get, list, watch); it may patch those of
// staging, and those of prod when prodPatch.
type delivery struct {
	delivery, staging, prod string
	shard                   string
	reg                     *sourcetest.Registry
}

func setUpDelivery(t *testing.T, c client.Client, prodPatch bool) *delivery {
	t.Helper()
	d := &delivery{delivery: cluster.Namespace(t), staging: cluster.Namespace(t), prod: cluster.Namespace(t)}
	d.shard = d.delivery
	d.reg = sourcetest.StartRegistry(t, "", "")
	create(t, c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "promoter", Namespace: d.delivery}})
	d.allow(t, c, d.staging, true)
	d.allow(t, c, d.prod, prodPatch)
	for env, ns := range map[string]string{"staging": d.staging, "prod": d.prod} {
		create(t, c, newStack(ns, "app", "", func(st *v1alpha1.Stack) {
			st.Labels = map[string]string{v1alpha1.ShardLabel: d.shard}
			st.Spec.Environment = env
			st.Spec.Vars = map[string]string{"ns": ns}
		}))
	}
	// Cleanups run last first: these once the controller has stopped.
	t.Cleanup(func() { dropFinalizers(t, d.staging) })
	t.Cleanup(func() { dropFinalizers(t, d.prod) })
	return d
}

// start creates the Pipeline, listing tags every interval, and starts
// one controller for the three namespaces: its shard keeps it to this
// test's Stacks and Pipeline.
func (d *delivery) start(t *testing.T, c client.Client, interval time.Duration) {
	t.Helper()
	create(t, c, &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: d.delivery, Labels: map[string]string{v1alpha1.ShardLabel: d.shard}},
		Spec: v1alpha1.PipelineSpec{
			Source:             "oci://" + d.reg.Host + "/stacks/app",
			Follow:             v1alpha1.Follow{Semver: ">=1.0.0"},
			Interval:           &metav1.Duration{Duration: interval},
			ServiceAccountName: "promoter",
			Stages: []v1alpha1.Stage{
				{Name: "staging", Stacks: []v1alpha1.PipelineStackRef{{Namespace: d.staging, Name: "app"}}},
				{Name: "production", Stacks: []v1alpha1.PipelineStackRef{{Namespace: d.prod, Name: "app"}}},
			},
		},
	})
	startController(t, d.delivery, func(o *controller.Options) { o.Namespace, o.Shard = "", d.shard })
}

// allow gives the promoter a Role in ns: reading Stacks, and patching
// them when patch.
func (d *delivery) allow(t *testing.T, c client.Client, ns string, patch bool) {
	t.Helper()
	verbs := []string{"get", "list", "watch"}
	if patch {
		verbs = append(verbs, "patch")
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "promoter", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"convoy.dev"}, Resources: []string{"stacks"}, Verbs: verbs}},
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(role), &rbacv1.Role{}); err == nil {
		if err := c.Update(context.Background(), role); err != nil {
			t.Fatal(err)
		}
		return
	}
	create(t, c, role)
	create(t, c, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "promoter", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "promoter"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "promoter", Namespace: d.delivery}},
	})
}

// push pushes a stack of one ConfigMap, into the namespace var.ns, whose
// stack name is the test's own (no other test's Stack is a duplicate).
func (d *delivery) push(t *testing.T, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "stack")
	testfiles.Write(t, filepath.Join(dir, "charts", "cm"), map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: cm\nversion: 0.1.0\n",
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  version: {{ .Values.version | quote }}
`,
	})
	hcl := fmt.Sprintf(`
stack %q {}
environment "staging" {}
environment "prod" {}
variable "ns" {}
release "app" {
  chart     = "./charts/cm"
  namespace = var.ns
  values    = [{ version = %q }]
}
`, d.delivery, version)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return push(t, d.reg, dir, version)
}

// A Pipeline of namespace delivery promotes a digest through Stacks of
// two other namespaces, as its service account, which may patch them.
// Its interval is an hour: what moves it after its first look are the
// changes of those Stacks (each Ready wakes it).
func TestPipelineAcrossNamespaces(t *testing.T) {
	cluster.Need(t)
	c := kube(t)
	d := setUpDelivery(t, c, true)
	d1 := d.push(t, "1.0.0")
	d.start(t, c, time.Hour)
	p := waitPipeline(t, c, d.delivery, "app", 3*time.Minute, "verified on 1.0.0 in both stages",
		both(stageIs("staging", v1alpha1.PhaseVerified, d1), stageIs("production", v1alpha1.PhaseVerified, d1)))
	want := map[string]string{d.staging: "staging", d.prod: "production"}
	if len(p.Status.Stacks) != 2 {
		t.Fatalf("status.stacks:%s", describePipeline(p))
	}
	for _, s := range p.Status.Stacks {
		if want[s.Namespace] != s.Stage || s.Name != "app" || s.Digest != d1 || !s.Ready {
			t.Errorf("status.stacks entry %+v", s)
		}
	}
	for _, ns := range []string{d.staging, d.prod} {
		st := getStack(t, c, ns, "app")
		if got := st.Annotations[v1alpha1.PipelineAnnotation]; got != d.delivery+"/app" {
			t.Errorf("Stack %s/app: annotation %s=%q, want the Pipeline's namespace/name", ns, v1alpha1.PipelineAnnotation, got)
		}
		if got := stackDigest(t, c, ns, "app"); got != d1 {
			t.Errorf("Stack %s/app runs %q, not %s", ns, got, d1)
		}
		cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(context.Background(), "app", metav1.GetOptions{})
		if err != nil || cm.Data["version"] != "1.0.0" {
			t.Errorf("ConfigMap %s/app: %v (%v)", ns, cm.Data, err)
		}
	}
}

// Without patch on the prod Stack, the Pipeline stops at production: its
// conditions and an event name the Stack, the verb, the resource and the
// service account, and the prod Stack is left as it was. Once a Role
// allows it, production is promoted.
func TestPipelineAcrossNamespacesRefused(t *testing.T) {
	cluster.Need(t)
	c := kube(t)
	d := setUpDelivery(t, c, false)
	before := getStack(t, c, d.prod, "app")
	d1 := d.push(t, "1.0.0")
	d.start(t, c, 2*time.Second) // a Role's change is seen at the next interval
	refusal := fmt.Sprintf("Stack %s/app (spec.stages[1].stacks[0]): serviceaccount %s/promoter may not patch stacks.convoy.dev in namespace %s: not pinned to %s",
		d.prod, d.delivery, d.prod, d1)
	p := waitPipeline(t, c, d.delivery, "app", 3*time.Minute, "refused at production", func(p *v1alpha1.Pipeline) bool {
		r := pipelineCond(p, "Ready")
		return stageIs("staging", v1alpha1.PhaseVerified, d1)(p) && r != nil && r.Reason == v1alpha1.ReasonForbidden
	})
	for _, typ := range []string{"Ready", "Stalled"} {
		if c := pipelineCond(p, typ); c == nil || c.Reason != v1alpha1.ReasonForbidden || !strings.Contains(c.Message, refusal) {
			t.Errorf("%s does not say %q:%s", typ, refusal, describePipeline(p))
		}
	}
	if s := p.Status.Stages[1]; s.Phase != v1alpha1.PhasePromoting || !strings.Contains(s.Message, refusal) {
		t.Errorf("stage production:%s", describePipeline(p))
	}
	evs, err := cluster.Client().EventsV1().Events(d.delivery).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, ev := range evs.Items {
		if ev.Regarding.Kind == "Pipeline" && ev.Reason == v1alpha1.ReasonForbidden && ev.Type == corev1.EventTypeWarning && strings.Contains(ev.Note, refusal) {
			seen = true
		}
	}
	if !seen {
		t.Errorf("no Warning event Forbidden saying %q", refusal)
	}
	settlePipeline(t, c, d.delivery, "app", 2)
	after := getStack(t, c, d.prod, "app")
	if after.Generation != before.Generation || after.Spec.Source != "" || after.Annotations[v1alpha1.PipelineAnnotation] != "" {
		t.Fatalf("the prod Stack was changed: generation %d → %d, source %q, annotations %v", before.Generation, after.Generation, after.Spec.Source, after.Annotations)
	}

	// The Role allows it now: production is promoted at the next look.
	d.allow(t, c, d.prod, true)
	waitPipeline(t, c, d.delivery, "app", 3*time.Minute, "verified at production once allowed", func(p *v1alpha1.Pipeline) bool {
		r := pipelineCond(p, "Ready")
		return stageIs("production", v1alpha1.PhaseVerified, d1)(p) && r != nil && r.Status == metav1.ConditionTrue && pipelineCond(p, "Stalled") == nil
	})
	if got := stackDigest(t, c, d.prod, "app"); got != d1 {
		t.Errorf("prod runs %q, not %s", got, d1)
	}
}

// Under --tenancy strict a Pipeline acts as its service account for the
// Stacks of its own namespace too: without a Role on stacks it pins
// nothing, naming the verb and the identity; with one it promotes.
func TestPipelineStrictActsAsItsServiceAccount(t *testing.T) {
	cluster.Need(t)
	c := kube(t)
	ns := team(t, c) // its deployer: the core and apps kinds of ns, no Stacks
	reg := sourcetest.StartRegistry(t, "", "")
	d := &delivery{delivery: ns, reg: reg}
	create(t, c, newStack(ns, "app", "", func(st *v1alpha1.Stack) {
		st.Spec.Environment = "staging"
		st.Spec.Vars = map[string]string{"ns": ns}
	}))
	create(t, c, &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: v1alpha1.PipelineSpec{
			Source: "oci://" + reg.Host + "/stacks/app", Follow: v1alpha1.Follow{Semver: ">=1.0.0"},
			Interval: &metav1.Duration{Duration: 2 * time.Second},
			Stages:   []v1alpha1.Stage{{Name: "staging", Stacks: v1alpha1.StackRefs("app")}},
		},
	})
	startController(t, ns, func(o *controller.Options) { o.Tenancy, o.DefaultServiceAccount = controller.TenancyStrict, "deployer" })
	d1 := d.push(t, "1.0.0")
	refusal := fmt.Sprintf("Stack %s/app (spec.stages[0].stacks[0]): serviceaccount %s/deployer may not get stacks.convoy.dev in namespace %s: not pinned to %s", ns, ns, ns, d1)
	p := waitPipeline(t, c, ns, "app", 2*time.Minute, "refused", stalledWith(v1alpha1.ReasonForbidden, refusal))
	if st := getStack(t, c, ns, "app"); st.Spec.Source != "" {
		t.Fatalf("the Stack was pinned to %s though the deployer may not:%s", st.Spec.Source, describePipeline(p))
	}
	create(t, c, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "promoter", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"convoy.dev"}, Resources: []string{"stacks"}, Verbs: []string{"get", "patch"}}},
	})
	create(t, c, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "promoter", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "promoter"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: ns}},
	})
	waitPipeline(t, c, ns, "app", 2*time.Minute, "verified once allowed", stageIs("staging", v1alpha1.PhaseVerified, d1))
	if st := getStack(t, c, ns, "app"); st.Annotations[v1alpha1.PipelineAnnotation] != "app" {
		t.Errorf("annotation %q, want the Pipeline's name (its own namespace)", st.Annotations[v1alpha1.PipelineAnnotation])
	}
}
