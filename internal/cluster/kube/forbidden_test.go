package kube_test

import (
	"errors"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestForbidden(t *testing.T) {
	for _, tc := range []struct {
		name     string
		resource schema.GroupResource
		reason   string // the authorizer's message, as the API server words it
		want     string // "": left as it is
	}{
		{
			name: "cluster-scoped", resource: schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"},
			reason: `User "system:serviceaccount:team-a:deployer" cannot create resource "clusterrolebindings" in API group "rbac.authorization.k8s.io" at the cluster scope`,
			want:   "serviceaccount team-a/deployer may not create clusterrolebindings.rbac.authorization.k8s.io",
		},
		{
			name: "namespaced core", resource: schema.GroupResource{Resource: "secrets"},
			reason: `User "system:serviceaccount:team-a:deployer" cannot get resource "secrets" in API group "" in the namespace "redis"`,
			want:   "serviceaccount team-a/deployer may not get secrets in namespace redis",
		},
		{
			name: "a person, a subresource", resource: schema.GroupResource{Group: "apps", Resource: "deployments"},
			reason: `User "alice" cannot patch resource "deployments/scale" in API group "apps" in the namespace "shop": no RBAC policy matched`,
			want:   `user "alice" may not patch deployments/scale.apps in namespace shop`,
		},
		{
			name: "the controller may not impersonate", resource: schema.GroupResource{Resource: "serviceaccounts"},
			reason: `User "system:serviceaccount:convoy-system:convoy-controller" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team-a"`,
			want:   "serviceaccount convoy-system/convoy-controller may not impersonate serviceaccounts in namespace team-a",
		},
		{
			name: "admission, not the authorizer", resource: schema.GroupResource{Resource: "pods"},
			reason: `violates PodSecurity "restricted:latest": privileged`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apiErr := apierrors.NewForbidden(tc.resource, "x", errors.New(tc.reason))
			err := kube.Forbidden(apiErr)
			var fe *kube.ForbiddenError
			if tc.want == "" {
				if errors.As(err, &fe) {
					t.Fatalf("read as the authorizer's: %v", err)
				}
				return
			}
			if !errors.As(err, &fe) {
				t.Fatalf("not a *kube.ForbiddenError: %v", err)
			}
			if err.Error() != tc.want {
				t.Fatalf("got  %q\nwant %q", err.Error(), tc.want)
			}
			if !apierrors.IsForbidden(err) {
				t.Fatal("no longer IsForbidden")
			}
		})
	}
}
