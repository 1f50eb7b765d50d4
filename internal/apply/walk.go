package apply

import "github.com/convoy-sh/convoy/internal/dag"

// The walk itself is dag.Walk; these names keep this package's callers
// compiling until they use dag directly.
type (
	// Node is a release of a walk, by address.
	Node = dag.Node[string]
	// Outcome is how a release's step ended.
	Outcome = dag.Outcome[string]
	// Status is how a step ended.
	Status = dag.Status
)

// Step outcomes.
const (
	Succeeded = dag.Succeeded
	Failed    = dag.Failed
	Skipped   = dag.Skipped
	Cancelled = dag.Cancelled
)

// Reverse returns the nodes for walking the graph backwards (destroy).
func Reverse(nodes []Node) []Node { return dag.Reverse(nodes) }
