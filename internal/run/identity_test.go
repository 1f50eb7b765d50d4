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
