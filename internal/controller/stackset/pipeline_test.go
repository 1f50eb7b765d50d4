package stackset_test

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
	"github.com/convoy-sh/convoy/internal/controller/controllertest"
	"github.com/convoy-sh/convoy/internal/testfiles"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// slotStack writes a stack of one release (a ConfigMap whose message is
// api-SLOT-VERSION) on the cluster block "target", in namespace NS-SLOT:
// several registrations of one API server each get a namespace of their
// own.
func slotStack(t *testing.T, ns, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "stack")
	testfiles.Write(t, filepath.Join(dir, "charts", "cm"), map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: cm\nversion: 0.1.0\n",
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  message: {{ .Values.message | quote }}
`,
	})
	hcl := fmt.Sprintf(`
stack "app" {}
cluster "target" {}
variable "slot" {
  default = "none"
}
# One environment per slot: each is a stack of its own (app.SLOT) on the
# one cluster the registrations share, so no two Stacks reconcile one.
environment "staging" {
  vars = { slot = environment.name }
}
environment "f1" {
  vars = { slot = environment.name }
}
environment "f2" {
  vars = { slot = environment.name }
}
environment "f3" {
  vars = { slot = environment.name }
}
release "api" {
  chart            = "./charts/cm"
  cluster          = cluster.target
  namespace        = "%s-${var.slot}"
  create_namespace = true
  values           = [{ message = "api-${var.slot}-%s" }]
}
`, ns, version)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A Pipeline whose production stage is a StackSet: a digest verified by
// the staging Stack pins the StackSet's template, which rolls it out by
// its own steps; the stage is Verified once every step verified it. A
// gate failing in the fleet's second step halts the StackSet, which
// fails the stage; the stage's rollback pins the StackSet back to the
// digest it verified, and the whole fleet returns to it. A StackSet of
// another namespace is refused as Forbidden. The three registrations
// point at the one devcluster (namespaces and environments of their own),
// as the bench does with 50.
func TestPipelineStageStackSet(t *testing.T) {
	ctx := context.Background()
	ns := cluster.Namespace(t)
	c := controllertest.Kube(t)
	k := cluster.Client()
	slots := []string{"staging", "f1", "f2", "f3"}
	for _, s := range slots {
		t.Cleanup(func() { _ = k.CoreV1().Namespaces().Delete(ctx, ns+"-"+s, metav1.DeleteOptions{}) })
	}
	register(t, c, ns, "f1", cluster.Kubeconfig(), map[string]string{"fleet": "yes", "ring": "one"})
	register(t, c, ns, "f2", cluster.Kubeconfig(), map[string]string{"fleet": "yes", "ring": "two"})
	register(t, c, ns, "f3", cluster.Kubeconfig(), map[string]string{"fleet": "yes", "ring": "two"})
	// Staging's cluster: a registration no StackSet selects.
	register(t, c, ns, "staging", cluster.Kubeconfig(), map[string]string{"fleet": "no"})

	reg := sourcetest.StartRegistry(t, "", "")
	d1 := controllertest.Push(t, reg, slotStack(t, ns, "v1"), "1.0.0")
	startController(t, ns)

	every := &metav1.Duration{Duration: 2 * time.Second}
	create(t, c, &v1alpha1.Stack{
		ObjectMeta: metav1.ObjectMeta{Name: "staging", Namespace: ns},
		Spec: v1alpha1.StackSpec{
			Interval: every, Environment: "staging",
			Clusters: []v1alpha1.ClusterRef{{Name: "target", SecretRef: v1alpha1.SecretKeyRef{Name: "staging", Key: v1alpha1.KubeconfigKey}}},
		},
	})
	create(t, c, &v1alpha1.StackSet{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns},
		Spec: v1alpha1.StackSetSpec{
			Generators: []v1alpha1.Generator{{Clusters: &v1alpha1.ClustersGenerator{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "yes"}}}}},
			// No source: the Pipeline's stage pins it.
			Template: v1alpha1.StackTemplate{Spec: v1alpha1.StackSpec{Interval: every, Environment: "{{cluster.name}}"}},
			Strategy: &v1alpha1.StackSetStrategy{Rolling: &v1alpha1.RollingStrategy{Steps: []v1alpha1.RolloutStep{
				{Name: "one", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "one"}}},
				{Name: "rest", Gates: []v1alpha1.Gate{{CEL: "objects.all(o, o.kind != 'ConfigMap' || !o.data.message.endsWith('-v2'))"}}},
			}}},
		},
	})
	create(t, c, &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: v1alpha1.PipelineSpec{
			Source: "oci://" + reg.Host + "/stacks/app", Follow: v1alpha1.Follow{Semver: ">=1.0.0"}, Interval: every,
			Stages: []v1alpha1.Stage{
				{Name: "staging", Stacks: v1alpha1.StackRefs("staging")},
				{Name: "production", StackSet: &v1alpha1.PipelineStackRef{Name: "fleet"}, Rollback: true},
			},
		},
	})

	// v1: staging, then the fleet step by step; production is Verified
	// only once the StackSet's rollout of v1 is done.
	p := controllertest.WaitPipeline(t, c, ns, "app", 3*time.Minute, "production verified on v1", controllertest.StageIs("production", v1alpha1.PhaseVerified, d1))
	ss := getStackSet(t, c, ns, "fleet")
	if ro := ss.Status.Rollout; ro == nil || ro.Digest != d1 || ro.Phase != v1alpha1.RolloutDone {
		t.Fatalf("production verified with the StackSet's rollout %+v\n%s", ro, controllertest.DescribePipeline(p))
	}
	if !strings.HasSuffix(ss.Spec.Template.Spec.Source, "@"+d1) || ss.Annotations[v1alpha1.PipelineAnnotation] != "app" {
		t.Fatalf("StackSet pinned: source %q, annotations %v", ss.Spec.Template.Spec.Source, ss.Annotations)
	}
	for _, s := range slots {
		if m := message(t, k, ns+"-"+s); m != "api-"+s+"-v1" {
			t.Fatalf("%s after v1: %q", s, m)
		}
	}
	for _, st := range ss.Status.Steps {
		if st.Phase != v1alpha1.PhaseVerified || st.Verified != d1 {
			t.Fatalf("production verified while step %s is %s on %s", st.Name, st.Phase, st.Digest)
		}
	}

	// v2: staging verifies it; the fleet's step one takes it, the gate of
	// step rest fails: the StackSet halts, production fails naming it,
	// and rolls the StackSet back to v1: the whole fleet returns.
	d2 := controllertest.Push(t, reg, slotStack(t, ns, "v2"), "2.0.0")
	p = controllertest.WaitPipeline(t, c, ns, "app", 3*time.Minute, "production failed on v2", controllertest.StageIs("production", v1alpha1.PhaseFailed, d2))
	var prod v1alpha1.StageStatus
	for _, s := range p.Status.Stages {
		if s.Name == "production" {
			prod = s
		}
	}
	for _, want := range []string{"StackSet fleet failed on " + d2, "step rest failed", "spec.stages[1].gates[0] (cel)", "rolled back to " + d1} {
		if !strings.Contains(prod.Message, want) {
			t.Fatalf("production's message %q lacks %q", prod.Message, want)
		}
	}
	if r := meta.FindStatusCondition(p.Status.Conditions, "Ready"); r == nil || r.Reason != "StageFailed" {
		t.Fatalf("Pipeline Ready: %+v", r)
	}
	if m := message(t, k, ns+"-staging"); m != "api-staging-v2" {
		t.Fatalf("staging after v2: %q", m)
	}
	ss = waitStackSet(t, c, ns, "fleet", 3*time.Minute, "rolled back to v1 everywhere", func(ss *v1alpha1.StackSet) bool {
		ro := ss.Status.Rollout
		return strings.HasSuffix(ss.Spec.Template.Spec.Source, "@"+d1) && ss.Status.ObservedGeneration == ss.Generation &&
			ro != nil && ro.Digest == d1 && ro.Phase == v1alpha1.RolloutDone
	})
	for _, s := range []string{"f1", "f2", "f3"} {
		if m := message(t, k, ns+"-"+s); m != "api-"+s+"-v1" {
			t.Fatalf("%s after the rollback: %q", s, m)
		}
	}
	if p = controllertest.GetPipeline(t, c, ns, "app"); !controllertest.StageIs("production", v1alpha1.PhaseFailed, d2)(p) {
		t.Fatalf("production after the rollback:%s", controllertest.DescribePipeline(p))
	}

	// A StackSet of another namespace: Forbidden, naming it; nothing is
	// read or pinned.
	create(t, c, &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "cross", Namespace: ns},
		Spec: v1alpha1.PipelineSpec{
			Source: "oci://" + reg.Host + "/stacks/app", Follow: v1alpha1.Follow{Semver: ">=1.0.0"}, Interval: every,
			Stages: []v1alpha1.Stage{{Name: "prod", StackSet: &v1alpha1.PipelineStackRef{Namespace: "team-elsewhere", Name: "fleet"}}},
		},
	})
	controllertest.WaitPipeline(t, c, ns, "cross", time.Minute, "refused as Forbidden", func(p *v1alpha1.Pipeline) bool {
		s := meta.FindStatusCondition(p.Status.Conditions, "Stalled")
		return s != nil && s.Status == metav1.ConditionTrue && s.Reason == v1alpha1.ReasonForbidden &&
			strings.Contains(s.Message, "convoy.dev/v1alpha1 StackSet team-elsewhere/fleet (spec.stages[0].stackSet)")
	})
}

// Under --tenancy strict a Pipeline pins a StackSet of its own namespace
// as its service account, after a SubjectAccessReview: without get on
// stacksets it reads nothing, without patch it pins nothing, each refusal
// naming the verb, the resource and the identity; with both it pins.
func TestPipelineStageStackSetStrict(t *testing.T) {
	ns := cluster.Namespace(t)
	c := controllertest.Kube(t)
	k := cluster.Client()
	ctx := context.Background()
	if _, err := k.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reg := sourcetest.StartRegistry(t, "", "")
	d1 := controllertest.Push(t, reg, slotStack(t, ns, "v1"), "1.0.0")
	create(t, c, &v1alpha1.StackSet{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns},
		Spec: v1alpha1.StackSetSpec{
			Generators: []v1alpha1.Generator{{Clusters: &v1alpha1.ClustersGenerator{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "yes"}}}}},
			Template:   v1alpha1.StackTemplate{Spec: v1alpha1.StackSpec{Environment: "{{cluster.name}}"}},
		},
	})
	create(t, c, &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: v1alpha1.PipelineSpec{
			Source: "oci://" + reg.Host + "/stacks/app", Follow: v1alpha1.Follow{Semver: ">=1.0.0"}, Interval: &metav1.Duration{Duration: 2 * time.Second},
			Stages: []v1alpha1.Stage{{Name: "production", StackSet: &v1alpha1.PipelineStackRef{Name: "fleet"}}},
		},
	})
	controllertest.StartController(t, ns, func(o *controller.Options) {
		o.Tenancy, o.DefaultServiceAccount = controller.TenancyStrict, "deployer"
	})
	refused := func(verb string) func(*v1alpha1.Pipeline) bool {
		want := fmt.Sprintf("serviceaccount %s/deployer may not %s stacksets.convoy.dev in namespace %s", ns, verb, ns)
		return func(p *v1alpha1.Pipeline) bool {
			s := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.CondStalled)
			return s != nil && s.Status == metav1.ConditionTrue && s.Reason == v1alpha1.ReasonForbidden && strings.Contains(s.Message, want)
		}
	}
	grant := func(verbs ...string) {
		rules := []rbacv1.PolicyRule{{APIGroups: []string{"convoy.dev"}, Resources: []string{"stacksets"}, Verbs: verbs}}
		role, err := k.RbacV1().Roles(ns).Get(ctx, "promoter", metav1.GetOptions{})
		if err == nil {
			role.Rules = rules
			_, err = k.RbacV1().Roles(ns).Update(ctx, role, metav1.UpdateOptions{})
		} else {
			_, err = k.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "promoter"}, Rules: rules}, metav1.CreateOptions{})
			if err == nil {
				_, err = k.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
					ObjectMeta: metav1.ObjectMeta{Name: "promoter"},
					RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "promoter"},
					Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: ns}},
				}, metav1.CreateOptions{})
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	unpinned := func(when string) {
		if ss := getStackSet(t, c, ns, "fleet"); ss.Spec.Template.Spec.Source != "" {
			t.Fatalf("%s: the StackSet was pinned to %s", when, ss.Spec.Template.Spec.Source)
		}
	}

	controllertest.WaitPipeline(t, c, ns, "app", 2*time.Minute, "refused get", refused("get"))
	unpinned("without get")
	grant("get")
	controllertest.WaitPipeline(t, c, ns, "app", 2*time.Minute, "refused patch", refused("patch"))
	unpinned("without patch")
	grant("get", "patch")
	waitStackSet(t, c, ns, "fleet", 2*time.Minute, "pinned once allowed", func(ss *v1alpha1.StackSet) bool {
		return strings.HasSuffix(ss.Spec.Template.Spec.Source, "@"+d1) && ss.Annotations[v1alpha1.PipelineAnnotation] == "app"
	})
}
