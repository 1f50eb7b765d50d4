package kube

import "testing"

// The API server's text of a refusal, wherever it ended up in a message,
// reads as who may not do what.
func TestRefusalsRewritesTheAPIServersText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`release.app: list release records in namespace "kube-system": secrets is forbidden: User "system:serviceaccount:team-a:deployer" cannot list resource "secrets" in API group "" in the namespace "kube-system"`,
			`release.app: list release records in namespace "kube-system": serviceaccount team-a/deployer may not list secrets in namespace kube-system`},
		{`rbac.authorization.k8s.io/v1 ClusterRoleBinding x: clusterrolebindings.rbac.authorization.k8s.io "x" is forbidden: User "alice" cannot get resource "clusterrolebindings" in API group "rbac.authorization.k8s.io" at the cluster scope`,
			`rbac.authorization.k8s.io/v1 ClusterRoleBinding x: user "alice" may not get clusterrolebindings.rbac.authorization.k8s.io`},
	} {
		got, ok := Refusals(tt.in)
		if !ok || got != tt.want {
			t.Errorf("Refusals(%q)\n= %q (%v)\nwant %q", tt.in, got, ok, tt.want)
		}
	}
	if got, ok := Refusals("admission webhook denied the request"); ok || got != "admission webhook denied the request" {
		t.Errorf("a message without a refusal: %q, %v", got, ok)
	}
}
