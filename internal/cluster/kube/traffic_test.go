package kube

import (
	"net/http/httptest"
	"testing"
)

func TestIsList(t *testing.T) {
	for path, want := range map[string]bool{
		"/api/v1/namespaces/ns/pods":                        true,
		"/api/v1/namespaces/ns/pods/web":                    false,
		"/api/v1/namespaces":                                true,
		"/api/v1/namespaces/ns":                             false,
		"/apis/apps/v1/namespaces/ns/deployments":           true,
		"/apis/apps/v1/namespaces/ns/deployments/web":       false,
		"/apis/rbac.authorization.k8s.io/v1/clusterroles":   true,
		"/apis/rbac.authorization.k8s.io/v1/clusterroles/x": false,
		"/api/v1":  false,
		"/apis":    false,
		"/version": false,
	} {
		if got := isList(path); got != want {
			t.Errorf("isList(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestKindOf(t *testing.T) {
	for _, c := range []struct{ method, url, want string }{
		{"POST", "/api/v1/namespaces/ns/secrets", "create secrets"},
		{"PUT", "/api/v1/namespaces/ns/secrets/sh.helm.release.v1.a.v1", "update secrets"},
		{"PATCH", "/apis/apps/v1/namespaces/ns/deployments/web?dryRun=All", "patch deployments"},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments/web", "get deployments"},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments?labelSelector=a", "list deployments"},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments?watch=true", "watch deployments"},
		{"GET", "/api/v1/namespaces/ns/pods/web-1/log", "get pods/log"},
		{"GET", "/api/v1/namespaces/ns", "get namespaces"},
		{"POST", "/api/v1/namespaces", "create namespaces"},
		{"GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles", "list clusterroles"},
		{"DELETE", "/apis/batch/v1/namespaces/ns/jobs/hook", "delete jobs"},
		{"GET", "/apis/apps/v1", "get discovery"},
		{"GET", "/version", "get discovery"},
	} {
		req := httptest.NewRequest(c.method, c.url, nil)
		if got := kindOf(req); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.method, c.url, got, c.want)
		}
	}
}

func TestIsDiscovery(t *testing.T) {
	for path, want := range map[string]bool{
		"/version":              true,
		"/api":                  true,
		"/api/v1":               true,
		"/apis":                 true,
		"/apis/apps":            true,
		"/apis/apps/v1":         true,
		"/api/v1/namespaces":    false,
		"/api/v1/namespaces/ns": false,
		"/apis/apps/v1/namespaces/ns/deployments": false,
		"/apis/apps/v1/deployments":               false,
		"/healthz":                                false,
	} {
		if got := isDiscovery(path); got != want {
			t.Errorf("isDiscovery(%q) = %v, want %v", path, got, want)
		}
	}
}
