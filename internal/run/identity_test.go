package run_test

import (
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"reflect"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
)

func TestIdentityRoundTrip(t *testing.T) {
	for _, id := range []stacklock.Identity{
		{Stack: "shop", Clusters: []kube.ClusterID{"https://10.0.0.1:6443"}},
		{Stack: "shop.prod", Clusters: []kube.ClusterID{"https://a.example", "https://b.example:8443/prefix"}},
	} {
		got, ok := stacklock.ParseIdentity(id.String())
		if !ok || !reflect.DeepEqual(got, id) {
			t.Errorf("%s: parsed as %+v (%v)", id, got, ok)
		}
	}
	for _, bad := range []string{"", "shop", "@https://a"} {
		if _, ok := stacklock.ParseIdentity(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// A controller's Stack whose identity is scoped to its namespace reads
// back with it; a stack ID alone (the CLI's) keeps its old form, so that
// identities recorded before keep parsing as they were.
func TestScopedIdentityRoundTrip(t *testing.T) {
	id := stacklock.Identity{Namespace: "team-a", Stack: "billing.prod", Clusters: []kube.ClusterID{"https://10.0.0.1:6443"}}
	if got, want := id.String(), "team-a/billing.prod@https://10.0.0.1:6443"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	got, ok := stacklock.ParseIdentity(id.String())
	if !ok || !reflect.DeepEqual(got, id) {
		t.Errorf("%s: parsed as %+v (%v)", id, got, ok)
	}
	unscoped := stacklock.Identity{Stack: "billing", Clusters: []kube.ClusterID{"https://10.0.0.1:6443"}}
	if got, want := unscoped.String(), "billing@https://10.0.0.1:6443"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for _, bad := range []string{"/billing@https://a", "team-a/@https://a"} {
		if _, ok := stacklock.ParseIdentity(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}
