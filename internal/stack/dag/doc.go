// Package dag is the dependency graph of a stack's release instances, and
// the parallel walk that executes one.
//
// Vertices are addresses (config.ReleaseInstanceAddr, or config.ReleaseAddr
// for the release-level graph used during evaluation); an edge records that
// one vertex depends on another, with the source range of the reference
// that created it so that cycle errors can point at it. All orders are
// stable: ties are broken by the vertices' Less method, never by map
// iteration.
//
// Walk runs nodes of any comparable ID type with bounded parallelism: a
// node starts when everything it depends on succeeded, the dependents of a
// failure are skipped while independent branches go on, and an atomic walk
// restores every node that ran when one fails.
package dag
