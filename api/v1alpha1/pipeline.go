package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PipelineAnnotation on a Stack names the Pipeline that pins its
// spec.source: the Stack is that Pipeline's to promote, and no other's.
// The value is the Pipeline's name when it is of the Stack's namespace,
// else namespace/name (PipelineOwner, PipelineAnnotationValue).
const PipelineAnnotation = "convoy.dev/pipeline"

// DefaultPipelineInterval is how often a Pipeline lists its repository's
// tags when spec.interval is unset.
const DefaultPipelineInterval = time.Minute

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=pipelines,singular=pipeline,scope=Namespaced,categories=convoy
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name=Ready,type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name=Latest,type=string,JSONPath=`.status.latest.tag`
// +kubebuilder:printcolumn:name=Stages,type=string,JSONPath=`.status.summary`
// +kubebuilder:printcolumn:name=Source,type=string,priority=1,JSONPath=`.spec.source`
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`

// Pipeline promotes one stack artifact repository's newest matching digest
// through stages of Stacks: each stage's Stacks are pinned to the digest,
// must be Ready on it and keep their gates for the bake time, and only a
// digest a stage verified reaches the next stage.
type Pipeline struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PipelineSpec `json:"spec,omitempty"`
	// +kubebuilder:pruning:PreserveUnknownFields
	Status PipelineStatus `json:"status,omitempty"`
}

// PipelineSpec is what a Pipeline should do.
type PipelineSpec struct {
	// Source is the repository whose tags the pipeline follows:
	// oci://registry/repository, with neither tag nor digest.
	//
	// +kubebuilder:validation:Pattern=`^oci://[^\s/@]+(/[^\s:@/]+)+$`
	// +kubebuilder:validation:MaxLength=2048
	Source string `json:"source"`
	// Follow chooses the tag: the newest matching a semver constraint, or
	// one fixed tag.
	Follow Follow `json:"follow"`
	// Stages are promoted in order.
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +listType=map
	// +listMapKey=name
	Stages []Stage `json:"stages"`
	// Notifications are told of StageVerified, StageFailed and
	// ApprovalRequired, each once per stage and digest.
	//
	// +kubebuilder:validation:MaxItems=16
	Notifications []Notification `json:"notifications,omitempty"`
	// SourceSecretRef names a kubernetes.io/dockerconfigjson Secret of the
	// Pipeline's namespace with the credentials of spec.source's registry.
	SourceSecretRef *LocalObjectReference `json:"sourceSecretRef,omitempty"`
	// Interval is how often the tags are listed (default 1m).
	//
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') || duration(self) >= duration('1m')`,message="interval is shorter than the minimum of 1m (0s included); convoy controller install --min-interval lowers the minimum"
	Interval *metav1.Duration `json:"interval,omitempty"`
	// Suspend stops listing tags and promoting.
	Suspend bool `json:"suspend,omitempty"`
	// Approvals approve a stage of manual approval for exactly one digest
	// each (convoy promote PIPELINE STAGE).
	//
	// +kubebuilder:validation:MaxItems=100
	Approvals []StageApproval `json:"approvals,omitempty"`
	// Verify promotes only digests signed by a key of its Secret.
	Verify *VerifySpec `json:"verify,omitempty"`
	// ServiceAccountName is the identity the Pipeline reads and pins its
	// Stacks of other namespaces as (and, with --tenancy strict, those of
	// its own): system:serviceaccount:<the Pipeline's namespace>:<name>.
	// Empty: the controller's --default-service-account, else none (the
	// Pipeline then reaches only its own namespace's Stacks).
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// Follow says which tag of the repository a Pipeline promotes: exactly
// one of Semver, Tag and Digest.
//
// +kubebuilder:validation:XValidation:rule="[has(self.semver), has(self.tag), has(self.digest)].filter(x, x).size() == 1",message="give exactly one of semver, tag and digest"
type Follow struct {
	// Semver is a constraint (">=1.0.0", "~1.2"): the highest matching
	// tag; tags that are not semantic versions are ignored.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Semver string `json:"semver,omitempty"`
	// Tag is one tag ("main"): its digest whenever it moves.
	//
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`
	Tag string `json:"tag,omitempty"`
	// Digest is one digest: no tag is listed. A StackSet's rollout
	// follows the digest a Pipeline stage pinned its template to.
	//
	// +kubebuilder:validation:Pattern=`^sha256:[0-9a-f]{64}$`
	Digest string `json:"digest,omitempty"`
}

// Stage is a group of Stacks promoted together, and (or) a StackSet. A
// stage with neither is Invalid (the controller says so: no CEL rule
// can see the untyped stackSet).
type Stage struct {
	// Name is unique in the Pipeline.
	//
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// Stacks are the stage's Stacks: plain names of the Pipeline's
	// namespace, or {namespace, name} of another namespace (which the
	// Pipeline's service account must be allowed to patch).
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=200
	// +listType=atomic
	Stacks []PipelineStackRef `json:"stacks,omitempty"`
	// StackSet is a StackSet of the Pipeline's namespace the stage
	// promotes: its template's source is pinned to the digest, it rolls
	// the digest out by its own strategy, and the stage has it Ready when
	// the rollout is done on every step (status.rollout). A StackSet of
	// another namespace is refused (Forbidden).
	StackSet *PipelineStackRef `json:"stackSet,omitempty"`
	// Bake is how long the Stacks must stay Ready with the gates holding
	// before the stage is verified (default 0: the gates once).
	//
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	Bake *metav1.Duration `json:"bake,omitempty"`
	// Gates must hold during the bake.
	//
	// +kubebuilder:validation:MaxItems=20
	Gates []Gate `json:"gates,omitempty"`
	// MaxParallel is how many of the stage's Stacks are promoted at once
	// (default: all).
	//
	// +kubebuilder:validation:Minimum=1
	MaxParallel *int32 `json:"maxParallel,omitempty"`
	// Approval is auto (default) or manual: a manual stage waits for an
	// approval of the digest (spec.approvals, convoy promote).
	//
	// +kubebuilder:default=auto
	Approval Approval `json:"approval,omitempty"`
	// Rollback pins the stage's Stacks back to the last digest the stage
	// verified when it fails.
	Rollback bool `json:"rollback,omitempty"`
}

// Gate is one check of a baking stage: exactly one of its fields.
//
// +kubebuilder:validation:XValidation:rule="[has(self.test), has(self.cel), has(self.prometheus)].filter(x, x).size() == 1",message="a gate is exactly one of test, cel and prometheus"
type Gate struct {
	// Test runs the test hooks of the stage's Stacks' releases (convoy
	// test): every test passes.
	Test *TestGate `json:"test,omitempty"`
	// CEL is an expression over the Stacks' live objects (objects) that
	// must be true.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	CEL string `json:"cel,omitempty"`
	// Prometheus is a query whose value must not exceed max.
	Prometheus *PrometheusGate `json:"prometheus,omitempty"`
}

// TestGate runs the releases' test hooks.
type TestGate struct{}

// PrometheusGate is a Prometheus query with an upper bound.
type PrometheusGate struct {
	// Address is the Prometheus server's URL.
	//
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	Address string `json:"address"`
	// Query is a PromQL expression.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Query string `json:"query"`
	// Max is the highest value the query may return.
	Max float64 `json:"max"`
}

// StageApproval approves one stage for one digest.
type StageApproval struct {
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Stage string `json:"stage"`
	// +kubebuilder:validation:Pattern=`^sha256:[0-9a-f]{64}$`
	Digest string `json:"digest"`
	// ApprovedBy is the username of the request that added the approval
	// (convoy promote writes its own; the convoy-pipeline-approval
	// admission policy refuses any other). Empty in approvals written
	// before it was recorded.
	//
	// +kubebuilder:validation:MaxLength=512
	ApprovedBy string `json:"approvedBy,omitempty"`
}

// StagePhase is where a stage is with its digest.
type StagePhase string

// Stage phases.
const (
	// PhaseWaiting: no digest has reached the stage yet.
	PhaseWaiting StagePhase = "Waiting"
	// PhasePromoting: the stage's Stacks are being pinned to the digest
	// and applied.
	PhasePromoting StagePhase = "Promoting"
	// PhaseBaking: every Stack is Ready on the digest; the bake runs and
	// the gates are checked.
	PhaseBaking StagePhase = "Baking"
	// PhaseVerified: the stage verified the digest; the next stage may
	// receive it.
	PhaseVerified StagePhase = "Verified"
	// PhaseFailed: a Stack failed, stopped being Ready or a gate failed:
	// the pipeline halts until a newer digest.
	PhaseFailed StagePhase = "Failed"
	// PhaseAwaitingApproval: a manual stage waits for an approval of the
	// digest.
	PhaseAwaitingApproval StagePhase = "AwaitingApproval"
)

// Pipeline notification events.
const (
	EventStageVerified NotificationEvent = "StageVerified"
	EventStageFailed   NotificationEvent = "StageFailed"
)

// PipelineStatus is what the controller last observed and did.
type PipelineStatus struct {
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready, Reconciling, Stalled.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Latest is the newest matching tag and its digest.
	Latest *Artifact `json:"latest,omitempty"`
	// Stages are the stages' phases, in spec order.
	Stages []StageStatus `json:"stages,omitempty"`
	// Stacks are the digests the Stacks are pinned to.
	Stacks []PipelineStack `json:"stacks,omitempty"`
	// Summary is the stages as "name: digest phase", for kubectl get.
	Summary string `json:"summary,omitempty"`
	// Notified are the notices sent, newest last (at most MaxNotified).
	Notified []StageNotified `json:"notified,omitempty"`
}

// Artifact is a tag and the digest it named.
type Artifact struct {
	Tag    string `json:"tag,omitempty"`
	Digest string `json:"digest,omitempty"`
	// CheckedAt is when the tags were last listed.
	CheckedAt *metav1.Time `json:"checkedAt,omitempty"`
}

// StageStatus is one stage's phase for its digest.
type StageStatus struct {
	Name string `json:"name"`
	// Digest is the digest the stage promotes or last promoted.
	Digest string     `json:"digest,omitempty"`
	Phase  StagePhase `json:"phase,omitempty"`
	// Since is when the phase began (a Baking stage's bake start).
	Since   *metav1.Time `json:"since,omitempty"`
	Message string       `json:"message,omitempty"`
	// FailedGate is the gate that failed the stage, with its output.
	FailedGate *FailedGate `json:"failedGate,omitempty"`
	// Verified is the last digest the stage verified: what the next
	// stage may receive and what rollback returns to.
	Verified string `json:"verified,omitempty"`
	// GatesChecked is when the gates last held during the bake.
	GatesChecked *metav1.Time `json:"gatesChecked,omitempty"`
	// Gates are each gate's last result on Digest, in the spec's order.
	Gates []GateResult `json:"gates,omitempty"`
}

// GateResult is a gate's last result.
type GateResult struct {
	// Gate is spec.stages[i].gates[j] with its kind.
	Gate string `json:"gate"`
	// Result is Passed, Failed, Running or Waiting (not run yet).
	Result string `json:"result"`
	// Output is what a failed gate said (at most MaxGateOutput bytes).
	Output string `json:"output,omitempty"`
	// Time is when the result was seen, or for a running gate when its
	// run began.
	Time *metav1.Time `json:"time,omitempty"`
}

// Gate results.
const (
	GatePassed  = "Passed"
	GateFailed  = "Failed"
	GateRunning = "Running"
	GateWaiting = "Waiting"
)

// MaxGateOutput bounds a gate result's output in the status.
const MaxGateOutput = 2048

// FailedGate is a gate that failed and what it said.
type FailedGate struct {
	// Gate is spec.stages[i].gates[j] with its kind.
	Gate   string `json:"gate"`
	Output string `json:"output,omitempty"`
}

// PipelineStack is the digest a Stack is pinned to.
type PipelineStack struct {
	// Namespace is the Stack's namespace (empty in a status written
	// before Pipelines reached other namespaces: the Pipeline's).
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Stage     string `json:"stage"`
	// Digest is the digest of its spec.source ("" unpinned).
	Digest string `json:"digest,omitempty"`
	// Ready: Ready on that digest.
	Ready bool `json:"ready,omitempty"`
	// PinnedAt is when the Pipeline pinned it to Digest.
	PinnedAt *metav1.Time `json:"pinnedAt,omitempty"`
	// ReadyAt is when it was first seen Ready on Digest.
	ReadyAt *metav1.Time `json:"readyAt,omitempty"`
}

// StageNotified is a notice sent, once per stage and digest.
type StageNotified struct {
	Event  NotificationEvent `json:"event"`
	Stage  string            `json:"stage"`
	Digest string            `json:"digest"`
	Time   *metav1.Time      `json:"time,omitempty"`
}

// PipelineList is a list of Pipelines.
//
// +kubebuilder:object:root=true
type PipelineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Pipeline `json:"items"`
}

// IntervalOrDefault is the spec's interval, 1 minute when unset.
func (s *PipelineSpec) IntervalOrDefault() time.Duration {
	if s.Interval != nil && s.Interval.Duration > 0 {
		return s.Interval.Duration
	}
	return DefaultPipelineInterval
}

// ApprovedFor says whether spec.approvals approve stage for digest.
func (s *PipelineSpec) ApprovedFor(stage, digest string) bool {
	_, ok := s.ApprovalFor(stage, digest)
	return ok
}

// ApprovalFor is the approval of stage for digest in spec.approvals.
func (s *PipelineSpec) ApprovalFor(stage, digest string) (StageApproval, bool) {
	for _, a := range s.Approvals {
		if a.Stage == stage && a.Digest == digest {
			return a, true
		}
	}
	return StageApproval{}, false
}
