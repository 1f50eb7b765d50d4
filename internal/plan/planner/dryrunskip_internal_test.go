package planner

import (
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestSkipDryRun: a full plan skips an object's dry run only when its
// release's live objects are as convoy applied them, the object renders as
// it was applied, its kind is built in and no ignore_changes rule matches
// it. Each other case is dry-run.
func TestSkipDryRun(t *testing.T) {
	obj := func(apiVersion, kind, image string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": "web", "namespace": "shop"},
			"spec":     map[string]any{"image": image},
		}}
	}
	deployment := obj("apps/v1", "Deployment", "web:1")
	plain := &release.Request{}
	ignoring := &release.Request{IgnoreChanges: kube.IgnoreRules{{Kind: "Deployment", Paths: []kube.Pointer{{"spec", "replicas"}}}}}
	ignoringOthers := &release.Request{IgnoreChanges: kube.IgnoreRules{{Kind: "Deployment", Name: "api", Paths: []kube.Pointer{{"spec", "replicas"}}}}}
	for _, tc := range []struct {
		name      string
		intact    bool
		obj, prev *unstructured.Unstructured
		req       *release.Request
		skip      bool
	}{
		{"built-in kind, applied as rendered", true, deployment, obj("apps/v1", "Deployment", "web:1"), plain, true},
		{"core kind", true, obj("v1", "ConfigMap", "x"), obj("v1", "ConfigMap", "x"), plain, true},
		{"a rule for another name", true, deployment, obj("apps/v1", "Deployment", "web:1"), ignoringOthers, true},
		{"live objects changed since the apply", false, deployment, obj("apps/v1", "Deployment", "web:1"), plain, false},
		{"rendered differently", true, deployment, obj("apps/v1", "Deployment", "web:2"), plain, false},
		{"new in this revision", true, deployment, nil, plain, false},
		{"custom resource", true, obj("example.convoy.dev/v1", "Widget", "x"), obj("example.convoy.dev/v1", "Widget", "x"), plain, false},
		{"custom resource in a k8s.io group", true, obj("gateway.networking.k8s.io/v1", "HTTPRoute", "x"), obj("gateway.networking.k8s.io/v1", "HTTPRoute", "x"), plain, false},
		{"ignore_changes matches it", true, deployment, obj("apps/v1", "Deployment", "web:1"), ignoring, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := skipDryRun(tc.intact, tc.obj, tc.prev, tc.req); got != tc.skip {
				t.Fatalf("skipDryRun = %v, want %v", got, tc.skip)
			}
		})
	}
}
