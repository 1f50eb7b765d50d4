package plan

// Impact is what a release's changes do to the running system, computed
// from its objects' live state (Before) and the server's dry-run results
// (After) by ComputeImpact: which workloads roll and how, which config
// changes no pod picks up, what data goes, how much CPU and memory the
// release asks for before and after. It is plain data with snake_case
// JSON names, the same in the --json view, so that policies can read it
// (release.impact) as it is.
type Impact struct {
	Rollouts     []Rollout     `json:"rollouts,omitempty"`
	StaleConfig  []StaleConfig `json:"stale_config,omitempty"`
	DataLoss     []DataLoss    `json:"data_loss,omitempty"`
	Replacements []Replacement `json:"replacements,omitempty"`
	// Requests and Limits total the release's workloads (replicas × pod);
	// nil when it has none.
	Requests *Resources `json:"requests,omitempty"`
	Limits   *Resources `json:"limits,omitempty"`
	// Unknown are changing objects of kinds convoy cannot reason about
	// (custom resources: their controller decides what happens).
	Unknown []UnknownImpact `json:"unknown,omitempty"`
	// ScaledToZero are workloads whose pods all go: what they served
	// stops.
	ScaledToZero []ScaleToZero `json:"scaled_to_zero,omitempty"`
}

// ScaleToZero is a workload scaled from some pods to none.
type ScaleToZero struct {
	Ref ObjectRef `json:"ref"`
	// From is how many replicas it has now.
	From int `json:"from"`
	// Services are the release's Services that select its pods: the
	// traffic they sent to them finds none.
	Services []ObjectRef `json:"services,omitempty"`
}

// Empty reports whether the impact says nothing.
func (i *Impact) Empty() bool {
	return i == nil || len(i.Rollouts)+len(i.StaleConfig)+len(i.DataLoss)+len(i.Replacements)+len(i.Unknown)+len(i.ScaledToZero) == 0 &&
		!i.Requests.Changed() && !i.Limits.Changed()
}

// Rollout is a workload whose pods are replaced.
type Rollout struct {
	Ref ObjectRef `json:"ref"`
	// Replicas is how many pods the workload has after apply (for a
	// DaemonSet: the nodes it runs on now; for a CronJob: 0, its next run
	// uses the new template).
	Replicas int      `json:"replicas"`
	Strategy Strategy `json:"strategy"`
	// Causes are the changed paths under the pod template
	// (`spec.template.spec.containers[name=web].image`); for a replaced
	// object, the object's changed paths.
	Causes []string `json:"causes"`
	// Budgets are the PodDisruptionBudgets of the release selecting the
	// pods.
	Budgets []Budget `json:"budgets,omitempty"`
}

// Strategy is how a workload replaces its pods.
type Strategy struct {
	// Type is the workload's strategy: RollingUpdate, Recreate, OnDelete;
	// "Replace" when the object itself is deleted and created, "Job" for a
	// Job's pods, "NextRun" for a CronJob.
	Type           string `json:"type"`
	MaxUnavailable string `json:"max_unavailable,omitempty"`
	MaxSurge       string `json:"max_surge,omitempty"`
	// Partition is a StatefulSet's rolling-update partition: pods with a
	// lower ordinal keep the old template.
	Partition *int `json:"partition,omitempty"`
}

// Budget is a PodDisruptionBudget selecting a rollout's pods.
type Budget struct {
	Ref ObjectRef `json:"ref"`
	// DisruptionsAllowed is the budget's status now; nil when it does not
	// exist yet or has no status.
	DisruptionsAllowed *int `json:"disruptions_allowed,omitempty"`
}

// StaleConfig is a ConfigMap or Secret whose content changes while some of
// the pods consuming it do not restart.
type StaleConfig struct {
	Ref       ObjectRef  `json:"ref"`
	Consumers []Consumer `json:"consumers"`
}

// Consumer is a workload reading a ConfigMap or Secret.
type Consumer struct {
	Ref ObjectRef `json:"ref"`
	// Via is how: "volume", "projected-volume", "env-from", "env".
	Via string `json:"via"`
	// PicksUp says when its pods see the change without a restart:
	// "eventually" (a mounted volume, refreshed by the kubelet), "never"
	// (environment variables, a volume mounted with subPath).
	PicksUp string `json:"picks_up"`
}

// DataLoss is an object whose deletion or replacement loses data, or
// whose data the release's pods stop mounting (a claim no longer mounted,
// a volumeClaimTemplates entry removed): the data stays in the claim, but
// the pods run without it.
type DataLoss struct {
	Ref    ObjectRef    `json:"ref"`
	Action ObjectAction `json:"action"`
	Reason string       `json:"reason"`
}

// Replacement says how apply replaces an object an immutable field of
// which changes.
type Replacement struct {
	Ref ObjectRef `json:"ref"`
	// Propagation is the deletion's: "orphan" (a StatefulSet: its pods and
	// claims stay, and the new one adopts them, or they are deleted when
	// it cannot: RecreatesPods), "foreground" (a Deployment, ReplicaSet,
	// DaemonSet or Job: its pods are deleted and waited for before it is
	// created again) or "background".
	Propagation string `json:"propagation"`
	// Why says which immutable field changes and how ("spec.selector is
	// immutable and changes: app.kubernetes.io/instance redis → cache"),
	// or the API server's refusal when convoy does not know the field.
	Why string `json:"why,omitempty"`
	// KeptClaims are the PersistentVolumeClaims of a StatefulSet that stay
	// as they are (never deleted).
	KeptClaims []string `json:"kept_claims,omitempty"`
	// Immutable are the changed fields that cannot change, when convoy
	// knows them (`spec.volumeClaimTemplates`).
	Immutable []string `json:"immutable,omitempty"`
	// RecreatesPods: the replaced StatefulSet's orphaned pods are deleted
	// and created again by the new one, which cannot adopt them (they do
	// not mount a claim of a new volumeClaimTemplates entry, or its new
	// selector does not select them).
	RecreatesPods bool `json:"recreates_pods,omitempty"`
	// RemountedClaims are the claims of KeptClaims the recreated pods
	// mount again (RecreatesPods): their names are unchanged, so their
	// data is kept.
	RemountedClaims []string `json:"remounted_claims,omitempty"`
	// StorageChanges are the volumeClaimTemplates entries of a StatefulSet
	// whose storage request changes ("data: 8Gi → 10Gi"): the claims
	// already made keep their size (expand_claims resizes them).
	StorageChanges []string `json:"storage_changes,omitempty"`
	Note           string   `json:"note,omitempty"`
}

// Resources are the totals of CPU and memory, before and after apply.
type Resources struct {
	CPU    Quantities `json:"cpu"`
	Memory Quantities `json:"memory"`
}

// Changed reports whether any total changes.
func (r *Resources) Changed() bool {
	return r != nil && (r.CPU.Before != r.CPU.After || r.Memory.Before != r.Memory.After)
}

// Quantities are canonical Kubernetes quantities ("300m", "192Mi").
type Quantities struct {
	Before string `json:"before"`
	After  string `json:"after"`
}

// UnknownImpact is a changing object convoy cannot reason about.
type UnknownImpact struct {
	Ref    ObjectRef    `json:"ref"`
	Action ObjectAction `json:"action"`
}

// ImpactFacts are what impact needs from the cluster beyond the release's
// objects, read by the planner.
type ImpactFacts struct {
	// Claims are the live PersistentVolumeClaims of the StatefulSets the
	// release replaces or deletes, by StatefulSet.
	Claims map[ObjectRef][]string
}
