// Package releases writes a stack from the Helm release records on a
// cluster (convoy's, helm v3's and v4's): one release block per deployed
// release, its user values as a values file, its chart written from the
// record (or named in a repository), and sensitive-looking values apart in
// a file to encrypt with SOPS. It only turns records into files: reading
// them from a cluster is internal/run's (run.ImportReleases).
package releases
