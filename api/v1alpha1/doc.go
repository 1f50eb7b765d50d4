// Package v1alpha1 is the convoy.dev/v1alpha1 API: the Stack and Pipeline
// custom resources that `convoy controller` reconciles (docs/controller.md).
// Their deepcopy functions (zz_generated.deepcopy.go) are generated from
// these types by `make generate` (controller-gen). Their CRDs are
// deploy/crd/.
//
// +kubebuilder:object:generate=true
// +groupName=convoy.dev
package v1alpha1
