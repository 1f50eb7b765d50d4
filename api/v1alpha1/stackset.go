package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster registrations are Secrets (convoy cluster add): a kubeconfig
// without exec plugins or file paths under KubeconfigKey, labelled
// RegistrationLabel, and the user's labels that StackSets select.
const (
	// RegistrationLabel marks a Secret as a cluster registration; its
	// value is RegistrationValue.
	RegistrationLabel = "convoy.dev/registration"
	RegistrationValue = "cluster"
	// AllowedNamespacesAnnotation on a registration lists, comma
	// separated, the namespaces whose StackSets may select it under
	// --tenancy strict ("*": any). Its own namespace always may.
	AllowedNamespacesAnnotation = "convoy.dev/allowed-namespaces"
	// KubeconfigKey is the registration's key with the kubeconfig.
	KubeconfigKey = "kubeconfig"
	// StackSetLabel on a generated Stack (and Pipeline, and mirrored
	// kubeconfig Secret) names the StackSet that owns it.
	StackSetLabel = "convoy.dev/stackset"
	// ElementAnnotation on a generated Stack names the generator element
	// it was made for.
	ElementAnnotation = "convoy.dev/element"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=stacksets,singular=stackset,scope=Namespaced,categories=convoy
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name=Ready,type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name=Status,type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name=Stacks,type=string,JSONPath=`.status.summary`
// +kubebuilder:printcolumn:name=Plan,type=string,priority=1,JSONPath=`.status.planSummary`
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`

// StackSet generates one Stack per element of its generators (a
// registered cluster, a list entry, or a pair of both) from a template,
// owns them, and rolls a new source out over them in steps.
type StackSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec StackSetSpec `json:"spec,omitempty"`
	// +kubebuilder:pruning:PreserveUnknownFields
	Status StackSetStatus `json:"status,omitempty"`
}

// RemovalPolicy says what happens to the Stack of an element that left
// the generators' elements.
//
// +kubebuilder:validation:Enum=orphan;destroy
type RemovalPolicy string

// Removal policies.
const (
	// RemovalOrphan deletes the Stack and leaves its releases running
	// (the Stack's prune is false).
	RemovalOrphan RemovalPolicy = "orphan"
	// RemovalDestroy deletes the Stack with prune: its releases are
	// uninstalled.
	RemovalDestroy RemovalPolicy = "destroy"
)

// StackSetSpec is what a StackSet should generate.
type StackSetSpec struct {
	// Generators give the elements; each element is one Stack. Elements
	// of several generators are joined (a name twice is an error).
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	Generators []Generator `json:"generators"`
	// Template is the Stack each element gets, with {{parameters}}.
	Template StackTemplate `json:"template"`
	// Removal is what happens to the Stack of an element that is gone:
	// orphan (default: the Stack goes, its releases stay) or destroy.
	//
	// +kubebuilder:default=orphan
	Removal RemovalPolicy `json:"removal,omitempty"`
	// Strategy rolls a new source out in steps; none: every Stack gets
	// the template's source at once.
	Strategy *StackSetStrategy `json:"strategy,omitempty"`
	// Paused holds a rolling rollout: no Stack is pinned to a new
	// digest until it is false again (convoy stackset pause|resume).
	Paused bool `json:"paused,omitempty"`
}

// Generator is exactly one of clusters, list and matrix.
//
// +kubebuilder:validation:XValidation:rule="[has(self.clusters), has(self.list), has(self.matrix)].filter(x, x).size() == 1",message="a generator is exactly one of clusters, list and matrix"
type Generator struct {
	Clusters *ClustersGenerator `json:"clusters,omitempty"`
	// List is a fixed list of elements.
	//
	// +kubebuilder:validation:MaxItems=500
	List []ListElement `json:"list,omitempty"`
	// Matrix is every pair of the elements of two generators (neither a
	// matrix).
	Matrix *MatrixGenerator `json:"matrix,omitempty"`
}

// MatrixGenerator pairs the elements of two generators.
type MatrixGenerator struct {
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=2
	Generators []LeafGenerator `json:"generators"`
}

// LeafGenerator is a generator of a matrix: clusters or list.
//
// +kubebuilder:validation:XValidation:rule="has(self.clusters) != has(self.list)",message="a matrix generator is exactly one of clusters and list"
type LeafGenerator struct {
	Clusters *ClustersGenerator `json:"clusters,omitempty"`
	// +kubebuilder:validation:MaxItems=500
	List []ListElement `json:"list,omitempty"`
}

// ClustersGenerator gives one element per cluster registration whose
// labels match.
type ClustersGenerator struct {
	// Selector matches the registrations' labels (empty: all).
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Namespace holds the registrations ("": the StackSet's). Under
	// --tenancy strict a registration of another namespace must allow
	// the StackSet's (convoy.dev/allowed-namespaces).
	//
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
	// Block is the stack's cluster block the registration's kubeconfig
	// is given to (default "target").
	//
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_-]*$`
	Block string `json:"block,omitempty"`
}

// ListElement is one element of a list generator.
type ListElement struct {
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// Vars are the element's parameters ({{list.vars.KEY}}).
	//
	// +kubebuilder:validation:MaxProperties=100
	Vars map[string]string `json:"vars,omitempty"`
}

// StackTemplate is a generated Stack: its name, labels and spec, whose
// name, spec.environment and spec.vars' values may hold parameters.
type StackTemplate struct {
	// Name is the Stack's name (default "{{stackset.name}}-{{element}}").
	//
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
	// Labels are added to the Stack's.
	Labels map[string]string `json:"labels,omitempty"`
	// Spec is the Stack's spec. With a rolling strategy its source is a
	// tag the rollout follows (the Stacks are pinned to its digests), or
	// a digest (a Pipeline stage pins the StackSet), or none yet.
	Spec StackSpec `json:"spec"`
}

// StackSetStrategy is how a new source reaches the Stacks.
type StackSetStrategy struct {
	Rolling *RollingStrategy `json:"rolling,omitempty"`
}

// RollingStrategy moves each new digest of the template's source tag
// through steps: a step's Stacks get it only once the step before
// verified it (every Stack Ready on it, the gates holding through the
// bake).
type RollingStrategy struct {
	// Steps take the Stacks in order: each step those of its selector
	// (cluster labels) or its percent of all Stacks not taken by an
	// earlier step; the last step takes every Stack left.
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	Steps []RolloutStep `json:"steps"`
}

// RolloutStep is one step of a rollout: Stack selection and the
// Pipeline stage's settings (docs/controller.md, Pipelines).
//
// +kubebuilder:validation:XValidation:rule="!(has(self.selector) && has(self.percent))",message="a step is a selector or a percent, not both"
type RolloutStep struct {
	// Name (default step-N, from 1).
	//
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name,omitempty"`
	// Selector takes the Stacks whose cluster's labels match.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Percent takes this share of all Stacks (rounded up), in name
	// order, from those left.
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Percent *int32 `json:"percent,omitempty"`
	// MaxParallel is how many of the step's Stacks are pinned at once.
	//
	// +kubebuilder:validation:Minimum=1
	MaxParallel *int32 `json:"maxParallel,omitempty"`
	// Bake is how long the step's Stacks stay Ready with the gates
	// holding before the next step starts.
	//
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	Bake *metav1.Duration `json:"bake,omitempty"`
	// Gates must hold during the bake (a Pipeline stage's gates).
	//
	// +kubebuilder:validation:MaxItems=20
	Gates []Gate `json:"gates,omitempty"`
	// Approval manual: the step waits for convoy promote.
	//
	// +kubebuilder:default=auto
	Approval Approval `json:"approval,omitempty"`
	// Rollback pins the step's Stacks back to the last digest the step
	// verified when it fails.
	Rollback bool `json:"rollback,omitempty"`
}

// StackSet condition reasons.
const (
	// ReasonNoClusters: the generators give no element.
	ReasonNoClusters = "NoClusters"
	// ReasonTemplateInvalid: an element's Stack would be invalid.
	ReasonTemplateInvalid = "TemplateInvalid"
	// ReasonStackConflict: a generated name is another's Stack.
	ReasonStackConflict = "StackConflict"
	// ReasonRolling: a rollout is under way.
	ReasonRolling = "Rolling"
	// ReasonPaused: spec.paused holds the rollout.
	ReasonPaused = "Paused"
	// ReasonHalted: a step failed; later steps are held.
	ReasonHalted = "Halted"
	// ReasonProgressing: generated Stacks are not all Ready yet.
	ReasonProgressing = "Progressing"
)

// StackSetStatus is what the controller last observed and did.
type StackSetStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	// Stacks are the generated Stacks, by name.
	Stacks []StackSetStack `json:"stacks,omitempty"`
	// Steps are the rollout's steps (a rolling strategy).
	Steps []StageStatus `json:"steps,omitempty"`
	// Plans group the Stacks by identical plan.
	Plans []PlanGroup `json:"plans,omitempty"`
	// Summary counts the Stacks by readiness, for kubectl get.
	Summary string `json:"summary,omitempty"`
	// PlanSummary is Plans in one line, for kubectl get -o wide.
	PlanSummary string `json:"planSummary,omitempty"`
	// Drifted are the Stacks found edited by hand and restored since the
	// spec last changed.
	Drifted []string `json:"drifted,omitempty"`
	// Rollout is how far the template source's digest got: what a
	// Pipeline stage promoting the StackSet waits for.
	Rollout *StackSetRollout `json:"rollout,omitempty"`
}

// RolloutPhase is how far a digest got over a StackSet's Stacks.
type RolloutPhase string

// Rollout phases.
const (
	// RolloutProgressing: some Stack is not Ready on the digest yet, or
	// some step has not verified it.
	RolloutProgressing RolloutPhase = "Progressing"
	// RolloutDone: every generated Stack is Ready on the digest (its plan
	// applied) and every step verified it.
	RolloutDone RolloutPhase = "Done"
	// RolloutHalted: a step failed on the digest, or (without a strategy)
	// a Stack failed on it.
	RolloutHalted RolloutPhase = "Halted"
)

// StackSetRollout is the template source's digest (a rolling
// StackSet's: the newest its tag named) and its phase.
type StackSetRollout struct {
	Digest  string       `json:"digest"`
	Phase   RolloutPhase `json:"phase"`
	Message string       `json:"message,omitempty"`
}

// StackSetStack is one generated Stack.
type StackSetStack struct {
	Name    string `json:"name"`
	Element string `json:"element"`
	// Cluster is the registration (namespace/name), if any.
	Cluster string `json:"cluster,omitempty"`
	Step    string `json:"step,omitempty"`
	// Digest is the source digest the Stack is on.
	Digest string `json:"digest,omitempty"`
	// State is its Ready condition (Ready, or the reason).
	State string `json:"state,omitempty"`
}

// PlanGroup is the Stacks whose plans are identical.
type PlanGroup struct {
	// Plan is the plan's summary and changed releases, or the state of
	// Stacks without a current plan.
	Plan   string   `json:"plan"`
	Stacks []string `json:"stacks"`
}

// StackSetList is a list of StackSets.
//
// +kubebuilder:object:root=true
type StackSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StackSet `json:"items"`
}
