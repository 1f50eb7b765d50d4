// Package kube is convoy's cluster layer: it turns rendered manifests into
// objects (Parse), applies them with server-side apply (Apply), installs CRDs
// (InstallCRDs), deletes (Delete, WaitForDelete) and waits, by watch, for
// readiness with kstatus (Wait) or for hooks to complete (WaitForCompletion).
//
// It knows nothing about releases. Every error about an object carries the
// object's identity, "apps/v1 Deployment ns/name: reason", and every call
// that talks to the API server takes a ctx first; the caller's deadline is the
// timeout.
package kube
