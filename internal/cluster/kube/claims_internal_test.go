package kube

import "testing"

// A replaced StatefulSet adopts the old pods only when it adds no claim
// template: the controller cannot add a volume to a running pod.
func TestAdoptsPods(t *testing.T) {
	sts := func(templates ...string) map[string]any {
		var vct []any
		for _, name := range templates {
			vct = append(vct, map[string]any{"metadata": map[string]any{"name": name}})
		}
		return map[string]any{"spec": map[string]any{"volumeClaimTemplates": vct}}
	}
	for _, tc := range []struct {
		name       string
		live, next map[string]any
		want       bool
	}{
		{"template grown", sts("data"), sts("data"), true},
		{"template removed", sts("data"), sts(), true},
		{"template added", sts(), sts("data"), false},
		{"template renamed", sts("data"), sts("redis-data"), false},
	} {
		if got := adoptsPods(tc.live, tc.next); got != tc.want {
			t.Errorf("%s: adoptsPods = %v, want %v", tc.name, got, tc.want)
		}
	}
}
