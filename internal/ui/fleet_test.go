package ui

import (
	"context"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	digestOld = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
	digestNew = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	// fleetCanary is a template variable's value: a variable the stack may
	// declare sensitive, so no page shows it.
	fleetCanary = "hunter2-fleet-canary"
)

// haltedSet is a StackSet over five clusters in three steps: canary
// verified the new digest, eu failed on it (c2's plan failed), and rest
// is held on the old one.
func haltedSet() v1alpha1.StackSet {
	bake := &metav1.Duration{Duration: 10 * time.Minute}
	return v1alpha1.StackSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "web"},
		Spec: v1alpha1.StackSetSpec{
			Template: v1alpha1.StackTemplate{Spec: v1alpha1.StackSpec{
				Source: "oci://registry.example/stacks/web:live", Approval: v1alpha1.ApprovalManual,
				Vars:     map[string]string{"region": "{{cluster.labels.region}}", "db_password": fleetCanary},
				VarsFrom: []v1alpha1.VarsFrom{{Kind: "Secret", Name: "web-secrets"}},
			}},
			Strategy: &v1alpha1.StackSetStrategy{Rolling: &v1alpha1.RollingStrategy{Steps: []v1alpha1.RolloutStep{
				{Name: "canary", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "canary"}}, Bake: bake},
				{Name: "eu", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}, Gates: []v1alpha1.Gate{{Test: &v1alpha1.TestGate{}}}},
				{}, // step-3: the rest
			}}},
		},
		Status: v1alpha1.StackSetStatus{
			Conditions: []metav1.Condition{{Type: "Ready", Status: "False", Reason: v1alpha1.ReasonHalted,
				Message: "step eu holds on " + digestNew + ": Stack web-c2 on cluster fleet/c2 failed: PlanFailed: connection refused: later steps wait until it recovers"}},
			Summary: "5 Stacks: 4 Ready, 1 PlanFailed",
			Stacks: []v1alpha1.StackSetStack{
				{Name: "web-c1", Element: "c1", Cluster: "fleet/c1", Step: "canary", Digest: digestNew, State: "Ready"},
				{Name: "web-c3", Element: "c3", Cluster: "fleet/c3", Step: "eu", Digest: digestNew, State: "Ready"},
				{Name: "web-c2", Element: "c2", Cluster: "fleet/c2", Step: "eu", Digest: digestNew, State: v1alpha1.ReasonPlanFailed},
				{Name: "web-c4", Element: "c4", Cluster: "fleet/c4", Step: "step-3", Digest: digestOld, State: "Ready"},
				{Name: "web-c5", Element: "c5", Cluster: "fleet/c5", Step: "step-3", Digest: digestOld, State: "Ready"},
			},
			Steps: []v1alpha1.StageStatus{
				{Name: "canary", Digest: digestNew, Phase: v1alpha1.PhaseVerified, Verified: digestNew},
				{Name: "eu", Digest: digestNew, Phase: v1alpha1.PhasePromoting},
			},
			Plans: []v1alpha1.PlanGroup{
				{Plan: "no changes", Stacks: []string{"web-c1", "web-c3", "web-c4", "web-c5"}},
				{Plan: "PlanFailed: cluster \"target\": connection refused", Stacks: []string{"web-c2"}},
			},
		},
	}
}

func cellsByStack(d stackSetData) map[string]fleetCell {
	out := map[string]fleetCell{}
	for _, s := range d.Steps {
		for _, c := range s.Cells {
			out[c.Stack] = c
		}
	}
	return out
}

// The page's model: each Stack in its step, its phase from what the
// StackSet records, the steps after the one that holds halted.
func TestStackSetModelHalted(t *testing.T) {
	ss := haltedSet()
	d := newStackSetData(&ss, nil, time.Now())
	var names []string
	for _, s := range d.Steps {
		names = append(names, s.Name)
	}
	if strings.Join(names, " ") != "canary eu step-3" {
		t.Fatalf("steps %v, want canary eu step-3 in order", names)
	}
	if !d.Halted || d.Current != "eu" || d.Digest != digestNew {
		t.Errorf("halted %v, current %q, digest %q; want halted at eu on %s", d.Halted, d.Current, d.Digest, digestNew)
	}
	want := map[string]string{"web-c1": cellReady, "web-c2": cellFailed, "web-c3": cellReady, "web-c4": cellHalted, "web-c5": cellHalted}
	cells := cellsByStack(d)
	for n, p := range want {
		if cells[n].Phase != p {
			t.Errorf("%s: %q, want %q", n, cells[n].Phase, p)
		}
	}
	if h := cells["web-c4"].Held; !strings.Contains(h, "step eu halted") {
		t.Errorf("web-c4 held %q, want it to name step eu", h)
	}
	if eu := d.Steps[1]; len(eu.Cells) != 2 || eu.Cells[0].Stack != "web-c2" || eu.Cells[1].Stack != "web-c3" {
		t.Errorf("eu's cells %+v, want web-c2, web-c3 (by name)", eu.Cells)
	}
	if strings.Join(d.VarNames, ",") != "db_password,region" || len(d.VarsFrom) != 1 || d.VarsFrom[0] != "Secret web-secrets" {
		t.Errorf("vars %v from %v", d.VarNames, d.VarsFrom)
	}
}

func stackWith(name, set string, gen, observed int64, conds ...metav1.Condition) v1alpha1.Stack {
	return v1alpha1.Stack{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: name, Generation: gen, Labels: map[string]string{v1alpha1.StackSetLabel: set}},
		Status:     v1alpha1.StackStatus{ObservedGeneration: observed, Conditions: conds, Source: &v1alpha1.SourceStatus{Digest: digestNew}},
	}
}

func cond(typ string, st metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: st, Reason: reason, Message: msg}
}

// A Stack read live says more than the one word the StackSet keeps of it.
func TestStackPhaseFromItsConditions(t *testing.T) {
	cases := []struct {
		name string
		st   v1alpha1.Stack
		want string
	}{
		{"not reconciled", stackWith("a", "web", 2, 1, cond("Ready", "True", "Applied", "")), cellPending},
		{"no source yet", stackWith("a", "web", 1, 1, cond("Ready", "False", v1alpha1.ReasonNoSource, "waits for a Pipeline")), cellPending},
		{"planning", stackWith("a", "web", 1, 1, cond("Ready", "True", "Applied", ""), cond("Reconciling", "True", "Progressing", "planning")), cellPlanning},
		{"applying", stackWith("a", "web", 1, 1, cond("Ready", "Unknown", "Progressing", "applying 1/3: release.api"), cond("Reconciling", "True", "Progressing", "applying 1/3: release.api")), cellApplying},
		{"waiting approval", stackWith("a", "web", 1, 1, cond("Ready", "False", v1alpha1.ReasonApprovalRequired, "plan sha256:… waits")), cellApproval},
		{"failed", stackWith("a", "web", 1, 1, cond("Ready", "False", v1alpha1.ReasonApplyFailed, "release.api: timed out")), cellFailed},
		{"ready", stackWith("a", "web", 1, 1, cond("Ready", "True", "UpToDate", "")), cellReady},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, _, _ := stackPhase(&c.st); got != c.want {
				t.Errorf("%q, want %q", got, c.want)
			}
		})
	}
	suspended := stackWith("a", "web", 1, 1, cond("Ready", "True", "UpToDate", ""))
	suspended.Spec.Suspend = true
	if got, _, _ := stackPhase(&suspended); got != cellPaused {
		t.Errorf("suspended: %q, want %q", got, cellPaused)
	}
}

// A baking step's Ready Stacks bake; a paused rollout holds the Stacks
// not on the newest digest; a Stack read live shows what it is doing.
func TestStackSetModelBakingAndPaused(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	since := metav1.NewTime(now.Add(-5 * time.Minute))
	ss := haltedSet()
	ss.Status.Conditions = []metav1.Condition{cond("Ready", "False", v1alpha1.ReasonPaused, "spec.paused")}
	ss.Spec.Paused = true
	ss.Status.Stacks[2].State = "Ready"
	ss.Status.Steps = []v1alpha1.StageStatus{{Name: "canary", Digest: digestNew, Phase: v1alpha1.PhaseBaking, Since: &since}}
	live := []v1alpha1.Stack{stackWith("web-c3", "web", 1, 1, cond("Ready", "Unknown", "Progressing", "applying 2/3: release.web"), cond("Reconciling", "True", "Progressing", "applying 2/3: release.web"))}
	d := newStackSetData(&ss, live, now)
	cells := cellsByStack(d)
	if d.Steps[0].BakePct != 50 || cells["web-c1"].Phase != cellBaking {
		t.Errorf("canary: bake %d%%, web-c1 %q; want 50%% and baking", d.Steps[0].BakePct, cells["web-c1"].Phase)
	}
	if c := cells["web-c3"]; c.Phase != cellApplying || c.Message != "applying 2/3: release.web" {
		t.Errorf("web-c3 read live: %q %q, want applying", c.Phase, c.Message)
	}
	if cells["web-c4"].Phase != cellPaused || cells["web-c5"].Phase != cellPaused {
		t.Errorf("paused: web-c4 %q, web-c5 %q, want paused (not on the newest digest)", cells["web-c4"].Phase, cells["web-c5"].Phase)
	}
	if !d.Paused || d.Halted || d.Current != "canary" {
		t.Errorf("paused %v halted %v current %q", d.Paused, d.Halted, d.Current)
	}
}

// The page as a reader opens it: steps left to right, cells with their
// phase linking to their Stack, the grouped plan, and no variable's value.
func TestStackSetPage(t *testing.T) {
	b := &fakeBackend{stacksets: []v1alpha1.StackSet{haltedSet()}, stacks: []v1alpha1.Stack{
		stackWith("web-c2", "web", 1, 1, cond("Ready", "False", v1alpha1.ReasonPlanFailed, "cluster \"target\": connection refused")),
	}}
	_, ts := newTestServer(t, b)
	resp, body := get(t, ts, "/stacksets/fleet/web", true)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d: %s", resp.StatusCode, body)
	}
	text := html.UnescapeString(body)
	if strings.Contains(text, fleetCanary) {
		t.Fatal("the page shows a template variable's value")
	}
	c, e, r := strings.Index(body, `data-step="canary"`), strings.Index(body, `data-step="eu"`), strings.Index(body, `data-step="step-3"`)
	if c < 0 || !(c < e && e < r) {
		t.Fatalf("steps not left to right: %d %d %d", c, e, r)
	}
	for _, want := range []string{
		`<li class="cell phase-failed" data-stack="web-c2" data-phase="failed" data-cluster="fleet/c2"`,
		`<li class="cell phase-halted" data-stack="web-c4" data-phase="halted" data-cluster="fleet/c4"`,
		`<a href="/stacks/fleet/web-c2"><strong class="cell-name">fleet/c2</strong></a>`,
		`<strong>4 Stacks:</strong> no changes`,
		`<strong>1 Stack:</strong> PlanFailed: cluster "target": connection refused`,
		`<a href="/stacks/fleet/web-c4" data-stack="web-c4">web-c4</a> <span class="dim">on fleet/c4</span>`,
		`class="current-step">eu</strong>`,
		"Halted: step eu holds on",
		`<a href="/pipelines/fleet/web">`,
		`<code>db_password</code>`,
		"Secret web-secrets",
		"clusters ring=canary",
		"every Stack left", // the last step
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	// The list: the StackSet, its state and its fleet plan in a line.
	b.stacksets[0].Status.PlanSummary = "4 Stacks: no changes; 1 Stack: PlanFailed: …"
	_, body = get(t, ts, "/stacksets", true)
	if !strings.Contains(body, `data-stackset="fleet/web"`) || !strings.Contains(body, `href="/stacksets/fleet/web"`) ||
		!strings.Contains(html.UnescapeString(body), "4 Stacks: no changes; 1 Stack: PlanFailed") {
		t.Errorf("the StackSets page lacks fleet/web or its plan:\n%s", body)
	}
	if resp, _ := get(t, ts, "/stacksets/fleet/gone", true); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a StackSet that does not exist: %d, want 404", resp.StatusCode)
	}
}

// A generated Stack links back to its StackSet, on its page, in the
// Stacks list; the rollout's Pipeline in the Pipelines list.
func TestGeneratedStackLinksToItsStackSet(t *testing.T) {
	st := stack("fleet", "web-c1", "True", "Applied", map[string]string{v1alpha1.StackSetLabel: "web"})
	st.Annotations = map[string]string{v1alpha1.ElementAnnotation: "c1"}
	b := &fakeBackend{stacks: []v1alpha1.Stack{st, stack("fleet", "alone", "True", "Applied", nil)}, plan: samplePlan(),
		pipelines: []v1alpha1.Pipeline{{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "web", Labels: map[string]string{v1alpha1.StackSetLabel: "web"}}}}}
	_, ts := newTestServer(t, b)
	link := `<a class="stackset-link" href="/stacksets/fleet/web">web</a>`
	for _, path := range []string{"/stacks/fleet/web-c1", "/stacks", "/pipelines"} {
		if _, body := get(t, ts, path, true); !strings.Contains(body, link) {
			t.Errorf("%s has no link to StackSet fleet/web", path)
		}
	}
	if _, body := get(t, ts, "/stacks/fleet/web-c1", true); !strings.Contains(body, "element c1") {
		t.Error("the Stack page does not name its element")
	}
	if _, body := get(t, ts, "/stacks/fleet/alone", true); strings.Contains(body, "stackset-link") {
		t.Error("a Stack of no StackSet links to one")
	}
}

// What the user's RBAC does not let them read, the page does not show: a
// StackSet of a namespace they may not read is neither listed nor shown.
func TestStackSetOfAnotherNamespaceIsNotShown(t *testing.T) {
	other := haltedSet()
	other.Namespace = "team-b"
	mine := haltedSet()
	mine.Namespace, mine.Name = "team-a", "mine"
	b := &fakeBackend{stacksets: []v1alpha1.StackSet{mine, other}, mayList: map[string]bool{"team-a": true}, listable: []string{"team-a"}}
	_, ts := newTestServer(t, b)
	resp, body := get(t, ts, "/stacksets", true)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `data-stackset="team-a/mine"`) || strings.Contains(body, "team-b") {
		t.Fatalf("%d: the list shows team-b's StackSet, or not team-a's:\n%s", resp.StatusCode, body)
	}
	if !strings.Contains(html.UnescapeString(body), "namespace team-a, where you may") {
		t.Errorf("the list does not say which namespace it shows:\n%s", body)
	}
	resp, body = get(t, ts, "/stacksets/team-b/web", true)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("team-b's StackSet: %d, want 403", resp.StatusCode)
	}
	if regexp.MustCompile(`web-c\d|fleet/c\d|no changes`).MatchString(body) {
		t.Errorf("the refusal shows team-b's StackSet:\n%s", body)
	}
}

// Without the right to list Stacks, the cells say what the StackSet
// records, and the page says why.
func TestStackSetPageWithoutTheStacks(t *testing.T) {
	b := &forbiddenStacks{fakeBackend: &fakeBackend{stacksets: []v1alpha1.StackSet{haltedSet()}}}
	_, ts := newTestServer(t, b)
	resp, body := get(t, ts, "/stacksets/fleet/web", true)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `data-stack="web-c2" data-phase="failed"`) ||
		!strings.Contains(html.UnescapeString(body), "The Stacks' own conditions are not shown") {
		t.Fatalf("%d:\n%s", resp.StatusCode, body)
	}
}

type forbiddenStacks struct{ *fakeBackend }

func (f *forbiddenStacks) StackSetStacks(_ context.Context, ns, _ string) ([]v1alpha1.Stack, error) {
	return nil, (&fakeBackend{mayList: map[string]bool{}}).forbidden("stacks", ns)
}
