// Package v1alpha1 is the convoy.dev/v1alpha1 API: the Stack custom
// resource that `convoy controller` reconciles (docs/controller.md). Its
// CRD is deploy/crd/stacks.convoy.dev.yaml.
package v1alpha1
