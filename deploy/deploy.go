// Package deploy holds the controller's manifests, embedded in the binary
// for `convoy controller install`: the Stack CRD, the RBAC and a
// Deployment.
package deploy

import _ "embed"

// CRD is the stacks.convoy.dev CustomResourceDefinition.
//
//go:embed crd/stacks.convoy.dev.yaml
var CRD []byte

// RBAC is the controller's namespace, ServiceAccount, ClusterRole and
// binding.
//
//go:embed rbac/rbac.yaml
var RBAC []byte

// Deployment runs the controller in the cluster.
//
//go:embed deployment.yaml
var Deployment []byte
