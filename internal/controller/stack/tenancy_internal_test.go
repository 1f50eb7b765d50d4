package stack

import (
	"errors"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func tenantStack(mod func(*v1alpha1.StackSpec)) *v1alpha1.Stack {
	st := &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shop"}}
	mod(&st.Spec)
	return st
}

func TestCrossNamespaceRefs(t *testing.T) {
	st := tenantStack(func(s *v1alpha1.StackSpec) {
		s.VarsFrom = []v1alpha1.VarsFrom{{Kind: "ConfigMap", Name: "a"}, {Kind: "Secret", Name: "b", Namespace: "team-a"}, {Kind: "ConfigMap", Name: "c", Namespace: "platform"}}
		s.Clusters = []v1alpha1.ClusterRef{{Name: "eu", SecretRef: v1alpha1.SecretKeyRef{Name: "kc", Namespace: "ops"}}}
		s.Notifications = []v1alpha1.Notification{{URLFrom: &v1alpha1.URLSource{SecretKeyRef: v1alpha1.SecretKeyRef{Name: "hook", Key: "url", Namespace: "ops"}}}}
	})
	want := "spec.varsFrom[2].namespace: platform, spec.clusters[0].secretRef.namespace: ops, spec.notifications[0].urlFrom.secretKeyRef.namespace: ops"
	if got := strings.Join(crossNamespaceRefs(st), ", "); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if msg := (Options{}).crossNamespaceError(st); msg != "" {
		t.Fatalf("refused without --no-cross-namespace-refs: %s", msg)
	}
	for _, o := range []Options{{NoCrossNamespaceRefs: true}, {Tenancy: TenancyStrict, DefaultServiceAccount: "deployer"}} {
		if msg := o.crossNamespaceError(st); !strings.HasPrefix(msg, want+": ") {
			t.Fatalf("%+v: %q", o, msg)
		}
	}
}

func TestImpersonating(t *testing.T) {
	named := tenantStack(func(s *v1alpha1.StackSpec) { s.ServiceAccountName = "deployer" })
	unnamed := tenantStack(func(*v1alpha1.StackSpec) {})
	for _, tc := range []struct {
		o     Options
		st    *v1alpha1.Stack
		wants string
	}{
		{Options{}, unnamed, ""},
		{Options{}, named, "system:serviceaccount:team-a:deployer"},
		{Options{DefaultServiceAccount: "convoy"}, unnamed, "system:serviceaccount:team-a:convoy"},
		{Options{DefaultServiceAccount: "convoy"}, named, "system:serviceaccount:team-a:deployer"},
	} {
		if got := tc.o.impersonating(tc.st); got != tc.wants {
			t.Errorf("%+v, spec %q: %q, want %q", tc.o, tc.st.Spec.ServiceAccountName, got, tc.wants)
		}
	}
}

func TestValidateTenancy(t *testing.T) {
	if err := (Options{Tenancy: TenancyStrict}).validateTenancy(); err == nil || !strings.Contains(err.Error(), "--default-service-account") {
		t.Fatalf("strict without a default service account: %v", err)
	}
	if err := (Options{DefaultServiceAccount: "Not_A_Name"}).validateTenancy(); err == nil {
		t.Fatal("an invalid service account name was accepted")
	}
	if err := (Options{Tenancy: TenancyStrict, DefaultServiceAccount: "convoy"}).validateTenancy(); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseTenancy("lax"); err == nil {
		t.Fatal("--tenancy lax accepted")
	}
}

func TestReferencesAcrossNamespaces(t *testing.T) {
	st := tenantStack(func(s *v1alpha1.StackSpec) {
		s.VarsFrom = []v1alpha1.VarsFrom{{Kind: "ConfigMap", Name: "shared", Namespace: "platform"}, {Kind: "Secret", Name: "own"}}
	})
	for _, tc := range []struct {
		kind, ns, name string
		want           bool
	}{
		{"ConfigMap", "platform", "shared", true},
		{"ConfigMap", "team-a", "shared", false},
		{"Secret", "team-a", "own", true},
		{"Secret", "platform", "own", false},
	} {
		if got := references(st, tc.kind, tc.ns, tc.name); got != tc.want {
			t.Errorf("%s %s/%s: %v", tc.kind, tc.ns, tc.name, got)
		}
	}
}

// A Stack acting as a service account of its namespace has an identity
// scoped to it; one acting as the controller keeps the stack's own (the
// CLI's lock).
func TestIdentityNamespace(t *testing.T) {
	named := tenantStack(func(s *v1alpha1.StackSpec) { s.ServiceAccountName = "deployer" })
	unnamed := tenantStack(func(*v1alpha1.StackSpec) {})
	for _, tc := range []struct {
		o    Options
		st   *v1alpha1.Stack
		want string
	}{
		{Options{}, unnamed, ""},
		{Options{}, named, "team-a"},
		{Options{DefaultServiceAccount: "deployer"}, unnamed, "team-a"},
		{Options{Tenancy: TenancyStrict, DefaultServiceAccount: "deployer"}, unnamed, "team-a"},
	} {
		if got := tc.o.identityNamespace(tc.st); got != tc.want {
			t.Errorf("%+v, serviceAccountName %q: %q, want %q", tc.o, tc.st.Spec.ServiceAccountName, got, tc.want)
		}
	}
}

// Every permission refusal of a plan is one sentence per refusal, each
// once: a *kube.ForbiddenError's, and the API server's text of one that
// reached the Stack unconverted.
func TestForbiddenMessage(t *testing.T) {
	raw := `secrets is forbidden: User "system:serviceaccount:team-a:deployer" cannot list resource "secrets" in API group "" in the namespace "kube-system"`
	err := errors.New("release.app: list release records in namespace \"kube-system\": " + raw + "\n" + "list release records in namespace \"kube-system\": " + raw + "\n" + "release.app: list release records in namespace \"kube-system\": " + raw)
	msg, ok := forbiddenMessage(err, err.Error())
	want := "release.app: list release records in namespace \"kube-system\": serviceaccount team-a/deployer may not list secrets in namespace kube-system\n" +
		"list release records in namespace \"kube-system\": serviceaccount team-a/deployer may not list secrets in namespace kube-system"
	if !ok || msg != want {
		t.Errorf("got %q (%v)\nwant %q", msg, ok, want)
	}
	if _, ok := forbiddenMessage(errors.New("boom"), "boom"); ok {
		t.Error("an error without a refusal is Forbidden")
	}
}
