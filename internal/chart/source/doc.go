// Package source fetches charts from where releases name them: HTTP(S) chart
// repositories (index.yaml) and OCI registries, with Masterminds/semver
// constraints chosen as Helm chooses them. What it fetches goes into a
// content-addressed cache shared by every stack (Cache); what it chose is
// recorded in the stack's lock file (Lock), so that plan and apply load the
// same bytes again without touching the network.
//
// Resolving (Resolver.Resolve) is the only networked step; it runs under
// `convoy init`. Loading a locked chart (LoadLocked) only reads the cache.
package source
