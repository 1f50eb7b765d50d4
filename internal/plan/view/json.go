package view

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/convoy-sh/convoy/internal/sensitive"

	"github.com/convoy-sh/convoy/internal/plan"
)

// The --json document (docs/plan-json.md). Field names are snake_case and
// stable within a format_version.
type jsonPlan struct {
	FormatVersion int            `json:"format_version"`
	Stack         string         `json:"stack"`
	Environment   string         `json:"environment,omitempty"`
	ConfigHash    string         `json:"config_hash"`
	CreatedAt     time.Time      `json:"created_at"`
	Targets       []string       `json:"targets,omitempty"`
	IncludeDeps   bool           `json:"include_deps,omitempty"`
	Selectors     []string       `json:"selectors,omitempty"`
	HasChanges    bool           `json:"has_changes"`
	Summary       jsonSummary    `json:"summary"`
	Releases      []*jsonRelease `json:"releases"`
	// PolicyResults are the policies' violations (policy.go); absent when
	// there are none.
	PolicyResults   []jsonPolicyResult `json:"policy_results,omitempty"`
	AllowedPolicies []string           `json:"allowed_policies,omitempty"`
}

type jsonSummary struct {
	Install        int `json:"install"`
	Upgrade        int `json:"upgrade"`
	Uninstall      int `json:"uninstall"`
	Unchanged      int `json:"unchanged"`
	DriftedObjects int `json:"drifted_objects"`
	Refused        int `json:"refused,omitempty"`
	Forget         int `json:"forget,omitempty"`
	Moved          int `json:"moved,omitempty"`
	Renamed        int `json:"renamed,omitempty"`
}

type jsonRelease struct {
	Address         string        `json:"address"`
	MovedFrom       string        `json:"moved_from,omitempty"`
	RemovedFrom     string        `json:"removed_from,omitempty"`
	Rename          *jsonRename   `json:"rename,omitempty"`
	Name            string        `json:"name"`
	Namespace       string        `json:"namespace"`
	Cluster         string        `json:"cluster,omitempty"`
	Action          plan.Action   `json:"action"`
	DependsOn       []string      `json:"depends_on,omitempty"`
	IncludedFor     []string      `json:"included_for,omitempty"`
	KnownAfterApply bool          `json:"known_after_apply,omitempty"`
	PoliciesAtApply bool          `json:"policies_at_apply,omitempty"`
	Reasons         []jsonReason  `json:"reasons,omitempty"`
	Chart           jsonChart     `json:"chart"`
	PromotedFrom    *jsonPromoted `json:"promoted_from,omitempty"`
	Values          []*jsonChange `json:"values_changes,omitempty"`
	Hooks           []jsonHook    `json:"hooks,omitempty"`
	Objects         []*jsonObject `json:"objects,omitempty"`
	Drift           []*jsonDrift  `json:"drift,omitempty"`
	Warnings        []string      `json:"warnings,omitempty"`
	// Attribution says why changed fields name no inputs
	// (plan.ReleaseChange.Attribution).
	Attribution string       `json:"attribution,omitempty"`
	Observed    jsonObserved `json:"observed"`
	// Owner, Adopt, Refused: another stack owns the release (see
	// plan.ReleaseChange).
	Owner   string `json:"owner_stack,omitempty"`
	Adopt   bool   `json:"adopt,omitempty"`
	Refused bool   `json:"refused,omitempty"`
	// Takeover: no stack owns the release now, or another namespace's
	// Stack wrote it (plan.Takeover).
	Takeover    *jsonTakeover    `json:"takeover,omitempty"`
	Interrupted *jsonInterrupted `json:"interrupted,omitempty"`
	Impact      *jsonImpact      `json:"impact,omitempty"`
	// ClaimExpansions are the claims apply resizes (expand_claims).
	ClaimExpansions []jsonClaimExpansion `json:"claim_expansions,omitempty"`
	// Conflicts are objects another release owns: the release is refused.
	Conflicts []jsonConflict `json:"object_conflicts,omitempty"`
	// StoredAPIs, KubeTarget, Deprecations: removed APIs the stored
	// revision names, read as their successors; the Kubernetes release
	// the objects were checked against and what it deprecates (apis.go);
	// KubeKnownThrough the newest release convoy's table knows, when the
	// target is past it.
	StoredAPIs       []jsonStoredAPI   `json:"stored_apis,omitempty"`
	KubeTarget       string            `json:"kube_target,omitempty"`
	KubeKnownThrough string            `json:"kube_known_through,omitempty"`
	Deprecations     []jsonDeprecation `json:"deprecations,omitempty"`
	// Record is the size of the record the next revision writes and what
	// its storage driver holds.
	Record *jsonRecord `json:"record,omitempty"`
	// Prunes are the revisions apply deletes after writing the next
	// (history_max).
	Prunes *jsonPrunes `json:"prunes,omitempty"`
}

// jsonPrunes is what apply prunes of a release's history.
type jsonPrunes struct {
	Revisions  []int `json:"revisions"`
	HistoryMax int   `json:"history_max"`
}

// jsonRecord is the size of a release's next record.
type jsonRecord struct {
	Bytes      int `json:"bytes"`
	LimitBytes int `json:"limit_bytes"`
}

// jsonRename is a release a moved block gives a new Helm name.
type jsonRename struct {
	From         string              `json:"from_name"`
	FromRevision int                 `json:"from_revision"`
	State        plan.RenameState    `json:"state"`
	StateDetail  string              `json:"state_detail,omitempty"`
	Revisions    int                 `json:"revisions"`
	Copied       int                 `json:"copied,omitempty"`
	Objects      []jsonRenamedObject `json:"objects,omitempty"`
}

type jsonRenamedObject struct {
	Ref        string `json:"ref"`
	Kept       bool   `json:"kept"`
	Recreated  bool   `json:"recreated,omitempty"`
	Why        string `json:"why,omitempty"`
	ReplacedBy string `json:"replaced_by,omitempty"`
}

type jsonConflict struct {
	Ref            string `json:"ref"`
	OwnerRelease   string `json:"owner_release"`
	OwnerNamespace string `json:"owner_namespace"`
	OwnerStack     string `json:"owner_stack,omitempty"`
}

type jsonReason struct {
	Kind   plan.ReasonKind `json:"kind"`
	Detail string          `json:"detail,omitempty"`
}

type jsonChart struct {
	Before *jsonChartRef `json:"before,omitempty"`
	After  *jsonChartRef `json:"after,omitempty"`
}

// jsonPromoted is where a promoted release's chart comes from.
type jsonPromoted struct {
	Environment string `json:"environment"`
	Name        string `json:"name"`
	Namespace   string `json:"namespace"`
	Cluster     string `json:"cluster,omitempty"`
	Revision    int    `json:"revision"`
	ChartDigest string `json:"chart_digest"`
}

type jsonChartRef struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	AppVersion string `json:"app_version,omitempty"`
}

type jsonHook struct {
	Name   string   `json:"name"`
	Kind   string   `json:"kind"`
	Path   string   `json:"path,omitempty"`
	Events []string `json:"events"`
	Weight int      `json:"weight"`
}

type jsonObject struct {
	Ref        string            `json:"ref"`
	APIVersion string            `json:"api_version"`
	Kind       string            `json:"kind"`
	Namespace  string            `json:"namespace,omitempty"`
	Name       string            `json:"name"`
	Action     plan.ObjectAction `json:"action"`
	Template   string            `json:"template,omitempty"`
	Reason     string            `json:"reason,omitempty"`
	Changes    []*jsonChange     `json:"changes,omitempty"`
	// CRD: how a CRD the release replaces changes (crds = "create_replace").
	CRD *plan.CRDChange `json:"crd,omitempty"`
	// Hook: a hook's object, run for these events ("pre-install").
	Hook string `json:"hook,omitempty"`
}

type jsonDrift struct {
	Ref       string        `json:"ref"`
	Missing   bool          `json:"missing,omitempty"`
	Corrected bool          `json:"corrected"`
	Note      string        `json:"note,omitempty"`
	Changes   []*jsonChange `json:"changes,omitempty"`
}

type jsonChange struct {
	Path      string       `json:"path"`
	Op        plan.FieldOp `json:"op"`
	Before    any          `json:"before,omitempty"`
	After     any          `json:"after,omitempty"`
	Sensitive bool         `json:"sensitive,omitempty"`
	Lines     []string     `json:"lines,omitempty"`
	Manager   string       `json:"manager,omitempty"`
	// Provenance are the inputs that changed the field, or in the values
	// diff where the leaf is set (plan.Change.Provenance).
	Provenance      []plan.Origin `json:"provenance,omitempty"`
	ProvenanceJoint bool          `json:"provenance_joint,omitempty"`
}

type jsonInterrupted struct {
	RunID    string `json:"run_id"`
	Revision int    `json:"revision"`
	Status   string `json:"status"`
}

type jsonObserved struct {
	LastRevision int    `json:"last_revision"`
	LastStatus   string `json:"last_status,omitempty"`
}

func jsonChanges(d *plan.Diff) []*jsonChange {
	if d == nil {
		return nil
	}
	out := make([]*jsonChange, 0, len(d.Changes))
	for _, c := range d.Changes {
		out = append(out, &jsonChange{Path: c.Path, Op: c.Op, Before: c.Before, After: c.After, Sensitive: c.Sensitive, Lines: c.Lines, Manager: c.Manager,
			Provenance: slices.Clone(c.Provenance), ProvenanceJoint: c.ProvenanceJoint})
	}
	return out
}

func jsonRef(c *plan.ChartRef) *jsonChartRef {
	if c == nil {
		return nil
	}
	return &jsonChartRef{Name: c.Name, Version: c.Version, AppVersion: c.AppVersion}
}

// JSON writes the plan as the documented JSON document
// (docs/plan-json.md). Sensitive values are masked.
func JSON(w io.Writer, p *plan.Plan) error {
	s := p.Summary()
	out := jsonPlan{
		FormatVersion: plan.FormatVersion, Stack: p.Stack, Environment: p.Environment, ConfigHash: p.ConfigHash, CreatedAt: p.CreatedAt,
		Targets: strs(p.Targets), IncludeDeps: p.IncludeDeps, Selectors: p.Selectors, HasChanges: p.HasChanges(),
		Summary:  jsonSummary{Install: s.Install, Upgrade: s.Upgrade, Uninstall: s.Uninstall, Unchanged: s.Unchanged, DriftedObjects: s.Drifted, Refused: s.Refused, Forget: s.Forget, Moved: s.Moved, Renamed: s.Renamed},
		Releases: []*jsonRelease{},
	}
	for _, r := range p.Releases {
		jr := &jsonRelease{
			Address: r.Addr.String(), Name: r.Name, Namespace: r.Namespace, Cluster: r.Cluster, Action: r.Action,
			DependsOn: strs(r.DependsOn), IncludedFor: strs(r.IncludedFor), KnownAfterApply: r.KnownAfterApply, PoliciesAtApply: r.PoliciesAtApply,
			Chart:    jsonChart{Before: jsonRef(r.Chart.Before), After: jsonRef(r.Chart.After)},
			Values:   jsonChanges(r.Values),
			Warnings: r.Warnings, Attribution: r.Attribution,
			Observed: jsonObserved{LastRevision: r.Observed.LastRevision, LastStatus: r.Observed.LastStatus},
			Owner:    r.Owner, Adopt: r.Adopt, Refused: r.Refused(),
			StoredAPIs: jsonStoredAPIs(r), KubeTarget: r.KubeTarget, KubeKnownThrough: r.KubeKnown, Deprecations: jsonDeprecations(r),
		}
		if r.RecordSize > 0 {
			jr.Record = &jsonRecord{Bytes: r.RecordSize, LimitBytes: r.RecordLimit}
		}
		if p := r.Prunes; p != nil {
			jr.Prunes = &jsonPrunes{Revisions: p.Revisions, HistoryMax: p.Keep}
		}
		if t := r.Takeover; t != nil {
			jr.Takeover = &jsonTakeover{By: t.By(), Stack: t.Stack, StackNamespace: t.Namespace, LetGo: t.LetGo, Allowed: t.Allowed, Refusal: t.Refusal}
		}
		if pf := r.PromotedFrom; pf != nil {
			jr.PromotedFrom = &jsonPromoted{Environment: pf.Environment, Name: pf.Name, Namespace: pf.Namespace, Cluster: pf.Cluster, Revision: pf.Revision, ChartDigest: pf.ChartDigest}
		}
		if r.MovedFrom != nil {
			jr.MovedFrom = r.MovedFrom.String()
		}
		if r.RemovedFrom != nil {
			jr.RemovedFrom = r.RemovedFrom.String()
		}
		if rn := r.Rename; rn != nil {
			jr.Rename = &jsonRename{From: rn.From, FromRevision: rn.FromRevision, State: rn.State, StateDetail: rn.StateLine(), Revisions: rn.Revisions, Copied: rn.Copied}
			for _, o := range rn.Objects {
				jo := jsonRenamedObject{Ref: o.Ref.String(), Kept: o.Kept, Recreated: o.Recreated, Why: o.Why}
				if o.ReplacedBy != nil {
					jo.ReplacedBy = o.ReplacedBy.String()
				}
				jr.Rename.Objects = append(jr.Rename.Objects, jo)
			}
		}
		for _, c := range r.Conflicts {
			jr.Conflicts = append(jr.Conflicts, jsonConflict{Ref: c.Ref.String(), OwnerRelease: c.OwnerRelease, OwnerNamespace: c.OwnerNamespace, OwnerStack: c.OwnerStack})
		}
		if i := r.Interrupted; i != nil {
			jr.Interrupted = &jsonInterrupted{RunID: i.RunID, Revision: i.Revision, Status: i.Status}
		}
		for _, rs := range r.Reasons {
			jr.Reasons = append(jr.Reasons, jsonReason{Kind: rs.Kind, Detail: rs.Detail})
		}
		for _, h := range r.Hooks {
			jr.Hooks = append(jr.Hooks, jsonHook{Name: h.Name, Kind: h.Kind, Path: h.Path, Events: h.Events, Weight: h.Weight})
		}
		for _, o := range r.Objects {
			jr.Objects = append(jr.Objects, &jsonObject{Ref: o.Ref.String(), APIVersion: o.Ref.APIVersion(), Kind: o.Ref.Kind, Namespace: o.Ref.Namespace, Name: o.Ref.Name,
				Action: o.Action, Template: o.Template, Reason: o.Reason, Changes: jsonChanges(o.Diff), CRD: o.CRD})
		}
		for _, h := range plan.HookObjects(r.Hooks) {
			jr.Objects = append(jr.Objects, &jsonObject{Ref: h.Ref.String(), APIVersion: h.Ref.APIVersion(), Kind: h.Ref.Kind, Namespace: h.Ref.Namespace, Name: h.Ref.Name,
				Action: plan.ObjectCreate, Template: h.Path, Hook: h.Events})
		}
		for _, d := range r.Drift {
			jr.Drift = append(jr.Drift, &jsonDrift{Ref: d.Ref.String(), Missing: d.Missing, Corrected: d.Corrected, Note: d.Note, Changes: jsonChanges(d.Diff)})
		}
		jr.Impact = jsonImpactOf(r.Impact)
		for _, e := range r.ClaimExpansions {
			jr.ClaimExpansions = append(jr.ClaimExpansions, jsonClaimExpansion{Ref: e.Ref.String(), StatefulSet: e.StatefulSet.String(), StorageClass: e.StorageClass, From: e.From, To: e.To})
		}
		out.Releases = append(out.Releases, jr)
	}
	out.PolicyResults, out.AllowedPolicies = jsonPolicyResults(p, p.Redactor()), p.AllowedPolicies
	redactJSON(&out, p.Redactor())
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// redactJSON masks sensitive strings in every string value of the
// document, never in its keys: consumers keep a valid schema even when a
// sensitive value is a common word.
func redactJSON(out *jsonPlan, red *sensitive.Redactor) {
	changes := func(cs []*jsonChange) {
		for _, c := range cs {
			c.Before, c.After = red.Value(c.Before), red.Value(c.After)
			for i, l := range c.Lines {
				c.Lines[i] = red.Text(l)
			}
			c.Provenance = redactOrigins(c.Provenance, red)
		}
	}
	for _, r := range out.Releases {
		changes(r.Values)
		for i, w := range r.Warnings {
			r.Warnings[i] = red.Text(w)
		}
		r.Attribution = red.Text(r.Attribution)
		for i := range r.Hooks {
			r.Hooks[i].Name = red.Text(r.Hooks[i].Name)
		}
		for _, o := range r.Objects {
			o.Ref, o.Name, o.Reason = red.Text(o.Ref), red.Text(o.Name), red.Text(o.Reason)
			changes(o.Changes)
		}
		for _, d := range r.Drift {
			d.Ref, d.Note = red.Text(d.Ref), red.Text(d.Note)
			changes(d.Changes)
		}
		redactImpact(r.Impact, red)
		if r.Rename != nil {
			for i := range r.Rename.Objects {
				o := &r.Rename.Objects[i]
				o.Ref, o.Why, o.ReplacedBy = red.Text(o.Ref), red.Text(o.Why), red.Text(o.ReplacedBy)
			}
		}
		for i := range r.Deprecations {
			r.Deprecations[i].Ref = red.Text(r.Deprecations[i].Ref)
		}
	}
}

// redactOrigins masks sensitive strings in origins' names and sources
// (a values key may spell one), on copies.
func redactOrigins(os []plan.Origin, red *sensitive.Redactor) []plan.Origin {
	if len(os) == 0 {
		return nil
	}
	out := make([]plan.Origin, len(os))
	for i, o := range os {
		o.Input = red.Text(o.Input)
		if o.Source != nil {
			s := *o.Source
			s.File, s.Env, s.Flag = red.Text(s.File), red.Text(s.Env), red.Text(s.Flag)
			o.Source = &s
		}
		o.Via, o.Overrode = redactOrigins(o.Via, red), redactOrigins(o.Overrode, red)
		out[i] = o
	}
	return out
}

// strs are the texts of addresses.
func strs[T fmt.Stringer](xs []T) []string {
	if len(xs) == 0 {
		return nil
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

// jsonClaimExpansion is a claim apply resizes (plan.ClaimExpansion).
type jsonClaimExpansion struct {
	Ref          string `json:"ref"`
	StatefulSet  string `json:"statefulset"`
	StorageClass string `json:"storage_class"`
	From         string `json:"from"`
	To           string `json:"to"`
}

// jsonTakeover is plan.Takeover.
type jsonTakeover struct {
	By             string `json:"by"`
	Stack          string `json:"stack,omitempty"`
	StackNamespace string `json:"stack_namespace,omitempty"`
	LetGo          bool   `json:"let_go,omitempty"`
	Allowed        bool   `json:"allowed,omitempty"`
	Refusal        string `json:"refusal,omitempty"`
}
