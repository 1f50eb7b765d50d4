// Package release is convoy's release engine: Helm-compatible release
// records (the "sh.helm.release.v1" storage format, so helm list, history and
// rollback keep working) and the release lifecycle — install, upgrade,
// rollback and uninstall with hooks, waits, atomic rollback and
// cleanup-on-fail — as one state machine on top of internal/cluster/kube.
//
// A release's records move through Helm's states: a pending-* record is
// written before the cluster is touched (and acts as the per-release lock),
// and ends deployed or failed; the previously deployed revision becomes
// superseded.
package release
