package v1alpha1

// The conditions and reasons the Stack and the Pipeline reconcilers write
// into their objects' status (kstatus: Ready, Reconciling and Stalled; the
// rest are convoy's own). They belong to the API, as helm-controller keeps
// its reasons beside its types: the reconcilers, cmd/convoy, the web view
// and the tests read one set of names.

// Condition types.
const (
	CondReady            = "Ready"
	CondReconciling      = "Reconciling"
	CondStalled          = "Stalled"
	CondPlanned          = "Planned"
	CondApprovalRequired = "ApprovalRequired"
	CondDrifted          = "Drifted"
)

// Reasons.
const (
	ReasonUpToDate         = "UpToDate"
	ReasonApplied          = "Applied"
	ReasonApprovalRequired = "ApprovalRequired"
	ReasonApprovalMismatch = "ApprovalMismatch"
	ReasonDrifted          = "Drifted"
	ReasonDriftCorrected   = "DriftCorrected"
	ReasonNoDrift          = "NoDrift"
	ReasonLocked           = "Locked"
	ReasonSourceFailed     = "SourceFailed"
	ReasonPlanFailed       = "PlanFailed"
	ReasonApplyFailed      = "ApplyFailed"
	ReasonInvalid          = "Invalid"
	ReasonSuspended        = "Suspended"
	ReasonPlanned          = "Planned"
	ReasonStale            = "PlanStale"
	ReasonWaiting          = "Waiting"
	// ReasonNoSource: a Stack without spec.source waits for a Pipeline.
	ReasonNoSource = "NoSource"
	// ReasonPlanTooLarge: the saved plan is over --max-plan-size.
	ReasonPlanTooLarge = "PlanTooLarge"
	// ReasonForbidden: the object's identity may not make a request its
	// reconcile needs (a service account's Role lacks it).
	ReasonForbidden = "Forbidden"
	// ReasonVerificationFailed: the artifact's signature does not verify
	// with spec.verify's keys (none, signed by another key, or a
	// signature for another digest); nothing of it is planned, applied or
	// promoted.
	ReasonVerificationFailed = "VerificationFailed"
)
