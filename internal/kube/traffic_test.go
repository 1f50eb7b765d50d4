package kube

import "testing"

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
