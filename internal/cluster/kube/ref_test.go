package kube_test

import (
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestRefString(t *testing.T) {
	tests := []struct {
		ref  kube.Ref
		want string
	}{
		{kube.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "api"}, "apps/v1 Deployment shop/api"},
		{kube.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "cfg"}, "v1 ConfigMap ns/cfg"},
		{kube.Ref{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "reader"}, "rbac.authorization.k8s.io/v1 ClusterRole reader"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.ref.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRefOf(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("StatefulSet")
	u.SetNamespace("db")
	u.SetName("pg")
	want := kube.Ref{Group: "apps", Version: "v1", Kind: "StatefulSet", Namespace: "db", Name: "pg"}
	if got := kube.RefOf(u); got != want {
		t.Errorf("RefOf = %#v, want %#v", got, want)
	}
}
