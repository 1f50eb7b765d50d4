package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// TestHeldName: a pod of a StatefulSet's name is a blocker unless it is
// the StatefulSet's own, or an orphan it selects (and so adopts).
func TestHeldName(t *testing.T) {
	sts := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "redis-master", "namespace": "shop", "uid": "new"},
		"spec":     map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "redis", "instance": "cache"}}},
	}}
	sel, err := selectorOf(sts)
	if err != nil {
		t.Fatal(err)
	}
	pod := func(instance string, owner types.UID) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "redis-master-0", Namespace: "shop", Labels: map[string]string{"app": "redis", "instance": instance}}}
		if owner != "" {
			yes := true
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "redis-master", UID: owner, Controller: &yes}}
		}
		return p
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string // "" for none
	}{
		{"its own", pod("cache", "new"), ""},
		{"an orphan it adopts", pod("cache", ""), ""},
		{"an orphan of the old release name", pod("redis", ""),
			"pod shop/redis-master-0 exists, owned by no StatefulSet (its instance=redis does not match the StatefulSet's selector instance=cache, so it is never adopted): " +
				"the StatefulSet cannot create its pod of that name; delete it (kubectl delete pod -n shop redis-master-0), " +
				"then make the StatefulSet try again at once (kubectl rollout restart statefulset -n shop redis-master): after its failed attempts it may wait minutes"},
		{"another StatefulSet's", pod("cache", "old"), "pod shop/redis-master-0 exists, owned by StatefulSet redis-master (uid old), not by this StatefulSet (uid new): "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := heldName(sts, sel, tt.pod)
			if tt.want == "" && got != "" || tt.want != "" && !strings.HasPrefix(got, tt.want) {
				t.Errorf("heldName =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
