package stackset_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/controller/controllertest"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// serviceAccount creates a ServiceAccount of ns bound in ns to a
// ClusterRole (convoy-editor, convoy-approver), and returns a client that
// authenticates with a token of it and its username.
func serviceAccount(t *testing.T, ns, name, clusterRole string) (client.Client, string) {
	t.Helper()
	ctx := context.Background()
	cs := cluster.Client()
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
	cfg := rest.AnonymousClientConfig(cluster.RESTConfig())
	cfg.BearerToken = tr.Status.Token
	c, err := ctl.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, "system:serviceaccount:" + ns + ":" + name
}

// waitApprovalPolicy waits until the API server enforces the approval
// policy (a moment after it is created): until a dry-run create of an
// approved Stack by editor is refused.
func waitApprovalPolicy(t *testing.T, editor client.Client, ns string) {
	t.Helper()
	var err error
	devtest.Eventually(t, 60*time.Second, func() bool {
		st := controllertest.NewStack(ns, "policy-probe", "oci://example.invalid/stacks/app:v1", nil)
		st.Spec.ApprovedPlan = "sha256:" + strings.Repeat("0", 64)
		err = editor.Create(context.Background(), st, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "may not approve")
	}, func() string {
		return fmt.Sprintf("the approval policy is not enforced after 60s: a dry-run create by an editor: %v", err)
	})
}
