package ui

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/plantest"
	"github.com/convoy-sh/convoy/internal/run"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fakeBackend is an in-memory cluster for the pages' unit tests; the
// browser tests use the real one against the devcluster.
type fakeBackend struct {
	stacks     []v1alpha1.Stack
	plan       *plan.Plan
	pipelines  []v1alpha1.Pipeline
	canApprove bool
	approved   []string // "ns/name digest allow..."
	// user is who the user is; mayList, when set, the namespaces the
	// user may list Stacks in ("": all), and listable what the user
	// finds out of them; historyErr what reading a release's records gives.
	user       string
	mayList    map[string]bool
	listable   []string
	historyErr error
	// noRecords: the driver holds no record of the release.
	noRecords bool
	// historyDriver is the driver History was last asked to read.
	historyDriver release.StorageDriver
	// stacksets are the StackSets; their Stacks are those of stacks
	// labelled with them. mayList refuses them as it refuses Stacks.
	stacksets []v1alpha1.StackSet
}

// forbidden is the API server's refusal of resource in ns ("": at the
// cluster scope) when mayList does not allow ns.
func (f *fakeBackend) forbidden(resource, ns string) error {
	if f.mayList == nil || f.mayList[ns] {
		return nil
	}
	where := "at the cluster scope"
	if ns != "" {
		where = "in the namespace \"" + ns + "\""
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: "convoy.dev", Resource: resource}, "", errors.New("cannot list resource \""+resource+"\" "+where))
}

func (f *fakeBackend) StackSets(_ context.Context, ns string) ([]v1alpha1.StackSet, error) {
	if err := f.forbidden("stacksets", ns); err != nil {
		return nil, err
	}
	var out []v1alpha1.StackSet
	for _, s := range f.stacksets {
		if ns == "" || s.Namespace == ns {
			out = append(out, s)
		}
	}
	return out, nil
}

func (f *fakeBackend) StackSet(_ context.Context, ns, name string) (*v1alpha1.StackSet, error) {
	if err := f.forbidden("stacksets", ns); err != nil {
		return nil, err
	}
	for i := range f.stacksets {
		if f.stacksets[i].Namespace == ns && f.stacksets[i].Name == name {
			return &f.stacksets[i], nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "convoy.dev", Resource: "stacksets"}, name)
}

func (f *fakeBackend) StackSetStacks(ctx context.Context, ns, name string) ([]v1alpha1.Stack, error) {
	all, err := f.Stacks(ctx, ns)
	var out []v1alpha1.Stack
	for _, st := range all {
		if st.Labels[v1alpha1.StackSetLabel] == name {
			out = append(out, st)
		}
	}
	return out, err
}

func (f *fakeBackend) User(context.Context) string { return f.user }

func (f *fakeBackend) StackNamespaces(context.Context) []string { return f.listable }

func (f *fakeBackend) Stacks(_ context.Context, ns string) ([]v1alpha1.Stack, error) {
	if f.mayList != nil && !f.mayList[ns] {
		where := "at the cluster scope"
		if ns != "" {
			where = "in the namespace \"" + ns + "\""
		}
		return nil, apierrors.NewForbidden(schema.GroupResource{Group: "convoy.dev", Resource: "stacks"}, "", errors.New("cannot list resource \"stacks\" "+where))
	}
	var out []v1alpha1.Stack
	for _, s := range f.stacks {
		if ns == "" || s.Namespace == ns {
			out = append(out, s)
		}
	}
	return out, nil
}

func (f *fakeBackend) Stack(_ context.Context, ns, name string) (*v1alpha1.Stack, error) {
	for i := range f.stacks {
		if f.stacks[i].Namespace == ns && f.stacks[i].Name == name {
			return &f.stacks[i], nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "convoy.dev", Resource: "stacks"}, name)
}

func (f *fakeBackend) Plan(_ context.Context, st *v1alpha1.Stack) (*planPage, string, error) {
	if f.plan == nil {
		return nil, "", errors.New("no plan")
	}
	pg, err := newPlanPage(f.plan, st.Status.Plan.Digest)
	return pg, "", err
}

func (f *fakeBackend) Events(context.Context, string, string, string) ([]corev1.Event, error) {
	return []corev1.Event{{Type: "Normal", Reason: "Planned", Message: "plan sha256:abc: 1 to upgrade", LastTimestamp: metav1.Now()}}, nil
}

func (f *fakeBackend) History(_ context.Context, driver release.StorageDriver, _, _ string) ([]run.Revision, error) {
	f.historyDriver = driver
	if f.historyErr != nil {
		return nil, f.historyErr
	}
	if driver == release.DriverSQL {
		return nil, run.ErrRecordsNotInCluster // as run.RecordHistory
	}
	if f.noRecords {
		return nil, nil
	}
	return []run.Revision{{Version: 1, Status: "superseded", Chart: "app-1.1.0"}, {Version: 2, Status: "deployed", Chart: "app-1.2.0", Description: "Upgrade complete"}}, nil
}

func (f *fakeBackend) Pipelines(context.Context, string) ([]v1alpha1.Pipeline, error) {
	return f.pipelines, nil
}

func (f *fakeBackend) Pipeline(_ context.Context, ns, name string) (*v1alpha1.Pipeline, error) {
	for i := range f.pipelines {
		if f.pipelines[i].Namespace == ns && f.pipelines[i].Name == name {
			return &f.pipelines[i], nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "convoy.dev", Resource: "pipelines"}, name)
}

func (f *fakeBackend) CanApprove(context.Context, string, string, string) (bool, string) {
	if f.canApprove {
		return true, ""
	}
	return false, "you may not patch stacks.convoy.dev in namespace shop"
}

func (f *fakeBackend) Approve(_ context.Context, ns, name, digest string, allow []string) error {
	f.approved = append(f.approved, strings.Join(append([]string{ns + "/" + name, digest}, allow...), " "))
	return nil
}

func (f *fakeBackend) ApproveStage(_ context.Context, ns, name, stage, digest string) error {
	f.approved = append(f.approved, ns+"/"+name+" "+stage+" "+digest)
	return nil
}

const digest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"

func stack(ns, name string, ready metav1.ConditionStatus, reason string, labels map[string]string) v1alpha1.Stack {
	return v1alpha1.Stack{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       v1alpha1.StackSpec{Source: "oci://registry.example/" + name + ":1.0", Approval: v1alpha1.ApprovalManual},
		Status: v1alpha1.StackStatus{
			Conditions: []metav1.Condition{{Type: "Ready", Status: ready, Reason: reason, Message: "the message of " + name}},
			Plan:       &v1alpha1.PlanStatus{Digest: digest, Summary: "1 to install, 3 to upgrade, 1 to uninstall", HasChanges: true, DeniedBy: []string{"no-latest"}},
			Releases:   []v1alpha1.ReleaseStatus{{Address: "release.db", Name: "db", Namespace: ns, Revision: 2, Status: "deployed"}},
		},
	}
}

// samplePlan is plantest.Sample with an impact and policy results: a
// warning listed before a denial in the plan, to see denials come first.
func samplePlan() *plan.Plan {
	p := plantest.Sample()
	for _, r := range p.Releases {
		if r.Name == "api-eu" {
			r.Impact = &plan.Impact{Rollouts: []plan.Rollout{{Ref: plantest.Ref("apps/v1 Deployment shop/api-eu"), Replicas: 3, Strategy: plan.Strategy{Type: "RollingUpdate"}}}}
		}
	}
	p.PolicyResults = []plan.PolicyResult{
		{Policy: "team-label", Level: plan.PolicyWarn, Message: "no team label", Release: `release.api["eu"]`},
		{Policy: "no-latest", Level: plan.PolicyDeny, Message: "image uses :latest", Release: `release.api["eu"]`, Object: "apps/v1 Deployment shop/api-eu"},
	}
	return p
}

// cookies are the session cookies' names of the test servers, by URL.
var cookies sync.Map

// cookieFor is the name of the session cookie of ts.
func cookieFor(ts *httptest.Server) string {
	if n, ok := cookies.Load(ts.URL); ok {
		return n.(string)
	}
	return "convoy-ui"
}

func serve(t *testing.T, s *Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	s.addr = strings.TrimPrefix(ts.URL, "http://") // as Serve sets it
	cookies.Store(ts.URL, s.cookieName())
	return ts
}

func newTestServer(t *testing.T, b Backend) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(Options{Backend: b, Token: "secret-token", Now: func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return s, serve(t, s)
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func get(t *testing.T, ts *httptest.Server, path string, cookie bool) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+path, nil)
	if cookie {
		req.AddCookie(&http.Cookie{Name: cookieFor(ts), Value: "secret-token"})
	}
	c := &http.Client{CheckRedirect: noRedirect}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp, b.String()
}

func TestRequestsWithoutTheTokenAreRefused(t *testing.T) {
	_, ts := newTestServer(t, &fakeBackend{stacks: []v1alpha1.Stack{stack("shop", "web", "True", "Applied", nil)}})
	for _, path := range []string{"/stacks", "/stacks/shop/web", "/assets/ui.css", "/stacks?token=wrong"} {
		resp, body := get(t, ts, path, false)
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(body, "shop/web") {
			t.Errorf("GET %s without the token: %d %q, want 401 and nothing of the Stacks", path, resp.StatusCode, body)
		}
	}
	// The printed URL: its token becomes an HttpOnly, SameSite=Strict
	// cookie and the token leaves the address bar.
	resp, _ := get(t, ts, "/stacks?token=secret-token&ns=shop", false)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/stacks?ns=shop" {
		t.Fatalf("the first visit: %d to %q, want 303 to /stacks?ns=shop", resp.StatusCode, resp.Header.Get("Location"))
	}
	var got *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == cookieFor(ts) {
			got = c
		}
	}
	if got == nil || got.Value != "secret-token" || !got.HttpOnly || got.SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie %+v, want the token, HttpOnly, SameSite=Strict", got)
	}
	if resp, body := get(t, ts, "/stacks", true); resp.StatusCode != http.StatusOK || !strings.Contains(body, "shop/web") {
		t.Fatalf("with the cookie: %d, body has shop/web: %v", resp.StatusCode, strings.Contains(body, "shop/web"))
	}
}

func TestAnotherHostIsRefused(t *testing.T) {
	_, ts := newTestServer(t, &fakeBackend{})
	u, _ := url.Parse(ts.URL)
	req, _ := http.NewRequest("GET", ts.URL+"/stacks", nil)
	req.Host = "attacker.example:" + u.Port() // a DNS name rebound to 127.0.0.1
	req.AddCookie(&http.Cookie{Name: cookieFor(ts), Value: "secret-token"})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("Host attacker.example: %d, want 403", resp.StatusCode)
	}
	req.Host = "localhost:" + u.Port()
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("Host localhost: %d, want 200", resp.StatusCode)
	}
}

func TestStacksPageFilters(t *testing.T) {
	b := &fakeBackend{stacks: []v1alpha1.Stack{
		stack("shop", "web", "True", "Applied", map[string]string{"team": "web"}),
		stack("shop", "db", "False", "ApprovalRequired", map[string]string{"team": "data"}),
		stack("ops", "mon", "True", "Applied", nil),
	}}
	b.stacks[1].Status.Conditions = append(b.stacks[1].Status.Conditions, metav1.Condition{Type: "Stalled", Status: "True", Reason: "PlanFailed", Message: "chart not found"})
	_, ts := newTestServer(t, b)
	cases := []struct {
		query     string
		want, not []string
	}{
		{"", []string{`data-stack="shop/web"`, `data-stack="shop/db"`, `data-stack="ops/mon"`}, nil},
		{"?ns=shop", []string{`data-stack="shop/web"`, `data-stack="shop/db"`}, []string{`data-stack="ops/mon"`}},
		{"?state=stalled", []string{`data-stack="shop/db" data-state="stalled"`, "PlanFailed"}, []string{`data-stack="shop/web"`}},
		{"?l=team%3Dweb", []string{`data-stack="shop/web"`}, []string{`data-stack="shop/db"`, `data-stack="ops/mon"`}},
	}
	for _, c := range cases {
		resp, body := get(t, ts, "/stacks"+c.query, true)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/stacks%s: %d", c.query, resp.StatusCode)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("/stacks%s lacks %s", c.query, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(body, n) {
				t.Errorf("/stacks%s shows %s", c.query, n)
			}
		}
	}
	if resp, body := get(t, ts, "/stacks?l=team%3D%3D%3D", true); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "label selector") {
		t.Errorf("a bad selector: %d, want 400 naming the selector", resp.StatusCode)
	}
}

func TestStackPageShowsThePlanMasked(t *testing.T) {
	b := &fakeBackend{stacks: []v1alpha1.Stack{stack("shop", "web", "False", "ApprovalRequired", nil)}, plan: samplePlan()}
	_, ts := newTestServer(t, b)
	resp, body := get(t, ts, "/stacks/shop/web", true)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d: %s", resp.StatusCode, body)
	}
	text := html.UnescapeString(body)
	if strings.Contains(text, "hunter2-canary") {
		t.Fatal("the sensitive value is in the page")
	}
	for _, want := range []string{
		"impact: Deployment api-eu rolls", // the CLI's impact line
		`class="policy policy-deny" data-policy="no-latest"`,
		`+ password: "(sensitive)"`, // masked as the CLI masks it
		"~ replicas: 2 → 3",
		"Upgrade complete", // history
		"plan sha256:abc",  // events
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if d, w := strings.Index(body, `data-policy="no-latest"`), strings.Index(body, `data-policy="team-label"`); d < 0 || w < 0 || d > w {
		t.Errorf("denials are not listed first (deny at %d, warn at %d)", d, w)
	}
	// One graph node per release, edges for depends_on.
	if n := strings.Count(body, `<g class="node`); n != len(b.plan.Releases) {
		t.Errorf("%d graph nodes, want %d", n, len(b.plan.Releases))
	}
	if !strings.Contains(text, `data-from="release.db" data-to="release.api["eu"]"`) {
		t.Error("no edge from release.db to release.api[\"eu\"]")
	}
	// Without the permission the button is disabled, saying why.
	if !strings.Contains(body, `id="approve" disabled title="you may not patch stacks.convoy.dev in namespace shop"`) {
		t.Error("the Approve button is not disabled with the reason")
	}
}

func TestApproveNeedsTheFormToken(t *testing.T) {
	b := &fakeBackend{stacks: []v1alpha1.Stack{stack("shop", "web", "False", "ApprovalRequired", nil)}, plan: samplePlan(), canApprove: true}
	s, ts := newTestServer(t, b)
	_, body := get(t, ts, "/stacks/shop/web", true)
	if !strings.Contains(body, `id="approve-override"`) || !strings.Contains(body, "overriding no-latest") {
		t.Fatal("a denied plan's approval does not name the policy it overrides")
	}
	post := func(form url.Values, origin string) *http.Response {
		req, _ := http.NewRequest("POST", ts.URL+"/stacks/shop/web/approve", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req.AddCookie(&http.Cookie{Name: cookieFor(ts), Value: "secret-token"})
		resp, err := (&http.Client{CheckRedirect: noRedirect}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := post(url.Values{"digest": {digest}}, ""); r.StatusCode != http.StatusForbidden {
		t.Errorf("without the form token: %d, want 403", r.StatusCode)
	}
	if r := post(url.Values{"digest": {digest}, "csrf": {s.csrf()}}, "http://attacker.example"); r.StatusCode != http.StatusForbidden {
		t.Errorf("from another origin: %d, want 403", r.StatusCode)
	}
	if len(b.approved) != 0 {
		t.Fatalf("approved %v by refused requests", b.approved)
	}
	if r := post(url.Values{"digest": {digest}, "csrf": {s.csrf()}, "allow": {"no-latest"}}, ts.URL); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("a good form: %d, want 303", r.StatusCode)
	}
	if want := "shop/web " + digest + " no-latest"; len(b.approved) != 1 || b.approved[0] != want {
		t.Fatalf("approved %v, want [%s]", b.approved, want)
	}
}

func TestGraphPlacesDependentsRightOfDependencies(t *testing.T) {
	rels := []*releasePage{
		{Address: "release.web", DependsOn: []string{"release.api"}},
		{Address: "release.api", DependsOn: []string{"release.db", "release.cache"}},
		{Address: "release.db"},
		{Address: "release.cache"},
		{Address: "release.other", DependsOn: []string{"release.gone"}}, // not in the plan
	}
	g := layoutGraph(rels)
	x := map[string]int{}
	for _, n := range g.Nodes {
		x[n.Address] = n.X
	}
	if !(x["release.db"] < x["release.api"] && x["release.cache"] < x["release.api"] && x["release.api"] < x["release.web"]) {
		t.Errorf("columns %v: each release must sit right of its dependencies", x)
	}
	if x["release.other"] != x["release.db"] {
		t.Errorf("a release whose dependency is not in the plan is a root: %v", x)
	}
	if len(g.Edges) != 3 {
		t.Errorf("%d edges, want 3 (db→api, cache→api, api→web)", len(g.Edges))
	}
}

func TestPipelinePageShowsStagesLeftToRight(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	since := metav1.NewTime(now.Add(-30 * time.Second))
	p := v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "app"},
		Spec: v1alpha1.PipelineSpec{Source: "oci://registry.example/app", Follow: v1alpha1.Follow{Semver: ">=1.0.0"}, Stages: []v1alpha1.Stage{
			{Name: "staging", Stacks: v1alpha1.StackRefs("app-staging"), Bake: &metav1.Duration{Duration: time.Minute}, Gates: []v1alpha1.Gate{{CEL: "object.kind != 'Pod'"}}},
			{Name: "canary", Stacks: v1alpha1.StackRefs("app-canary"), Gates: []v1alpha1.Gate{{Test: &v1alpha1.TestGate{}}}},
			{Name: "production", Stacks: []v1alpha1.PipelineStackRef{{Namespace: "shop-prod", Name: "app"}}, Approval: v1alpha1.ApprovalManual},
		}},
		Status: v1alpha1.PipelineStatus{Stacks: []v1alpha1.PipelineStack{
			{Namespace: "shop", Name: "app-staging", Stage: "staging", Digest: digest, Ready: true},
			{Namespace: "shop-prod", Name: "app", Stage: "production"},
		}, Stages: []v1alpha1.StageStatus{
			{Name: "staging", Phase: v1alpha1.PhaseBaking, Digest: digest, Since: &since},
			{Name: "canary", Phase: v1alpha1.PhaseFailed, Digest: digest, FailedGate: &v1alpha1.FailedGate{Gate: "test", Output: "pod app-test failed: exit 1"},
				Gates: []v1alpha1.GateResult{{Gate: "spec.stages[1].gates[0] (test)", Result: v1alpha1.GateFailed, Output: "pod app-test failed: exit 1"}}},
			{Name: "production", Phase: v1alpha1.PhaseAwaitingApproval, Digest: digest},
		}},
	}
	b := &fakeBackend{pipelines: []v1alpha1.Pipeline{p}, canApprove: true}
	s, ts := newTestServer(t, b)
	resp, body := get(t, ts, "/pipelines/shop/app", true)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d: %s", resp.StatusCode, body)
	}
	text := html.UnescapeString(body)
	st, ca, pr := strings.Index(text, `data-stage="staging"`), strings.Index(text, `data-stage="canary"`), strings.Index(text, `data-stage="production"`)
	if st < 0 || !(st < ca && ca < pr) {
		t.Fatalf("stages not in order: %d %d %d", st, ca, pr)
	}
	for _, want := range []string{`value="50"`, "gate test failed", "pod app-test failed: exit 1", "Approve production for 111111111111", `<li class="gate" data-result="Failed">test`,
		// A Stack of the Pipeline's namespace by its name, another's as namespace/name.
		"<li>app-staging ready on", "<li>shop-prod/app not ready</li>"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	form := url.Values{"csrf": {s.csrf()}, "stage": {"production"}, "digest": {digest}}
	req, _ := http.NewRequest("POST", ts.URL+"/pipelines/shop/app/approve", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: cookieFor(ts), Value: "secret-token"})
	r, err := (&http.Client{CheckRedirect: noRedirect}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if want := "shop/app production " + digest; len(b.approved) != 1 || b.approved[0] != want {
		t.Fatalf("approved %v, want [%s]", b.approved, want)
	}
}

func TestLocalPlanPage(t *testing.T) {
	plans := 0
	s, err := New(Options{Token: "secret-token", Local: &Local{Name: "stacks/shop", Replan: true, Plan: func(context.Context) (*plan.Plan, error) {
		plans++
		return samplePlan(), nil
	}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, s)
	if resp, _ := get(t, ts, "/", true); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/local" {
		t.Fatalf("/ without a cluster: %d to %q, want /local", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := get(t, ts, "/stacks", true); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/stacks without a cluster: %d, want 404", resp.StatusCode)
	}
	resp, body := get(t, ts, "/local", true)
	text := html.UnescapeString(body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(text, "Plan of stacks/shop") || !strings.Contains(text, "impact: Deployment api-eu rolls") || strings.Contains(text, "hunter2-canary") {
		t.Fatalf("/local: %d\n%s", resp.StatusCode, text)
	}
	get(t, ts, "/local", true) // the update script's reads do not plan again
	form := url.Values{"csrf": {s.csrf()}}
	req, _ := http.NewRequest("POST", ts.URL+"/local/plan", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: cookieFor(ts), Value: "secret-token"})
	r, err := (&http.Client{CheckRedirect: noRedirect}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if plans != 2 {
		t.Fatalf("planned %d times, want 2: once for the page, once for Plan again", plans)
	}
}

// forbiddenAll is a backend whose user may list Stacks only in "shop".
type forbiddenAll struct{ *fakeBackend }

func (f forbiddenAll) Stacks(ctx context.Context, ns string) ([]v1alpha1.Stack, error) {
	if ns == "" {
		return nil, apierrors.NewForbidden(schema.GroupResource{Group: "convoy.dev", Resource: "stacks"}, "", errors.New("cannot list at the cluster scope"))
	}
	return f.fakeBackend.Stacks(ctx, ns)
}

func TestStacksOfTheContextsNamespaceWhenAllAreForbidden(t *testing.T) {
	b := forbiddenAll{&fakeBackend{stacks: []v1alpha1.Stack{stack("shop", "web", "True", "Applied", nil), stack("ops", "mon", "True", "Applied", nil)}}}
	s, err := New(Options{Backend: b, Token: "secret-token", Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, s)
	resp, body := get(t, ts, "/stacks", true)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `data-stack="shop/web"`) || strings.Contains(body, `data-stack="ops/mon"`) ||
		!strings.Contains(body, "You may not list Stacks in all namespaces: namespace shop") {
		t.Fatalf("%d\n%s", resp.StatusCode, body)
	}
}

func TestApprovalStateNamesWhoApproved(t *testing.T) {
	two := int32(2)
	st := stack("shop", "web", "False", "ApprovalRequired", nil)
	st.Status.Plan.DeniedBy = nil
	if got := approvalState(&st); got != "waiting for approval" {
		t.Errorf("nobody approved: %q", got)
	}
	st.Spec.Approvals = &v1alpha1.Approvals{Required: &two, Entries: []v1alpha1.ApprovalEntry{{Digest: digest, ApprovedBy: "alice"}, {Digest: "sha256:other", ApprovedBy: "bob"}}}
	if got := approvalState(&st); got != "1 of 2 approvals by alice" {
		t.Errorf("one of two: %q", got)
	}
	st.Spec.Approvals.Entries = append(st.Spec.Approvals.Entries, v1alpha1.ApprovalEntry{Digest: digest, ApprovedBy: "carol"})
	if got := approvalState(&st); got != "approved by alice, carol" {
		t.Errorf("two of two: %q", got)
	}
	st.Status.LastAppliedPlan = digest
	st.Status.LastAppliedApproval = &v1alpha1.ApprovalStatus{Digest: digest, ApprovedBy: []string{"alice", "carol"}}
	if row := (&Server{o: Options{Now: time.Now}}).rowOf(&st); row.Approval != "approved by alice, carol, applied" || row.LastAppliedBy != "alice, carol" {
		t.Errorf("applied: %q, last applied by %q", row.Approval, row.LastAppliedBy)
	}
}

// After a user approved a plan that needs more approvals, Approve is
// disabled for that user, saying why; another user may still approve.
func TestApproveDisabledAfterOwnApproval(t *testing.T) {
	two := int32(2)
	st := stack("shop", "web", "False", "ApprovalRequired", nil)
	st.Status.Plan.DeniedBy = nil
	st.Spec.Approvals = &v1alpha1.Approvals{Required: &two, Entries: []v1alpha1.ApprovalEntry{{Digest: digest, ApprovedBy: "alice"}}}
	b := &fakeBackend{stacks: []v1alpha1.Stack{st}, plan: samplePlan(), canApprove: true, user: "alice"}
	_, ts := newTestServer(t, b)
	_, body := get(t, ts, "/stacks/shop/web", true)
	text := html.UnescapeString(body)
	if strings.Contains(body, `action="/stacks/shop/web/approve"`) || !strings.Contains(body, `id="approve" disabled`) {
		t.Errorf("alice approved already, and Approve is enabled for her:\n%s", body)
	}
	if want := "You (alice) approved plan " + trimDigest(digest); !strings.Contains(text, want) || !strings.Contains(text, "1 more approval by another user") {
		t.Errorf("the page does not say why Approve is disabled (%q):\n%s", want, text)
	}
	b.user = "bob"
	_, body = get(t, ts, "/stacks/shop/web", true)
	if !strings.Contains(body, `action="/stacks/shop/web/approve"`) {
		t.Errorf("bob may approve, and Approve is disabled for him:\n%s", body)
	}
}

// A Pipeline's stage approved already (by this user or another) waits for
// the controller, not for another approval: Approve is disabled, saying so.
func TestApproveStageDisabledOnceApproved(t *testing.T) {
	p := v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: v1alpha1.PipelineSpec{Stages: []v1alpha1.Stage{{Name: "production", Approval: v1alpha1.ApprovalManual}},
			Approvals: []v1alpha1.StageApproval{{Stage: "production", Digest: digest, ApprovedBy: "alice"}}},
		Status: v1alpha1.PipelineStatus{Stages: []v1alpha1.StageStatus{{Name: "production", Phase: v1alpha1.PhaseAwaitingApproval, Digest: digest}}},
	}
	b := &fakeBackend{pipelines: []v1alpha1.Pipeline{p}, canApprove: true, user: "alice"}
	_, ts := newTestServer(t, b)
	_, body := get(t, ts, "/pipelines/shop/web", true)
	if strings.Contains(body, `action="/pipelines/shop/web/approve"`) {
		t.Errorf("the stage is approved, and Approve is enabled:\n%s", body)
	}
	if text := html.UnescapeString(body); !strings.Contains(text, "approved by alice") {
		t.Errorf("the page does not say who approved the stage:\n%s", text)
	}
}

// A user who may list Stacks neither in all namespaces nor in the
// kubeconfig's starts in the namespaces where they may, with no error; one
// who may list them nowhere we can find is asked for a namespace.
func TestStacksPageStartsWhereTheUserMayList(t *testing.T) {
	b := &fakeBackend{
		stacks:   []v1alpha1.Stack{stack("team-a", "web", "True", "Applied", nil), stack("ops", "mon", "True", "Applied", nil)},
		mayList:  map[string]bool{"team-a": true},
		listable: []string{"team-a"},
	}
	s, err := New(Options{Backend: b, Token: "secret-token", Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, s)
	resp, body := get(t, ts, "/stacks", true)
	if resp.StatusCode != http.StatusOK || strings.Contains(body, `class="error"`) || !strings.Contains(body, `data-stack="team-a/web"`) || strings.Contains(body, `data-stack="ops/mon"`) {
		t.Fatalf("%d: not team-a's Stacks alone, or an error:\n%s", resp.StatusCode, body)
	}
	if !strings.Contains(html.UnescapeString(body), "namespace team-a") {
		t.Errorf("the page does not say which namespace it shows:\n%s", body)
	}

	b.listable = nil // the user may not list Namespaces either
	resp, body = get(t, ts, "/stacks", true)
	text := html.UnescapeString(body)
	if resp.StatusCode != http.StatusOK || strings.Contains(body, `class="error"`) || !strings.Contains(text, "nor in namespace default") || !strings.Contains(text, "convoy ui -n NAMESPACE") {
		t.Fatalf("%d: the page does not ask for a namespace:\n%s", resp.StatusCode, text)
	}
	if !strings.Contains(body, `<input name="ns"`) {
		t.Errorf("no field to name a namespace:\n%s", body)
	}
	// Named: that namespace's Stacks.
	if resp, body := get(t, ts, "/stacks?ns=team-a", true); resp.StatusCode != http.StatusOK || !strings.Contains(body, `data-stack="team-a/web"`) {
		t.Fatalf("?ns=team-a: %d\n%s", resp.StatusCode, body)
	}
}

// Release records are Secrets, which neither convoy-approver nor view
// reads: the History says which access would show them and what the
// Stack's status records, not the API server's refusal.
func TestHistoryWithoutSecrets(t *testing.T) {
	b := &fakeBackend{stacks: []v1alpha1.Stack{stack("shop", "web", "True", "Applied", nil)}, plan: samplePlan(),
		historyErr: apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New(`User "alice" cannot list resource "secrets" in API group "" in the namespace "shop"`))}
	_, ts := newTestServer(t, b)
	_, body := get(t, ts, "/stacks/shop/web", true)
	text := html.UnescapeString(body)
	if strings.Contains(text, "secrets is forbidden") {
		t.Errorf("the History shows the API server's refusal:\n%s", text)
	}
	for _, want := range []string{"list on secrets in namespace shop", "revision 2 deployed"} {
		if !strings.Contains(text, want) {
			t.Errorf("the History does not say %q:\n%s", want, text)
		}
	}
}

// The History reads the records where the Stack's spec.storage keeps
// them (ConfigMaps), says where to look when they are in SQL, and says
// that a stack whose own storage block keeps them elsewhere has none in
// the driver read, rather than showing an empty history.
func TestHistoryOfStorageOutsideSecrets(t *testing.T) {
	for _, tt := range []struct {
		name      string
		storage   string
		noRecords bool
		driver    release.StorageDriver
		want      []string
	}{
		{name: "configmap", storage: "configmap", driver: release.DriverConfigMap, want: []string{"Upgrade complete"}},
		{name: "sql", storage: "sql", driver: release.DriverSQL, want: []string{"kept in the Stack's SQL storage", "HELM_DRIVER=sql helm history", "revision 2 deployed"}},
		{name: "a storage block elsewhere", noRecords: true, driver: release.DriverSecret, want: []string{"No record of", "in the secret storage", "revision 2 deployed"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := stack("shop", "web", "True", "Applied", nil)
			if tt.storage != "" {
				st.Spec.Storage = &v1alpha1.StorageSpec{Driver: tt.storage}
			}
			b := &fakeBackend{stacks: []v1alpha1.Stack{st}, plan: samplePlan(), noRecords: tt.noRecords}
			_, ts := newTestServer(t, b)
			_, body := get(t, ts, "/stacks/shop/web", true)
			text := html.UnescapeString(body)
			if b.historyDriver != tt.driver {
				t.Errorf("History read driver %s, want %s", b.historyDriver, tt.driver)
			}
			for _, want := range tt.want {
				if !strings.Contains(text, want) {
					t.Errorf("the History does not say %q:\n%s", want, text)
				}
			}
		})
	}
}
