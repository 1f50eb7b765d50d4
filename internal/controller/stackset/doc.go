// Package stackset is the StackSet reconciler: it generates one Stack per
// element of a StackSet's generators (registered clusters, list entries,
// pairs of both) from its template, owns them, removes those of elements
// gone, restores those edited by hand, and, for a rolling strategy, owns
// a Pipeline whose stages are the steps (the Pipeline reconciler pins,
// bakes, gates, halts and rolls back). Generation (generate.go), step
// assignment (steps.go) and the status (status.go) are pure functions;
// reconciler.go reads and writes around them.
package stackset
