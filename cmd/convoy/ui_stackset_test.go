package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// fleetCanary is the value of a sensitive variable the StackSet's
// template sets: the StackSet page names the variable, never its value.
const fleetCanary = "hunter2-fleet-ui-canary"

// fleetUIStack is one release per environment (a, b, c), each of its own
// name: three Stacks of one stack side by side in one namespace.
func fleetUIStack(ns string) string {
	return fmt.Sprintf(`
stack "fleetui" {
  default_namespace = %q
}
environment "a" {}
environment "b" {}
environment "c" {}
variable "token" {
  sensitive = true
  default   = "none"
}
release "web" {
  name   = "web-${environment.name}"
  chart  = "../../charts/app"
  values = [{ message = var.token }]
}
`, ns)
}

// The StackSet page in a real Chromium, against the devcluster and a
// running controller: a rolling StackSet of three Stacks, its cells in
// their phases before and after the first step's approval, the grouped
// plan, the links between the StackSet and its Stacks, and a user of
// another namespace who sees none of it.
func TestStackSetPageInABrowser(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	chrome := browser(t)
	reg := sourcetest.StartRegistry(t, "", "")
	root := t.TempDir()
	copyTree(t, appChart(t), filepath.Join(root, "charts", "app"))
	dir := filepath.Join(root, "stacks", "fleetui")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(fleetUIStack(ns)), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := "oci://" + reg.Host + "/stacks/fleetui:live"
	if code, out, errOut := runConvoy(t, "push", dir, ref); code != 0 {
		t.Fatalf("push: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "controller", "install", "--kubeconfig", kc, "--min-interval", "1s"); code != 0 {
		t.Fatalf("controller install: exit %d\n%s\n%s", code, out, errOut)
	}
	c, err := ctl.NewClient(cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	one := int32(1)
	ss := &v1alpha1.StackSet{
		ObjectMeta: metav1.ObjectMeta{Name: "fleetui", Namespace: ns},
		Spec: v1alpha1.StackSetSpec{
			Generators: []v1alpha1.Generator{{List: []v1alpha1.ListElement{{Name: "a"}, {Name: "b"}, {Name: "c"}}}},
			Template: v1alpha1.StackTemplate{Spec: v1alpha1.StackSpec{
				Source: ref, Environment: "{{element}}", Approval: v1alpha1.ApprovalManual,
				Interval: &metav1.Duration{Duration: 2 * time.Second}, Vars: map[string]string{"token": fleetCanary},
			}},
			Strategy: &v1alpha1.StackSetStrategy{Rolling: &v1alpha1.RollingStrategy{Steps: []v1alpha1.RolloutStep{
				{Name: "canary", Percent: &one}, {Name: "rest"},
			}}},
		},
	}
	if err := c.Create(ctx, ss); err != nil {
		t.Fatal(err)
	}
	ctlLog := runControllerCLI(t, kc, ns, false)
	stackSetNow := func() *v1alpha1.StackSet {
		var s v1alpha1.StackSet
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "fleetui"}, &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	states := func(s *v1alpha1.StackSet) string {
		var out []string
		for _, st := range s.Status.Stacks {
			out = append(out, st.Name+"="+st.State)
		}
		return strings.Join(out, " ")
	}
	waitStackSet := func(what, want string) *v1alpha1.StackSet {
		t.Helper()
		if !poll(3*time.Minute, func() bool { return states(stackSetNow()) == want }) {
			s := stackSetNow()
			t.Fatalf("StackSet not %s: stacks %q (want %q), plans %+v, conditions %+v\ncontroller log:\n%s", what, states(s), want, s.Status.Plans, s.Status.Conditions, ctlLog.String())
		}
		return stackSetNow()
	}
	// The canary step pins fleetui-a, which plans and waits; the rest
	// wait for their step.
	waitStackSet("at the canary step", "fleetui-a=ApprovalRequired fleetui-b=NoSource fleetui-c=NoSource")

	url := startUI(t, "--kubeconfig", kc)
	base, _, _ := strings.Cut(url, "/stacks?token=")
	page := base + "/stacksets/" + ns + "/fleetui"
	cells := func() map[string]string {
		t.Helper()
		return browse(t, chrome, chromedp.Evaluate[map[string]string](
			`Object.fromEntries([...document.querySelectorAll('li.cell')].map(c => [c.dataset.stack, c.closest('[data-step]').dataset.step + ":" + c.dataset.phase]))`))
	}
	groups := func() []string {
		t.Helper()
		return browse(t, chrome, chromedp.Evaluate[[]string](
			`[...document.querySelectorAll('.plan-group')].map(g => g.querySelector('.plan-text').textContent + " | " + [...g.querySelectorAll('.plan-stacks a')].map(a => a.textContent).join(","))`))
	}
	do(t, chrome, chromedp.Navigate(url), chromedp.Navigate(page), chromedp.WaitVisible(`li.cell[data-stack="fleetui-a"]`))
	want := map[string]string{"fleetui-a": "canary:waiting-approval", "fleetui-b": "rest:pending", "fleetui-c": "rest:pending"}
	if got := cells(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("cells %v, want %v", got, want)
	}
	wantGroups := []string{
		"2 Stacks: no source yet (the rollout pins one) | fleetui-b,fleetui-c",
		"1 Stack: 1 to install, 0 to upgrade, 0 to uninstall, 0 unchanged (install release.web) | fleetui-a",
	}
	if got := groups(); fmt.Sprint(got) != fmt.Sprint(wantGroups) {
		t.Fatalf("fleet plan %q, want %q", got, wantGroups)
	}
	if step := browse(t, chrome, chromedp.Text(`.current-step`)); step != "canary" {
		t.Errorf("current step %q, want canary", step)
	}
	if html := browse(t, chrome, chromedp.OuterHTML(`html`)); strings.Contains(html, fleetCanary) || !strings.Contains(html, "<code>token</code>") {
		t.Fatal("the page shows the sensitive variable's value, or does not name it")
	}
	// A cell opens its Stack's page, which links back to the StackSet.
	do(t, chrome, chromedp.Click(`li.cell[data-stack="fleetui-a"] a`), chromedp.WaitVisible(`a.stackset-link`))
	if href := attr(t, chrome, `a.stackset-link`, "href"); href != "/stacksets/"+ns+"/fleetui" {
		t.Errorf("the Stack page's link to its StackSet: %q", href)
	}
	if title := browse(t, chrome, chromedp.Text(`h1`)); title != "Stack "+ns+"/fleetui-a" {
		t.Errorf("the cell opened %q, want Stack %s/fleetui-a", title, ns)
	}

	// Approved, fleetui-a applies; the rest step pins b and c, whose
	// identical plans are one group.
	var a v1alpha1.Stack
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "fleetui-a"}, &a); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.ApproveWith(ctx, c, ns, "fleetui-a", a.Status.Plan.Digest, nil); err != nil {
		t.Fatal(err)
	}
	waitStackSet("at the rest step", "fleetui-a=Ready fleetui-b=ApprovalRequired fleetui-c=ApprovalRequired")
	do(t, chrome, chromedp.Navigate(page), chromedp.WaitVisible(`li.cell[data-stack="fleetui-a"]`), screenshot(t, "stackset"))
	want = map[string]string{"fleetui-a": "canary:ready", "fleetui-b": "rest:waiting-approval", "fleetui-c": "rest:waiting-approval"}
	if got := cells(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("cells %v, want %v", got, want)
	}
	wantGroups = []string{
		"2 Stacks: 1 to install, 0 to upgrade, 0 to uninstall, 0 unchanged (install release.web) | fleetui-b,fleetui-c",
		"1 Stack: no changes | fleetui-a",
	}
	if got := groups(); fmt.Sprint(got) != fmt.Sprint(wantGroups) {
		t.Fatalf("fleet plan %q, want %q", got, wantGroups)
	}
	if href := attr(t, chrome, `.plan-stacks a[data-stack="fleetui-b"]`, "href"); href != "/stacks/"+ns+"/fleetui-b" {
		t.Errorf("the group's link to fleetui-b: %q", href)
	}
	do(t, chrome, chromedp.Navigate(base+"/stacksets"), chromedp.WaitVisible(`tr[data-stackset="`+ns+`/fleetui"]`))

	// A user who may read StackSets and Stacks in another namespace only
	// sees neither this StackSet in the list nor its page.
	other := cluster.Namespace(t)
	otherURL := startUI(t, "--kubeconfig", roleKubeconfig(t, other, "tenant", []rbacv1.PolicyRule{
		{APIGroups: []string{"convoy.dev"}, Resources: []string{"stacks", "stacksets", "pipelines"}, Verbs: []string{"get", "list", "watch"}},
	}))
	otherBase, otherToken, _ := strings.Cut(otherURL, "/stacks?token=")
	if code, body := uiBody(t, otherBase+"/stacksets", otherToken); code != http.StatusOK || strings.Contains(body, "fleetui") {
		t.Errorf("another namespace's user, the StackSets page: %d, shows fleetui: %v", code, strings.Contains(body, "fleetui"))
	}
	if code, body := uiBody(t, otherBase+"/stacksets/"+ns+"/fleetui", otherToken); code != http.StatusForbidden || strings.Contains(body, "fleetui-a") {
		t.Errorf("another namespace's user, the StackSet's page: %d (want 403), shows its Stacks: %v", code, strings.Contains(body, "fleetui-a"))
	}
}
