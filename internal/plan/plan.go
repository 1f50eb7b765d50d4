// Package plan is what applying a stack would change, as inert data: one
// ReleaseChange per release with a typed Action, and per object a typed
// ObjectAction with a precomputed field-level Diff against the live cluster
// and the drift of the live objects from what convoy last applied; what
// apply executes per release (the rendered payload and its settings); what
// the plan observed, so that applying it later can refuse a stale one.
//
// Nothing here computes a plan (internal/plan/planner does), reaches a cluster
// or executes anything: the renderers (plan/view) only walk this data and
// the plan file (plan/planfile) only reads and writes it. It may import
// internal/chart (the rendered payload), internal/stack/addrs,
// internal/chart/postrender (the patches a payload was made with) and
// internal/sensitive, never a Kubernetes client.
package plan

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/stack/addrs"
)

// FormatVersion is the version of the --json schema (docs/plan-json.md).
// It changes when a field changes meaning or goes away.
const FormatVersion = 1

// Action is what applying does to a release.
type Action string

// Release actions.
const (
	ActionInstall   Action = "install"
	ActionUpgrade   Action = "upgrade"
	ActionUninstall Action = "uninstall"
	ActionNoOp      Action = "no-op"
)

// ObjectAction is what applying does to one Kubernetes object.
type ObjectAction string

// Object actions.
const (
	ObjectCreate  ObjectAction = "create"
	ObjectUpdate  ObjectAction = "update"
	ObjectDelete  ObjectAction = "delete"
	ObjectReplace ObjectAction = "replace" // an immutable field changes: delete, then create
	ObjectNoOp    ObjectAction = "no-op"
)

// Plan is the computed plan of a stack. Releases are in topological order,
// uninstalls of releases removed from the stack last.
type Plan struct {
	FormatVersion int
	Stack         string
	// Environment is the stack's environment the plan was computed for
	// ("" when the stack declares none); a saved plan applies only to it.
	Environment string `json:",omitempty"`
	// ConfigHash identifies the stack files and variable values the plan
	// was computed from (ConfigHash function).
	ConfigHash string
	CreatedAt  time.Time
	// Targets are the --target addresses the plan was limited to (none: the
	// whole stack); IncludeDeps says whether their dependencies were added.
	Targets     []addrs.ReleaseInstance `json:",omitempty"`
	IncludeDeps bool                    `json:",omitempty"`
	// Selectors are the -l selectors the plan was limited to (with
	// Targets: the releases either names).
	Selectors []string `json:",omitempty"`
	// Destroy: the plan uninstalls every release of the stack (convoy
	// destroy); apply walks it in reverse dependency order.
	Destroy  bool `json:",omitempty"`
	Releases []*ReleaseChange
	// PolicyResults are the violations of the stack's policies
	// (internal/plan/policy), in policy order; AllowedPolicies the policies
	// whose denials an explicit override (--allow-policy) turned into
	// warnings.
	PolicyResults   []PolicyResult `json:",omitempty"`
	AllowedPolicies []string       `json:",omitempty"`
}

// ReleaseChange is the plan of one release.
type ReleaseChange struct {
	// Addr is the release instance address (`release.api["eu"]`), or the
	// address of a release of the stack its files no longer declare.
	Addr ReleaseAddr
	// Labels are the release block's labels (what -l selects and
	// policies read as release.labels); none for a release the files no
	// longer declare.
	Labels map[string]string `json:",omitempty"`
	// MovedFrom is the address the release was at when a moved block
	// brought it to Addr (moved.go); nil otherwise.
	MovedFrom *addrs.ReleaseInstance `json:",omitempty"`
	// RemovedFrom is the address a removed block names for a release the
	// files no longer declare (its action is uninstall, or forget with
	// destroy = false); nil otherwise.
	RemovedFrom *addrs.ReleaseInstance `json:",omitempty"`
	// Rename: a moved block gives the release a new Helm name (Name);
	// nil otherwise (rename.go).
	Rename    *Rename `json:",omitempty"`
	Name      string
	Namespace string
	// Cluster is the cluster block name; "" is the default cluster.
	Cluster string
	Action  Action
	// DependsOn are the addresses of the releases this one depends on.
	DependsOn []addrs.ReleaseInstance `json:",omitempty"`
	// IncludedFor: the release was not selected (--target, -l) but is in
	// the plan because these planned releases depend on it (IncludeDeps).
	IncludedFor []addrs.ReleaseInstance `json:",omitempty"`
	// Reasons say why the release changes (empty for no-ops).
	Reasons []Reason `json:",omitempty"`
	// KnownAfterApply: the release's values depend on attributes of other
	// releases known only after they are applied; it is rendered at apply
	// time and Objects, Values and Saved are empty.
	KnownAfterApply bool `json:",omitempty"`
	// PoliciesAtApply: the stack's policies over releases or objects are
	// evaluated on this release when apply renders it (KnownAfterApply:
	// its objects are not known now); a denial then stops it before
	// anything of it is applied.
	PoliciesAtApply bool `json:",omitempty"`

	Chart ChartChange
	// PromotedFrom: the chart is the one another environment of the stack
	// has deployed (convoy promote --from-env), read from its record; nil
	// otherwise.
	PromotedFrom *Promotion `json:",omitempty"`
	// Values is the diff of the user-supplied values against the last
	// deployed revision's (sensitive values masked); nil when equal.
	Values *Diff `json:",omitempty"`
	// ValuesBefore are the values the last deployed revision was rendered
	// with (chart defaults merged with its user values), masked, for
	// policies; nil on install and for releases that do not change.
	ValuesBefore map[string]any `json:",omitempty"`
	// Hooks are the hooks applying runs, in order.
	Hooks []HookRun `json:",omitempty"`
	// Objects are the object changes, no-ops included, in apply order
	// (deletions last).
	Objects []*ObjectChange `json:",omitempty"`
	// Drift lists live objects that differ from what convoy last applied.
	Drift []*ObjectDrift `json:",omitempty"`
	// Drifted counts them, each once: len(Drift), or, for a release
	// planned as an upgrade only to correct drift, as many as the plan
	// found before it planned the upgrade (the drift Reason says so).
	Drifted int `json:",omitempty"`
	// Warnings are things apply may trip over (objects owned by someone
	// else, chart warnings).
	Warnings []string `json:",omitempty"`
	// Owner is the other stack whose label the release's newest record
	// carries ("" when it is this stack's or no stack's). Apply refuses to
	// change it unless Adopt.
	Owner string `json:",omitempty"`
	// Adopt: the release block's adopt_from_stack names Owner, and apply
	// takes the release over from it.
	Adopt bool `json:",omitempty"`
	// Takeover is set when the release's newest record was not written by
	// this stack and no other stack owns it now (helm's, or let go), or
	// when another namespace's Stack wrote it: who wrote it and whether
	// apply may take it over (ownership.go).
	Takeover *Takeover `json:",omitempty"`
	// Conflicts are objects the release would apply that another Helm
	// release owns: apply refuses the release (it would fail on them).
	Conflicts []ObjectConflict `json:",omitempty"`
	// Interrupted is the newest record when a run of this stack that is
	// gone left it pending: apply marks it failed before anything else,
	// and the plan is computed as if it were.
	Interrupted *Interrupted `json:",omitempty"`

	Observed Observed
	// Relabel are the labels apply writes on the deployed record of a
	// release planned unchanged in full whose record lacks them or holds
	// stale ones (release.FingerprintLabel, release.AppliedLabel): later
	// plans then prove it unchanged without rendering it. Nil otherwise.
	Relabel map[string]string `json:",omitempty"`
	// Saved is what apply executes without re-rendering; nil when
	// KnownAfterApply and for uninstalls.
	Saved *SavedRelease `json:",omitempty"`
	// Uninstall is how an uninstall runs; nil for other actions.
	Uninstall *UninstallSettings `json:",omitempty"`
	// Sensitive are the exact strings of values marked sensitive: every
	// occurrence is masked in every output.
	Sensitive []string `json:",omitempty"`
	// Impact is what the release's changes do to the running system
	// (ComputeImpact); nil when it does not change or is rendered only at
	// apply.
	Impact *Impact `json:",omitempty"`
	// Attribution says why the changed fields of the release's objects
	// name no inputs (plan.Change.Provenance) when the planner did not
	// attribute them ("too many changed inputs to attribute (240; at most
	// 32 are)"), or which inputs it left out.
	Attribution string `json:",omitempty"`
	// Explained are, for the release convoy explain asks about, the
	// values leaves each rendered field depends on, changed or not: by
	// object (group/kind/name), by field path. Not saved.
	Explained map[string]map[string][]Origin `json:"-"`
	// ClaimExpansions are the claims apply resizes after the release's
	// objects are applied (expand_claims).
	ClaimExpansions []ClaimExpansion `json:",omitempty"`
	// StoredAPIs are the removed API versions the stored revision names
	// that the plan compared as their successors, once per kind (apis.go).
	StoredAPIs []StoredAPI `json:",omitempty"`
	// RecordSize is the encoded size (bytes) of the record the release's
	// next revision writes, and RecordLimit what its storage driver holds
	// (0: no revision is written, or it was not rendered).
	RecordSize  int `json:",omitempty"`
	RecordLimit int `json:",omitempty"`
	// Prunes are the revisions the release's history_max has apply delete
	// once its next revision is written (as helm upgrade --history-max);
	// nil when none.
	Prunes *Pruning `json:",omitempty"`
	// KubeTarget is the Kubernetes release the objects' APIs were checked
	// against ("1.36": the cluster's, or --kube-version, kube_version);
	// Deprecations are the objects it deprecates or removed.
	KubeTarget   string        `json:",omitempty"`
	Deprecations []Deprecation `json:",omitempty"`
	// KubeKnown is, when KubeTarget is past it, the newest Kubernetes
	// release whose removals convoy's table knows ("1.36"): what later
	// releases remove is not listed. "" when the target is within it.
	KubeKnown string `json:",omitempty"`
	// ValueOrigins say where each leaf of the values the release renders
	// with was set (internal/stack/provenance; paths as Leaves writes them),
	// nil when it is not rendered at plan time or planned unchanged (only
	// provenance and explain read them). Not saved: a plan file does not
	// carry them (they are as large as the values).
	ValueOrigins map[string]Origin `json:"-"`
}

// Reason is one reason why a release changes.
type Reason struct {
	Kind   ReasonKind
	Detail string `json:",omitempty"`
}

func (r Reason) String() string {
	if r.Detail == "" {
		return string(r.Kind)
	}
	return string(r.Kind) + ": " + r.Detail
}

// ReasonKind names what makes a release change.
type ReasonKind string

// Reason kinds.
const (
	ReasonNew          ReasonKind = "new"               // not installed (or uninstalled)
	ReasonChart        ReasonKind = "chart"             // the chart name or version
	ReasonValues       ReasonKind = "values"            // the user-supplied values
	ReasonManifest     ReasonKind = "manifest"          // the rendered objects
	ReasonHooks        ReasonKind = "hooks"             // the hooks install/upgrade run
	ReasonLastRevision ReasonKind = "last-revision"     // the newest record is not the deployed one
	ReasonDrift        ReasonKind = "drift"             // live objects changed outside convoy
	ReasonDependency   ReasonKind = "dependency-output" // values read outputs of changing releases
	ReasonRemoved      ReasonKind = "removed"           // no longer in the stack's files
	ReasonDestroy      ReasonKind = "destroy"           // convoy destroy
	ReasonAdopt        ReasonKind = "adopt"             // taken over from another stack (adopt_from_stack)
	ReasonLeftover     ReasonKind = "leftover"          // objects a failed revision created that no deployed revision has
	ReasonCRDs         ReasonKind = "crds"              // crds/ the release replaces (crds = "create_replace") differ from the cluster's
)

// ChartRef names a chart version.
type ChartRef struct {
	Name       string
	Version    string
	AppVersion string `json:",omitempty"`
}

// ChartChange is the chart before (last deployed revision; nil on install)
// and after (nil on uninstall or when known after apply).
type ChartChange struct {
	Before *ChartRef `json:",omitempty"`
	After  *ChartRef `json:",omitempty"`
}

// Changed reports whether the chart name or version changes.
func (c ChartChange) Changed() bool {
	if c.Before == nil || c.After == nil {
		return c.Before != c.After
	}
	return c.Before.Name != c.After.Name || c.Before.Version != c.After.Version
}

// HookRun is a hook that applying will run.
type HookRun struct {
	Name   string
	Kind   string
	Path   string
	Events []string
	Weight int `json:",omitempty"`
	// Ref is the hook object's identity (its namespace as it is applied);
	// zero when its manifest could not be read.
	Ref ObjectRef `json:",omitzero"`
	// Object is the rendered hook object, masked as ObjectChange.After
	// is, for policies. Not saved: a saved plan carries its policy
	// results.
	Object map[string]any `json:"-"`
}

// ObjectChange is the change of one object: the diff between the live
// object and the server's dry-run result of applying the new one.
type ObjectChange struct {
	// Ref is the object's identity (printed "apps/v1 Deployment ns/name").
	Ref    ObjectRef
	Action ObjectAction
	// Template is the chart template that rendered it.
	Template string `json:",omitempty"`
	// Diff is the field-level change (nil for no-op and delete).
	Diff *Diff `json:",omitempty"`
	// Before is the live object (with its status, without managedFields
	// and the server's bookkeeping); nil when it does not exist. After is
	// what the API server's dry run says it will be (for a replace or a
	// create that could not be dry-run: the rendered object); nil for a
	// delete. Sensitive values, Secret data and fields rendered from
	// sensitive values are masked. Both are kept only for releases that
	// change: policies and impact read them, the views do not print them.
	Before map[string]any `json:",omitempty"`
	After  map[string]any `json:",omitempty"`
	// Reason explains a replace (the immutable field), a kept object or a
	// leftover's delete.
	Reason string `json:",omitempty"`
	// Deployed is, for an object of a release that does not change, the
	// object as the deployed revision's manifest holds it (masked as After
	// is): what policies see of it, since nothing of it is applied and
	// Before and After are not kept. Nil otherwise, and for releases whose
	// policies do not read objects. Not saved: a saved plan carries its
	// policy results.
	Deployed map[string]any `json:"-"`
	// CRD is how a CRD of the chart's crds/ that the release replaces
	// (crds = "create_replace") changes: the plan shows this summary
	// instead of a field diff (Diff is nil).
	CRD *CRDChange `json:",omitempty"`
	// LeftBy is the failed (or interrupted) revision that created the
	// object a delete removes: it carries the release's ownership, and
	// neither the deployed revision nor the next one has it. Apply deletes
	// it if it still carries that ownership (release.Request.Leftovers).
	LeftBy int `json:",omitempty"`
}

// ObjectDrift is a live object that differs from what convoy last applied
// (someone scaled or edited it).
type ObjectDrift struct {
	Ref ObjectRef
	// Missing: the object was deleted from the cluster.
	Missing bool `json:",omitempty"`
	// Diff goes from what convoy last applied (Before) to live (After).
	Diff *Diff `json:",omitempty"`
	// Corrected says whether applying the plan restores every drifted field.
	Corrected bool
	// Note explains why apply does not restore it.
	Note string `json:",omitempty"`
}

// Observed is what the plan saw, for Verify.
type Observed struct {
	// LastRevision and LastStatus are the release's newest record (0 and ""
	// when there is none).
	LastRevision int
	LastStatus   string
	// Objects are the affected objects as the plan saw them.
	Objects []ObservedObject `json:",omitempty"`
}

// ObservedObject is an affected object as the plan saw it, and how a
// saved plan's verification compares it (observed.go).
type ObservedObject struct {
	Ref ObjectRef
	// Kind says what Hash is: ObservedAbsent when the object did not
	// exist.
	Kind ObservationKind
	// ResourceVersion is "" when the object did not exist.
	ResourceVersion string `json:",omitempty"`
	// Hash identifies what of the object the plan relies on, as Kind
	// says; "" compares the resourceVersion alone. A controller writing
	// status or its own annotations does not make a plan stale; an edit of
	// what apply sets does.
	Hash string `json:",omitempty"`
}

// Object returns what the plan observed of ref, if anything.
func (o Observed) Object(ref ObjectRef) (ObservedObject, bool) {
	for _, ob := range o.Objects {
		if ob.Ref == ref {
			return ob, true
		}
	}
	return ObservedObject{}, false
}

// SavedRelease is what apply executes for a release without re-rendering.
type SavedRelease struct {
	// Rendered is the chart's output, including the processed chart
	// recorded in the release.
	Rendered *chart.Rendered
	// Settings are how it is deployed.
	Settings ReleaseSettings
}

// DropObjectStates lets go of what the plan holds of each object's
// states (Before, After, Deployed and the Diff between them) once the
// plan is verified or reviewed: apply deploys each release's rendering
// (SavedRelease) and reads of an object only its identity and action,
// and a large release's objects would otherwise be held again while it is
// applied. The plan's views, policies and impact need them: they ran.
func (p *Plan) DropObjectStates() {
	for _, rc := range p.Releases {
		if rc == nil {
			continue
		}
		for _, o := range rc.Objects {
			o.Before, o.After, o.Deployed, o.Diff = nil, nil, nil, nil
		}
	}
}

// HasChanges reports whether applying the plan would change anything: any
// release that is not a no-op (a release whose objects drifted is an
// upgrade).
func (p *Plan) HasChanges() bool {
	for _, r := range p.Releases {
		if r.Action != ActionNoOp || r.Rename != nil {
			return true
		}
	}
	return false
}

// ChangesServedKinds reports whether applying the plan may change the kinds
// the cluster serves, which a kept connection's discovery (REST mapping,
// the .Capabilities templates see) would then miss: it creates, changes
// or deletes a CustomResourceDefinition or an APIService (as an object, a
// crds/ file or a hook), or a release's objects are known only after
// apply.
func (p *Plan) ChangesServedKinds() bool {
	api := func(kind string) bool { return kind == "CustomResourceDefinition" || kind == "APIService" }
	for _, r := range p.Releases {
		if r.Action == ActionNoOp || r.Action == ActionForget {
			continue
		}
		if r.KnownAfterApply {
			return true
		}
		for _, o := range r.Objects {
			if o.Action != ObjectNoOp && api(o.Ref.Kind) {
				return true
			}
		}
		for _, h := range r.Hooks {
			if api(h.Kind) {
				return true
			}
		}
	}
	return false
}

// Release returns the change whose address prints as addr
// (`release.api["eu"]`, "removed:ns/name"), or nil.
func (p *Plan) Release(addr string) *ReleaseChange {
	for _, r := range p.Releases {
		if r.Addr.String() == addr {
			return r
		}
	}
	return nil
}

// HasSensitive reports whether any release of the plan holds sensitive
// values.
func (p *Plan) HasSensitive() bool {
	for _, r := range p.Releases {
		if len(r.Sensitive) > 0 {
			return true
		}
	}
	return false
}

// Promotion is where a promoted release's chart comes from: the deployed
// record of the same release address in another environment of the stack.
type Promotion struct {
	// Environment is the source environment.
	Environment string
	// Name, Namespace and Cluster are the source release's Helm name,
	// namespace and cluster block ("" for the default cluster).
	Name      string
	Namespace string
	Cluster   string `json:",omitempty"`
	// Revision is the source release's deployed revision.
	Revision int
	// ChartDigest is "sha256:" and the digest of the chart as the source
	// record holds it (its JSON): the promoted chart is that one.
	ChartDigest string
	// Chart is the chart as the source record holds it, carried only for
	// a release rendered at apply (KnownAfterApply): apply renders it
	// with this chart. Nil otherwise.
	Chart *chart.Chart `json:",omitempty"`
}

// Note is what the records a promotion deploys say of it.
func (p *Promotion) Note() string {
	return fmt.Sprintf("Promoted from %s revision %d", p.Environment, p.Revision)
}

// Pruning is what apply prunes of a release's history after writing its
// next revision.
type Pruning struct {
	// Revisions are the ones deleted, oldest first.
	Revisions []int
	// Keep is the release's history_max: how many revisions remain.
	Keep int
}

// String says it for people: "prunes revisions 1–2 (history_max = 10
// keeps the newest 10)".
func (p *Pruning) String() string {
	var which string
	switch n := len(p.Revisions); {
	case n == 1:
		which = fmt.Sprintf("revision %d", p.Revisions[0])
	case p.Revisions[n-1]-p.Revisions[0] == n-1:
		which = fmt.Sprintf("revisions %d–%d", p.Revisions[0], p.Revisions[n-1])
	default:
		s := make([]string, n)
		for i, r := range p.Revisions {
			s[i] = strconv.Itoa(r)
		}
		which = "revisions " + strings.Join(s, ", ")
	}
	return fmt.Sprintf("prunes %s (history_max = %d keeps the newest %d)", which, p.Keep, p.Keep)
}
