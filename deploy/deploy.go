// Package deploy holds the controller's manifests, embedded in the binary
// for `convoy controller install`: the Stack, Pipeline and StackSet CRDs, the RBAC, the
// approval admission policies and a Deployment.
package deploy

import _ "embed"

// CRD is the stacks.convoy.dev CustomResourceDefinition. The CRDs are
// generated from the API types (api/v1alpha1, make generate) into the
// chart's crds/, the one copy: the chart installs them, and so does
// `convoy controller install`.
//
//go:embed chart/convoy-controller/crds/convoy.dev_stacks.yaml
var CRD []byte

// PipelineCRD is the pipelines.convoy.dev CustomResourceDefinition.
//
//go:embed chart/convoy-controller/crds/convoy.dev_pipelines.yaml
var PipelineCRD []byte

// StackSetCRD is the stacksets.convoy.dev CustomResourceDefinition.
//
//go:embed chart/convoy-controller/crds/convoy.dev_stacksets.yaml
var StackSetCRD []byte

// RBAC is the controller's namespace, ServiceAccount, ClusterRole and
// binding, and the ClusterRoles convoy-editor and convoy-approver of the
// people who edit and approve Stacks.
//
//go:embed rbac/rbac.yaml
var RBAC []byte

// ApprovalPolicy is the ValidatingAdmissionPolicies (and their bindings)
// that make approving a permission: the verb approve on stacks.convoy.dev
// or pipelines.convoy.dev, and approvals that name their own user.
//
//go:embed admission/approval.yaml
var ApprovalPolicy []byte

// Deployment runs the controller in the cluster. Its image is a
// placeholder: `convoy controller install` sets DefaultImage or the image
// it is given.
//
//go:embed deployment.yaml
var Deployment []byte

// WebhookService is the Service of the controller's push receiver,
// installed with it (convoy controller install --webhook-token-secret).
//
//go:embed webhook-service.yaml
var WebhookService []byte

// WebhookPort is the push receiver's port in the Deployment and its
// Service.
const WebhookPort = 9292

// ImageRepository is where convoy's releases publish the image `make
// image` builds.
const ImageRepository = "ghcr.io/convoy-sh/convoy"

// DefaultImage is the image of a convoy version: the Deployment's and the
// chart's (its appVersion) unless told otherwise.
func DefaultImage(version string) string { return ImageRepository + ":" + version }
