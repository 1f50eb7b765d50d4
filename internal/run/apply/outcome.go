package apply

import "github.com/convoy-sh/convoy/internal/stack/dag"

// Outcome is how a release's step ended (dag.Walk's outcome by address).
type Outcome = dag.Outcome[string]
