package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/view"
)

// planPage is a plan as the pages show it: the documented JSON document
// (docs/plan-json.md, sensitive values masked) decoded into what the
// templates read, with each release's text as the CLI prints it.
type planPage struct {
	Stack         string         `json:"stack"`
	Environment   string         `json:"environment"`
	CreatedAt     time.Time      `json:"created_at"`
	HasChanges    bool           `json:"has_changes"`
	Summary       planSummary    `json:"summary"`
	Releases      []*releasePage `json:"releases"`
	PolicyResults []policyResult `json:"policy_results"`
	Allowed       []string       `json:"allowed_policies"`
	Digest        string         `json:"-"`
	Graph         *graph         `json:"-"`
	Denying       []string       `json:"-"`
	texts         map[string]view.ReleaseText
}

type planSummary struct {
	Install        int `json:"install"`
	Upgrade        int `json:"upgrade"`
	Uninstall      int `json:"uninstall"`
	Unchanged      int `json:"unchanged"`
	DriftedObjects int `json:"drifted_objects"`
	Refused        int `json:"refused"`
	Forget         int `json:"forget"`
	Moved          int `json:"moved"`
	Renamed        int `json:"renamed"`
}

type releasePage struct {
	Address         string         `json:"address"`
	Name            string         `json:"name"`
	Namespace       string         `json:"namespace"`
	Cluster         string         `json:"cluster"`
	Action          string         `json:"action"`
	DependsOn       []string       `json:"depends_on"`
	KnownAfterApply bool           `json:"known_after_apply"`
	PoliciesAtApply bool           `json:"policies_at_apply"`
	Reasons         []reason       `json:"reasons"`
	Chart           chartChange    `json:"chart"`
	Objects         []objectChange `json:"objects"`
	Warnings        []string       `json:"warnings"`
	Refused         bool           `json:"refused"`
	Impact          *impactDoc     `json:"impact"`
	Drift           []struct {
		Ref string `json:"ref"`
	} `json:"drift"`

	ImpactLine string         `json:"-"`
	Text       string         `json:"-"`
	DriftText  string         `json:"-"`
	Policies   []policyResult `json:"-"`
}

type reason struct {
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

type chartChange struct {
	Before *chartRef `json:"before"`
	After  *chartRef `json:"after"`
}

type chartRef struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type objectChange struct {
	Ref    string `json:"ref"`
	Action string `json:"action"`
	Hook   string `json:"hook"`
}

type impactDoc struct {
	DataLoss []struct {
		Ref    string `json:"ref"`
		Reason string `json:"reason"`
	} `json:"data_loss"`
}

type policyResult struct {
	Policy  string `json:"policy"`
	Level   string `json:"level"`
	Message string `json:"message"`
	Release string `json:"release"`
	Object  string `json:"object"`
	Hook    string `json:"hook"`
	Allowed bool   `json:"allowed"`
}

// newPlanPage reads p through its JSON view, so that a page shows nothing
// the CLI's JSON would mask.
func newPlanPage(p *plan.Plan, digest string) (*planPage, error) {
	var b bytes.Buffer
	if err := view.JSON(&b, p); err != nil {
		return nil, err
	}
	pg := &planPage{Digest: digest}
	if err := json.Unmarshal(b.Bytes(), pg); err != nil {
		return nil, fmt.Errorf("read the plan's JSON view: %w", err)
	}
	pg.texts = view.ReleaseTexts(p)
	byRelease := map[string][]policyResult{}
	denying := map[string]bool{}
	// Denials first, then warnings, each in the plan's order.
	var denials, others []policyResult
	for _, r := range pg.PolicyResults {
		if r.Level == string(plan.PolicyDeny) {
			denials = append(denials, r)
			if !r.Allowed && !denying[r.Policy] {
				denying[r.Policy] = true
				pg.Denying = append(pg.Denying, r.Policy)
			}
		} else {
			others = append(others, r)
		}
	}
	pg.PolicyResults = append(denials, others...)
	for _, r := range pg.PolicyResults {
		byRelease[r.Release] = append(byRelease[r.Release], r)
	}
	for _, r := range pg.Releases {
		t := pg.texts[r.Address]
		r.ImpactLine, r.Text, r.DriftText = t.Impact, t.Text, t.Drift
		r.Policies = byRelease[r.Address]
	}
	pg.Graph = layoutGraph(pg.Releases)
	return pg, nil
}

// Changing is the releases that change or drifted, in the plan's order.
func (p *planPage) Changing() []*releasePage {
	var out []*releasePage
	for _, r := range p.Releases {
		if r.Action != string(plan.ActionNoOp) || r.DriftText != "" {
			out = append(out, r)
		}
	}
	return out
}

// Unchanged counts the releases that stay as they are.
func (p *planPage) Unchanged() int { return len(p.Releases) - len(p.Changing()) }

// SummaryLine is the plan's counts as the Stack's status says them.
func (s planSummary) String() string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d to %s", n, what))
		}
	}
	add(s.Install, "install")
	add(s.Upgrade, "upgrade")
	add(s.Uninstall, "uninstall")
	if s.DriftedObjects > 0 {
		parts = append(parts, fmt.Sprintf("%d drifted", s.DriftedObjects))
	}
	if len(parts) == 0 {
		return "no changes"
	}
	return strings.Join(parts, ", ")
}
