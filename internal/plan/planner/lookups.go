package planner

import (
	"context"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"k8s.io/apimachinery/pkg/runtime"
)

// lookupKey is what a chart's lookup asks a cluster for (name "": a
// list).
type lookupKey struct {
	cluster                           kube.ClusterID
	apiVersion, kind, namespace, name string
}

// lookup answers the lookups of the charts a plan renders on rd's
// cluster: each object (or list) is read once per plan, however many
// renderings of however many releases ask (a release rendered as the
// next revision and again as the deployed one, its attributions, charts
// looking up the same Secret). Each caller gets a copy: templates may
// change what they are given.
func (c *computer) lookup(ctx context.Context, rd *release.Renderer) chart.LookupFunc {
	live := rd.Lookup(ctx)
	return func(apiVersion, kind, namespace, name string) (map[string]any, error) {
		got, err := c.lookups.Get(lookupKey{rd.ClusterID(), apiVersion, kind, namespace, name}, func() (map[string]any, error) {
			return live(apiVersion, kind, namespace, name)
		})
		if err != nil {
			return nil, err
		}
		return runtime.DeepCopyJSON(got), nil
	}
}
