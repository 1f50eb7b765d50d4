// Package v1alpha1 is the convoy.dev/v1alpha1 API: the Stack and Pipeline
// custom resources that `convoy controller` reconciles (docs/controller.md).
// Their deepcopy functions (zz_generated.deepcopy.go) and CRDs
// (deploy/chart/convoy-controller/crds/) are generated from these types and
// their markers by `make generate` (controller-gen).
//
// +kubebuilder:object:generate=true
// +groupName=convoy.dev
package v1alpha1
