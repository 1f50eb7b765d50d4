package config

import (
	"github.com/convoy-sh/convoy/internal/stack/dag"
	"github.com/hashicorp/hcl/v2"
)

// Graph builds the dependency graph of the stack's release instances: one
// vertex per instance, an edge per dependency with the range of the
// reference or depends_on entry that created it. It reports cycles.
func (s *Stack) Graph() (*dag.Graph[ReleaseInstanceAddr], hcl.Diagnostics) {
	g := dag.New[ReleaseInstanceAddr]()
	for _, ri := range s.Releases {
		g.Add(ri.Addr)
	}
	for _, ri := range s.Releases {
		for _, dep := range ri.DependsOn {
			g.Connect(ri.Addr, dep.Addr, dep.Range)
		}
	}
	return g, g.Validate()
}
