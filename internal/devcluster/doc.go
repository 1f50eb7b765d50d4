// Package devcluster runs a real, local Kubernetes control plane for convoy's
// integration tests and demo: etcd, kube-apiserver, kube-controller-manager
// and kube-scheduler built from the Go module proxy at a pinned version, with
// kwok acting as the kubelet of a few fake nodes.
//
// Everything it starts belongs to one Cluster: ports are chosen free at start
// (so clusters run side by side), every process runs in its own process group
// and receives SIGKILL if the process that started it dies, and Stop ends
// exactly those processes and removes the cluster's directory.
//
// Pods can simulate failures through two labels (see docs/devcluster.md):
// LabelNeverReady keeps a pod Running but never Ready, and LabelFail makes it
// end Failed.
package devcluster
