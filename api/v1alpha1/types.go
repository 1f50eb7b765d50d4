package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Approval says whether a plan applies on its own or waits for a person.
//
// +kubebuilder:validation:Enum=auto;manual
type Approval string

// Approval modes.
const (
	// ApprovalAuto applies every plan with changes.
	ApprovalAuto Approval = "auto"
	// ApprovalManual applies a plan only once spec.approvedPlan names its
	// digest.
	ApprovalManual Approval = "manual"
)

// ShardLabel selects the controller shard that reconciles a Stack
// (`convoy controller --shard KEY`).
const ShardLabel = "convoy.dev/shard"

// The controller lists the Stacks of one identity by status.identity
// (duplicates): a selectable field.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=stacks,singular=stack,scope=Namespaced,categories=convoy
// +kubebuilder:subresource:status
// +kubebuilder:selectablefield:JSONPath=`.status.identity`
// +kubebuilder:printcolumn:name=Ready,type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name=Status,type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name=Plan,type=string,JSONPath=`.status.plan.summary`
// +kubebuilder:printcolumn:name=Approval,type=string,JSONPath=`.spec.approval`
// +kubebuilder:printcolumn:name=Source,type=string,priority=1,JSONPath=`.status.source.ref`
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`

// Stack is a convoy stack reconciled in the cluster: pulled from an OCI
// artifact (`convoy push`), planned on every change and at an interval,
// and applied as its approval mode says.
type Stack struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec StackSpec `json:"spec,omitempty"`
	// +kubebuilder:pruning:PreserveUnknownFields
	Status StackStatus `json:"status,omitempty"`
}

// StackSpec is what a Stack should be.
//
// +kubebuilder:validation:XValidation:rule="!has(self.allowPolicies) || size(self.allowPolicies) == 0 || has(self.approvedPlan)",message="allowPolicies override the denials of the plan approvedPlan names, and no approvedPlan is set",fieldPath=".allowPolicies"
// +kubebuilder:validation:XValidation:rule="!has(self.retry) || !has(self.retry.backoff) || !has(self.interval) || duration(self.retry.backoff) <= duration(self.interval)",message="retry.backoff is longer than interval (retries are capped at the interval)",fieldPath=".retry.backoff"
type StackSpec struct {
	// Source is the stack artifact: oci://registry/repository:tag, or
	// …@sha256:… to pin a digest. Empty: the Stack waits (Ready=False,
	// reason NoSource) until a Pipeline pins it.
	//
	// +kubebuilder:validation:Pattern=`^oci://[^\s]+$`
	// +kubebuilder:validation:MaxLength=2048
	Source string `json:"source,omitempty"`
	// Environment names the stack's environment block ("": the one named
	// "default").
	//
	// +kubebuilder:validation:Pattern=`^([A-Za-z_][A-Za-z0-9_-]*)?$`
	// +kubebuilder:validation:MaxLength=253
	Environment string `json:"environment,omitempty"`
	// Vars are variable values, as --var name=value.
	//
	// +kubebuilder:validation:MaxProperties=1000
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z_][A-Za-z0-9_-]*$'))",message="variable names are identifiers (a letter or _, then letters, digits, _ and -)"
	Vars map[string]string `json:"vars,omitempty"`
	// VarsFrom are ConfigMaps and Secrets in the Stack's namespace whose
	// keys are variable values; a Secret's values are sensitive. Later
	// entries win over earlier ones, and Vars over all.
	//
	// +kubebuilder:validation:MaxItems=100
	VarsFrom []VarsFrom `json:"varsFrom,omitempty"`
	// Interval is how often the stack is planned again, to notice drift
	// and new tags (default 5m), a Go duration (30s, 5m, 1h30m).
	//
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') || duration(self) >= duration('1m')`,message="interval is shorter than the minimum of 1m (0s included); convoy controller install --min-interval lowers the minimum"
	Interval *metav1.Duration `json:"interval,omitempty"`
	// Approval is auto (default) or manual.
	//
	// +kubebuilder:default=auto
	Approval Approval `json:"approval,omitempty"`
	// ApprovedPlan, with manual approval, is the digest of the plan to
	// apply (status.plan.digest); with auto, a drift-only plan to apply
	// though driftCorrection is off.
	//
	// +kubebuilder:validation:Pattern=`^sha256:[0-9a-f]{64}$`
	ApprovedPlan string `json:"approvedPlan,omitempty"`
	// AllowPolicies are policies whose denials are overridden for the plan
	// ApprovedPlan names, and for no other (convoy approve --allow-policy);
	// the override is recorded in the release history.
	//
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z_][A-Za-z0-9_-]*$`
	AllowPolicies []string `json:"allowPolicies,omitempty"`
	// Approvals record who approved which plan (convoy approve writes an
	// entry as the user it runs as) and how many distinct users one plan
	// needs (required, default 1). Changing it needs the verb approve on
	// stacks.convoy.dev (the convoy-stack-approval admission policy).
	Approvals *Approvals `json:"approvals,omitempty"`
	// DriftCorrection restores live objects that drifted from what convoy
	// applied, without approval: the approved state is put back.
	DriftCorrection bool `json:"driftCorrection,omitempty"`
	// Clusters give the kubeconfig of the stack's cluster blocks, by block
	// name; releases without a cluster block go to the controller's own
	// cluster.
	//
	// +kubebuilder:validation:MaxItems=100
	// +listType=map
	// +listMapKey=name
	Clusters []ClusterRef `json:"clusters,omitempty"`
	// Storage says where the stack's release records live when its stack
	// block has no storage block (default: Secrets), and gives the sql
	// driver's connection string when that block gives none
	// (docs/storage.md).
	Storage *StorageSpec `json:"storage,omitempty"`
	// Suspend stops planning and applying.
	Suspend bool `json:"suspend,omitempty"`
	// Notifications are HTTP endpoints told of the Stack's events, each
	// event once per plan.
	//
	// +kubebuilder:validation:MaxItems=16
	Notifications []Notification `json:"notifications,omitempty"`
	// SourceSecretRef names a kubernetes.io/dockerconfigjson Secret in the
	// Stack's namespace with the credentials of the registries of the
	// stack artifact (spec.source) and of its OCI charts.
	SourceSecretRef *LocalObjectReference `json:"sourceSecretRef,omitempty"`
	// Prune, when the Stack is deleted, uninstalls its releases (dependents
	// first, hooks run, as convoy destroy); false (the default) leaves them
	// running and takes the stack's label off their records.
	Prune bool `json:"prune,omitempty"`
	// Retry says how a failed apply is tried again (default: 3 times, 30s
	// apart, doubling).
	Retry *RetrySpec `json:"retry,omitempty"`
	// Atomic rolls back the releases of a failed apply to their previous
	// revision (uninstalls a failed install), as convoy apply --atomic.
	Atomic bool `json:"atomic,omitempty"`
	// Verify admits only artifacts signed by a key of its Secret.
	Verify *VerifySpec `json:"verify,omitempty"`
	// ServiceAccountName is the identity the Stack is planned and applied
	// as: every request the controller makes for it, on every cluster
	// (reads, dry runs, applies, deletes, release records, lookup, hooks,
	// tests, the Secrets and ConfigMaps it names), impersonates
	// system:serviceaccount:<the Stack's namespace>:<name>. Empty: the
	// controller's --default-service-account, else the controller's own
	// identity.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// decodeErrors are the fields that did not decode (a Stack written
	// before the CRD's schema checked them): the Stack stalls, naming
	// them, while the others are reconciled.
	decodeErrors []string
}

// NotificationEvent is what a notification reports.
type NotificationEvent string

// Notification events.
const (
	// EventApprovalRequired: a plan waits for approval.
	EventApprovalRequired NotificationEvent = "ApprovalRequired"
	// EventApplied: a plan was applied.
	EventApplied NotificationEvent = "Applied"
	// EventFailed: pulling, planning or applying failed.
	EventFailed NotificationEvent = "Failed"
	// EventDrifted: a plan found objects changed outside convoy.
	EventDrifted NotificationEvent = "Drifted"
	// EventPolicyDenied: policies deny a plan.
	EventPolicyDenied NotificationEvent = "PolicyDenied"
)

// NotificationFormat is the body a notification posts.
//
// +kubebuilder:validation:Enum=json;slack;msteams
type NotificationFormat string

// Notification formats.
const (
	// FormatJSON posts convoy's own JSON document (the default).
	FormatJSON NotificationFormat = "json"
	// FormatSlack posts a Slack incoming-webhook message.
	FormatSlack NotificationFormat = "slack"
	// FormatMSTeams posts a Microsoft Teams (workflow webhook) message
	// with an adaptive card.
	FormatMSTeams NotificationFormat = "msteams"
)

// Notification is an HTTP endpoint that receives a POST per event.
//
// +kubebuilder:validation:XValidation:rule="has(self.url) != has(self.urlFrom)",message="give one of url and urlFrom"
type Notification struct {
	// URL is the endpoint. It or URLFrom is required; a webhook URL that
	// is a credential (Slack's, Teams') belongs in a Secret.
	//
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	URL string `json:"url,omitempty"`
	// URLFrom reads the URL from a Secret in the Stack's namespace.
	URLFrom *URLSource `json:"urlFrom,omitempty"`
	// Events are the events sent (empty: all): a Stack's ApprovalRequired,
	// Applied, Failed, Drifted and PolicyDenied, a Pipeline's
	// StageVerified, StageFailed and ApprovalRequired.
	//
	// +kubebuilder:validation:items:Enum=ApprovalRequired;Applied;Failed;Drifted;PolicyDenied;StageVerified;StageFailed
	Events []NotificationEvent `json:"events,omitempty"` // each CRD's enum is its kind's events: crd-patches.yaml
	// Format is json (default), slack or msteams.
	//
	// +kubebuilder:default=json
	Format NotificationFormat `json:"format,omitempty"`
}

// URLSource is where a notification URL comes from.
type URLSource struct {
	// SecretKeyRef is a key of a Secret in the Stack's namespace; its key
	// is required.
	//
	// +kubebuilder:validation:XValidation:rule="has(self.key)",message="key is required",fieldPath=".key"
	SecretKeyRef SecretKeyRef `json:"secretKeyRef"`
}

// RetrySpec says how a failed apply is tried again.
type RetrySpec struct {
	// Attempts is how many times a failed apply is tried again with the
	// same inputs before the Stack stalls (default 3; 0: never).
	//
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Attempts *int32 `json:"attempts,omitempty"`
	// Backoff is the wait before the first retry, doubled before each
	// next one and capped at the interval (default 30s).
	//
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	Backoff *metav1.Duration `json:"backoff,omitempty"`
}

// VarsFrom names a ConfigMap or Secret whose keys are variable values.
type VarsFrom struct {
	// Kind is ConfigMap or Secret.
	//
	// +kubebuilder:validation:Enum=ConfigMap;Secret
	Kind string `json:"kind"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace is the object's namespace ("": the Stack's). Another
	// namespace is refused under --no-cross-namespace-refs.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
	// Optional: a missing object is no error.
	Optional bool `json:"optional,omitempty"`
}

// ClusterRef gives a cluster block its kubeconfig from a Secret.
type ClusterRef struct {
	// Name is the cluster block's name in the stack.
	//
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_-]*$`
	Name string `json:"name"`
	// SecretRef is the Secret's key with the kubeconfig.
	SecretRef SecretKeyRef `json:"secretRef"`
}

// StorageSpec is where a Stack's release records live.
//
// +kubebuilder:validation:XValidation:rule="!has(self.secretRef) || self.driver == 'sql'",message="secretRef is the sql driver's connection string"
type StorageSpec struct {
	// Driver is secret (the default), configmap or sql (PostgreSQL, in
	// Helm's tables: HELM_DRIVER=sql).
	//
	// +kubebuilder:validation:Enum=secret;configmap;sql
	Driver string `json:"driver"`
	// SecretRef is the key of a Secret of the Stack's own namespace that
	// holds the sql driver's connection string (a libpq URL or key=value
	// string). It is read as the Stack's identity and never shown.
	SecretRef *LocalSecretKeyRef `json:"secretRef,omitempty"`
}

// LocalSecretKeyRef is a key of a Secret in the Stack's own namespace.
type LocalSecretKeyRef struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`
	// Key is the Secret's key (default "connection").
	//
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key,omitempty"`
}

// SecretKeyRef is a key of a Secret in the Stack's namespace.
type SecretKeyRef struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`
	// Namespace is the Secret's namespace ("": the Stack's). Another
	// namespace is refused under --no-cross-namespace-refs.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
	// Key defaults to "kubeconfig" in a cluster's secretRef.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key,omitempty"`
}

// StackStatus is what the controller last observed and did.
type StackStatus struct {
	// ObservedGeneration is the spec generation the status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready, Reconciling, Stalled, Planned, ApprovalRequired,
	// Drifted (kstatus-compatible).
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Source is the artifact last pulled.
	Source *SourceStatus `json:"source,omitempty"`
	// Plan is the last plan computed.
	Plan *PlanStatus `json:"plan,omitempty"`
	// LastAppliedPlan is the digest of the last plan applied.
	LastAppliedPlan string `json:"lastAppliedPlan,omitempty"`
	// Releases are the stack's releases after the last apply.
	Releases []ReleaseStatus `json:"releases,omitempty"`
	// LastError is the last reconcile's error ("" when it succeeded).
	LastError string `json:"lastError,omitempty"`
	// LastReconcileTime is when the stack was last planned.
	LastReconcileTime *metav1.Time `json:"lastReconcileTime,omitempty"`
	// Notified are the notifications sent, newest last (at most
	// MaxNotified): an event is sent once per plan digest, also across
	// controller restarts.
	Notified []NotifiedEvent `json:"notified,omitempty"`
	// LastFailedPlan is the digest of the plan whose apply failed last;
	// cleared by an apply that succeeds (or a plan that finds nothing to
	// change). While set, lastError keeps the failure.
	LastFailedPlan string `json:"lastFailedPlan,omitempty"`
	// Identity is what the stack's lock is keyed by: the stack's name and
	// environment and the clusters it uses. Two Stacks with one identity
	// are duplicates: the one created later never plans or applies.
	Identity string `json:"identity,omitempty"`
	// Failures counts the failed applies of the current inputs (source
	// digest, variable values, generation), the first attempt included.
	Failures int32 `json:"failures,omitempty"`
	// FailedInputs are the inputs (status.plan.inputs) Failures counts
	// the applies of.
	FailedInputs string `json:"failedInputs,omitempty"`
	// NextRetryTime is when a failed apply is tried again.
	NextRetryTime *metav1.Time `json:"nextRetryTime,omitempty"`
	// Approval is who approved the current plan (status.plan.digest) and
	// how many approvals it needs; nil when it needs none.
	Approval *ApprovalStatus `json:"approval,omitempty"`
	// LastAppliedApproval is who approved lastAppliedPlan; nil when it
	// was applied without approval.
	LastAppliedApproval *ApprovalStatus `json:"lastAppliedApproval,omitempty"`
}

// MaxPlanChanges bounds status.plan.changes.
const MaxPlanChanges = 50

// MaxNotified bounds status.notified.
const MaxNotified = 32

// NotifiedEvent is an event the notifications were sent.
type NotifiedEvent struct {
	Event NotificationEvent `json:"event"`
	// Digest is the plan's digest (for a failure without a plan, the
	// digest of its message).
	Digest string `json:"digest"`
	// Time is when it was sent.
	Time *metav1.Time `json:"time,omitempty"`
}

// SourceStatus is a pulled artifact.
type SourceStatus struct {
	// Ref is the source pinned to its digest.
	Ref    string `json:"ref,omitempty"`
	Digest string `json:"digest,omitempty"`
	// VerifiedBy, with spec.verify, names the public key whose signature
	// admitted the digest (the Secret's key, and the key's fingerprint).
	VerifiedBy string `json:"verifiedBy,omitempty"`
}

// PlanStatus is a computed plan.
type PlanStatus struct {
	// Digest identifies the saved plan: what approvedPlan names.
	Digest string `json:"digest,omitempty"`
	// Summary counts the plan's actions.
	Summary string `json:"summary,omitempty"`
	// Changes are the releases the plan changes, as "upgrade
	// release.api" (at most MaxPlanChanges): what a StackSet groups
	// identical plans by.
	Changes []string `json:"changes,omitempty"`
	// HasChanges says whether applying the plan would change anything.
	HasChanges bool `json:"hasChanges,omitempty"`
	// Drifted counts live objects changed outside convoy.
	Drifted int `json:"drifted,omitempty"`
	// DriftOnly: the plan changes nothing but restores drifted objects.
	DriftOnly bool `json:"driftOnly,omitempty"`
	// DeniedBy are the policies that deny the plan: it is not applied
	// unless approved with an override of each (spec.allowPolicies).
	DeniedBy []string `json:"deniedBy,omitempty"`
	// ConfigMapRef names the ConfigMap with the plan's text (plan.txt)
	// and markdown (plan.md).
	ConfigMapRef *LocalObjectReference `json:"configMapRef,omitempty"`
	// SourceDigest is the artifact the plan was computed from.
	SourceDigest string `json:"sourceDigest,omitempty"`
	// Inputs identifies the variable values, environment and generation
	// the plan was computed from.
	Inputs string `json:"inputs,omitempty"`
	// CreatedAt is when the plan was computed.
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`
}

// LocalObjectReference names an object in the Stack's namespace.
type LocalObjectReference struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`
}

// ReleaseStatus is one release after an apply.
type ReleaseStatus struct {
	// Address is the release instance address (release.api["eu"]).
	Address   string `json:"address"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Cluster is the cluster block ("" for the default cluster).
	Cluster  string `json:"cluster,omitempty"`
	Revision int    `json:"revision,omitempty"`
	// Status is the record's status (deployed, failed, …) or the step's.
	Status string `json:"status,omitempty"`
}

// StackList is a list of Stacks.
//
// +kubebuilder:object:root=true
type StackList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Stack `json:"items"`
}

// IntervalOrDefault is the spec's interval, 5 minutes when unset.
func (s *StackSpec) IntervalOrDefault() metav1.Duration {
	if s.Interval != nil && s.Interval.Duration > 0 {
		return *s.Interval
	}
	return metav1.Duration{Duration: DefaultInterval}
}
