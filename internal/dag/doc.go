// Package dag is the dependency graph of a stack's release instances.
//
// Vertices are addresses (config.ReleaseInstanceAddr, or config.ReleaseAddr
// for the release-level graph used during evaluation); an edge records that
// one vertex depends on another, with the source range of the reference
// that created it so that cycle errors can point at it. All orders are
// stable: ties are broken by the vertices' Less method, never by map
// iteration.
package dag
