package stack_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/testfiles"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// tenantStack writes a stack of one release of a chart with the given
// templates, in namespace ns.
func tenantStack(t *testing.T, ns string, templates map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "stack")
	files := map[string]string{"Chart.yaml": "apiVersion: v2\nname: tenant\nversion: 0.1.0\n"}
	for name, text := range templates {
		files["templates/"+name] = text
	}
	testfiles.Write(t, filepath.Join(dir, "charts", "tenant"), files)
	hcl := fmt.Sprintf(`
stack "tenant" {
  default_namespace = %q
}
release "app" {
  chart = "./charts/tenant"
}
`, ns)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A Stack of team A acts as team A's service account: its chart's
// ClusterRoleBinding (to cluster-admin) and its object in kube-system are
// refused at plan, naming the object, the verb and the identity, and
// nothing at all is created.
func TestStackIdentityRefusedAtPlan(t *testing.T) {
	cluster.Need(t)
	c := kube(t)
	teamA := team(t, c)
	_ = team(t, c) // team B: its Role grants team A nothing
	reg := sourcetest.StartRegistry(t, "", "")
	crb := teamA + "-admin"
	planted := teamA + "-planted"
	push(t, reg, tenantStack(t, teamA, map[string]string{
		"crb.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ` + crb + `
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: default, namespace: {{ .Release.Namespace }}}]
`,
		"planted.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: ` + planted + `
  namespace: kube-system
data: {by: team-a}
`,
		"own.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: own
data: {by: team-a}
`,
	}), "v1")
	create(t, c, newStack(teamA, "escalate", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.ServiceAccountName = "deployer"
	}))
	startController(t, teamA, nil)
	st := waitStack(t, c, teamA, "escalate", 90*time.Second, "refused", isCond("Ready", metav1.ConditionFalse, v1alpha1.ReasonForbidden))
	msg := cond(st, "Ready").Message
	who := "serviceaccount " + teamA + "/deployer may not "
	if !strings.Contains(msg, who) {
		t.Fatalf("the refusal does not name the identity (%q):%s", who, describe(st))
	}
	// The first request refused names the object and what the identity
	// may not do to it: read it (the plan reads the live object first) or
	// create it (the dry run).
	crbRefusal := regexp.MustCompile(`rbac\.authorization\.k8s\.io/v1 ClusterRoleBinding ` + crb + `: ` + who + `(get|create) clusterrolebindings\.rbac\.authorization\.k8s\.io`)
	plantedRefusal := regexp.MustCompile(who + `(get|list|create) configmaps in namespace kube-system`)
	if !crbRefusal.MatchString(msg) && !plantedRefusal.MatchString(msg) {
		t.Fatalf("the refusal names neither the ClusterRoleBinding nor the ConfigMap in kube-system with what may not be done:%s", describe(st))
	}
	t.Logf("Ready=False %s: %s", cond(st, "Ready").Reason, msg)
	ctx := context.Background()
	if _, err := cluster.Client().RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ClusterRoleBinding %s: created (or %v)", crb, err)
	}
	if _, err := cluster.Client().CoreV1().ConfigMaps("kube-system").Get(ctx, planted, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap kube-system/%s: created (or %v)", planted, err)
	}
	if _, err := cluster.Client().CoreV1().ConfigMaps(teamA).Get(ctx, "own", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap %s/own: created though the plan was refused (or %v)", teamA, err)
	}
	if recs := helmRecords(t, teamA); len(recs) > 0 {
		t.Errorf("release records written: %d", len(recs))
	}
}

// A chart's lookup of another namespace's Secret, as team A's identity,
// reads nothing of it: the render fails naming the identity and what it
// may not get, and the Secret's value reaches no object, status or event.
func TestStackIdentityLookupOfAnotherNamespace(t *testing.T) {
	cluster.Need(t)
	c := kube(t)
	teamA, teamB := team(t, c), team(t, c)
	const password = "s3cret-of-team-b"
	create(t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-data", Namespace: teamB}, Data: map[string][]byte{"password": []byte(password)}})
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, tenantStack(t, teamA, map[string]string{
		"stolen.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: stolen
data:
  password: {{ index ((lookup "v1" "Secret" "` + teamB + `" "web-data").data | default dict) "password" | default "none" | quote }}
`,
	}), "v1")
	create(t, c, newStack(teamA, "thief", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.ServiceAccountName = "deployer"
	}))
	startController(t, teamA, nil)
	st := waitStack(t, c, teamA, "thief", 90*time.Second, "refused", isCond("Ready", metav1.ConditionFalse, v1alpha1.ReasonForbidden))
	msg := cond(st, "Ready").Message
	if want := "serviceaccount " + teamA + "/deployer may not get secrets in namespace " + teamB; !strings.Contains(msg, want) {
		t.Fatalf("the refusal does not say %q:%s", want, describe(st))
	}
	ctx := context.Background()
	if cm, err := cluster.Client().CoreV1().ConfigMaps(teamA).Get(ctx, "stolen", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ConfigMap %s/stolen: created with %v (or %v)", teamA, cm.Data, err)
	}
	encoded := base64.StdEncoding.EncodeToString([]byte(password))
	leaks := func(s string) bool { return strings.Contains(s, password) || strings.Contains(s, encoded) }
	if d := describe(st); leaks(d) {
		t.Errorf("the Stack's status holds team B's password:%s", d)
	}
	evs, err := cluster.Client().EventsV1().Events(teamA).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Items {
		if leaks(ev.Note) {
			t.Errorf("event %s holds team B's password: %s", ev.Name, ev.Note)
		}
	}
	cms, err := cluster.Client().CoreV1().ConfigMaps(teamA).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		for k, v := range cm.Data {
			if leaks(v) {
				t.Errorf("ConfigMap %s/%s key %s holds team B's password", teamA, cm.Name, k)
			}
		}
	}
}

// A Stack whose identity may do what its chart asks applies as usual, and
// its pruning deletion uninstalls, though the identity may read no
// Namespace, list no record across namespaces and take no stack lock (a
// Lease in "default"): the
// controller's --tenancy strict with the team's service account as
// --default-service-account.
func TestStackIdentityAllowedApplies(t *testing.T) {
	cluster.Need(t)
	c := kube(t)
	teamA := team(t, c)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, teamA, "v1", ""), "v1")
	create(t, c, newStack(teamA, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) { st.Spec.Prune = true }))
	startController(t, teamA, func(o *controller.Options) {
		o.Tenancy, o.DefaultServiceAccount = controller.TenancyStrict, "deployer"
	})
	waitStack(t, c, teamA, "shop", 90*time.Second, "applied", func(st *v1alpha1.Stack) bool {
		return revisionsOf(st) == "api:1:deployed web:1:deployed" && isCond("Ready", metav1.ConditionTrue, "")(st)
	})
	if m := configMessage(t, c, teamA, "web"); m != "web-hello-v1" {
		t.Fatalf("web message %q", m)
	}
	// Planned again as the identity: nothing to change.
	waitReconciles(t, c, teamA, 2, "shop")
	st := waitStack(t, c, teamA, "shop", 30*time.Second, "up to date", isCond("Ready", metav1.ConditionTrue, v1alpha1.ReasonUpToDate))
	if revisionsOf(st) != "api:1:deployed web:1:deployed" {
		t.Fatalf("revisions %s", revisionsOf(st))
	}
	// Deleted with prune: uninstalled as the identity too.
	deleteStack(t, c, teamA, "shop")
	waitGone(t, c, teamA, "shop", 60*time.Second)
	if recs := helmRecords(t, teamA); len(recs) > 0 {
		t.Fatalf("release records left after the pruning deletion: %d", len(recs))
	}
	if deploymentExists(t, teamA, "web") {
		t.Fatal("Deployment web left after the pruning deletion")
	}
}

// Under --tenancy strict a Stack naming another namespace's ConfigMap in
// varsFrom is Invalid, naming the field, and nothing is planned.
func TestCrossNamespaceVarsFromStrict(t *testing.T) {
	cluster.Need(t)
	c := kube(t)
	teamA, teamB := team(t, c), team(t, c)
	create(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "vars", Namespace: teamB}, Data: map[string]string{"message": "from-b"}})
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, teamA, "v1", ""), "v1")
	create(t, c, newStack(teamA, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.VarsFrom = []v1alpha1.VarsFrom{{Kind: "ConfigMap", Name: "vars", Namespace: teamB}}
	}))
	startController(t, teamA, func(o *controller.Options) {
		o.Tenancy, o.DefaultServiceAccount = controller.TenancyStrict, "deployer"
	})
	st := waitStack(t, c, teamA, "shop", 60*time.Second, "Invalid", isCond("Ready", metav1.ConditionFalse, v1alpha1.ReasonInvalid))
	if msg, want := cond(st, "Ready").Message, "spec.varsFrom[0].namespace: "+teamB; !strings.Contains(msg, want) {
		t.Fatalf("the condition does not name %q:%s", want, describe(st))
	}
	if st.Status.Plan != nil || len(st.Status.Releases) > 0 {
		t.Fatalf("planned:%s", describe(st))
	}
	var cm corev1.ConfigMap
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: teamA, Name: "api-config"}, &cm); !apierrors.IsNotFound(err) {
		t.Fatalf("ConfigMap %s/api-config: created (or %v)", teamA, err)
	}
}

// A release in a namespace the Stack's identity may not use (kube-system,
// another team's, with adopt = true) is refused at plan in one form:
// Ready=False Forbidden, naming the identity, the verb and the namespace,
// each refusal once and never in the API server's words.
func TestStackIdentityReleaseNamespaceRefused(t *testing.T) {
	cluster.Need(t)
	c := kube(t)
	teamA, teamB := team(t, c), team(t, c)
	reg := sourcetest.StartRegistry(t, "", "")
	for i, tc := range []struct{ namespace, extra string }{
		{"kube-system", ""},
		{teamB, "adopt = true"},
	} {
		dir := tenantStack(t, teamA, map[string]string{"own.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own-" + teamA + "\ndata: {by: team-a}\n"})
		// Two stacks: one Stack each, not duplicates.
		hcl := fmt.Sprintf("stack \"tenant-%d\" {\n  default_namespace = %q\n}\nrelease \"app\" {\n  chart     = \"./charts/tenant\"\n  namespace = %q\n  %s\n}\n", i+1, teamA, tc.namespace, tc.extra)
		if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
			t.Fatal(err)
		}
		tag := fmt.Sprintf("v%d", i+1)
		push(t, reg, dir, tag)
		name := fmt.Sprintf("into-%d", i+1)
		create(t, c, newStack(teamA, name, "oci://"+reg.Host+"/stacks/app:"+tag, func(st *v1alpha1.Stack) {
			st.Spec.ServiceAccountName = "deployer"
		}))
	}
	startController(t, teamA, nil)
	for i, ns := range []string{"kube-system", teamB} {
		name := fmt.Sprintf("into-%d", i+1)
		st := waitStack(t, c, teamA, name, 90*time.Second, "refused", func(st *v1alpha1.Stack) bool {
			r := cond(st, "Ready")
			return r != nil && r.Status == metav1.ConditionFalse && r.Reason != "" && r.Reason != "Reconciling" && st.Status.LastError != ""
		})
		r := cond(st, "Ready")
		t.Logf("%s: Ready=False %s: %s", ns, r.Reason, r.Message)
		who := regexp.MustCompile(`serviceaccount ` + teamA + `/deployer may not \S+ \S+ in namespace ` + regexp.QuoteMeta(ns))
		if r.Reason != v1alpha1.ReasonForbidden || !who.MatchString(r.Message) {
			t.Errorf("release in %s: Ready=False %s %q, want Forbidden naming the identity and the namespace", ns, r.Reason, r.Message)
		}
		if strings.Contains(r.Message, "is forbidden") || strings.Contains(r.Message, "cannot ") {
			t.Errorf("release in %s: the API server's text: %s", ns, r.Message)
		}
		for _, line := range strings.Split(r.Message, "\n") {
			if strings.Count(r.Message, line) > 1 {
				t.Errorf("release in %s: %q said twice:\n%s", ns, line, r.Message)
			}
		}
		if s := who.FindAllString(r.Message, -1); len(s) > 1 && s[0] == s[1] {
			t.Errorf("release in %s: the refusal said %d times:\n%s", ns, len(s), r.Message)
		}
	}
	if recs := helmRecords(t, teamB); len(recs) > 0 {
		t.Errorf("release records written in %s: %d", teamB, len(recs))
	}
}
