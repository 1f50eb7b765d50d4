package controllertest

import (
	"context"
	"testing"

	"github.com/convoy-sh/convoy/internal/controller/ctl"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ServiceAccount creates a ServiceAccount of ns bound in ns to a
// ClusterRole (convoy-editor, convoy-approver), and returns a client that
// authenticates with a token of it (TokenRequest) and its username.
func ServiceAccount(t *testing.T, ns, name, clusterRole string) (client.Client, string) {
	t.Helper()
	ctx := context.Background()
	cs := Cluster.Client()
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + clusterRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hour := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(Cluster.RESTConfig())
	cfg.BearerToken = tr.Status.Token
	c, err := ctl.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, "system:serviceaccount:" + ns + ":" + name
}
