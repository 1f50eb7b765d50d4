package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/controller/planstore"
	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// uiCanary is a sensitive value of the browser test's stack: no page, no
// response body and no DOM may hold it.
const uiCanary = "hunter2-ui-canary"

// uiStack is three releases, db → api → front: db's message sensitive,
// api of the impact chart (a Deployment "web" of 3 replicas) whose image
// the version sets, and a policy that denies more than one replica.
func uiStack(ns, version string) string {
	image := map[string]string{"v1": "nginx:1.27", "v2": "nginx:1.28"}[version]
	return fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
variable "token" {
  sensitive = true
  default   = %[2]q
}
release "db" {
  chart  = "../../charts/app"
  values = [{ message = var.token }]
}
release "api" {
  chart      = "../../charts/impact"
  depends_on = [release.db]
  values     = [{ image = %[3]q, pvc = false }]
}
release "front" {
  chart  = "../../charts/app"
  values = [{ message = "front", db = release.api.name }]
}
policy "one_replica" {
  level     = "deny"
  condition = "object.kind != 'Deployment' || object.after == null || object.after.spec.replicas < 2"
  message   = "no more than one replica here"
}
`, ns, uiCanary, image)
}

// browser starts a headless Chromium (Debian's package) for t.
func browser(t *testing.T) context.Context {
	t.Helper()
	devtest.SkipShort(t, "chromium")
	bin, err := devcluster.LocateChromium(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The browser lives as long as the context of the first Run: start it
	// here, so that each step may have a timeout of its own.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	return ctx
}

// startUI runs convoy ui with args until the test ends and returns the URL
// it printed.
func startUI(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, append([]string{"ui", "--no-browser"}, args...), streams{In: strings.NewReader(""), Out: &out, Err: &out})
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("convoy ui exit %d\n%s", code, out.String())
		}
	})
	re := regexp.MustCompile(`Open: (http://\S+)`)
	if !poll(30*time.Second, func() bool { return re.MatchString(out.String()) }) {
		t.Fatalf("convoy ui printed no URL:\n%s", out.String())
	}
	return re.FindStringSubmatch(out.String())[1]
}

// screenshot writes the page as PNG into $CONVOY_UI_SCREENSHOTS (docs/ui/
// holds the ones docs/ui.md shows), else a temporary directory.
func screenshot(t *testing.T, name string) chromedp.Action[chromedp.Void] {
	dir := os.Getenv("CONVOY_UI_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		png, err := chromedp.FullScreenshot(100)(ctx, tg) // 100: PNG
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	})
}

// browse runs a browser action, failing t on error.
func browse[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%v; the page:\n%s", err, pageHTML(ctx))
	}
	return v
}

// pageHTML is the current page's HTML, for failure messages.
func pageHTML(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	return html
}

// do runs browser steps in order, failing t on error.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%v; the page:\n%s", err, pageHTML(ctx))
	}
}

func attr(t *testing.T, ctx context.Context, sel, name string) string {
	t.Helper()
	return browse(t, ctx, chromedp.AttributeValue(sel, name)).Value
}

// viewerKubeconfig is a kubeconfig of a service account that may read the
// Stacks of ns, their plan ConfigMaps and events, but neither patch a
// Stack nor read a Secret.
func viewerKubeconfig(t *testing.T, ns string) string {
	t.Helper()
	return roleKubeconfig(t, ns, "viewer", []rbacv1.PolicyRule{
		{APIGroups: []string{"convoy.dev"}, Resources: []string{"stacks", "pipelines"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps", "events"}, Verbs: []string{"get", "list"}},
	})
}

// roleKubeconfig is a kubeconfig of a new service account sa of ns,
// bound to a Role of ns with rules: what it may do anywhere else is
// nothing.
func roleKubeconfig(t *testing.T, ns, sa string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	kube := cluster.Client()
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: sa}, Rules: rules}
	if _, err := kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: sa},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: sa},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}}}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	admin := cluster.RESTConfig()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["dev"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts[sa] = &clientcmdapi.Context{Cluster: "dev", AuthInfo: sa, Namespace: ns}
	cfg.CurrentContext = sa
	path := filepath.Join(t.TempDir(), sa+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// poll calls ok until it holds (true) or timeout passes (false).
func poll(timeout time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
	return true
}

// uiBody GETs url with the session cookie of token and returns the body.
func uiBody(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" { // the cookie the first visit sets: named after the port
		req.AddCookie(&http.Cookie{Name: "convoy-ui-" + req.URL.Port(), Value: token})
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// convoy ui in a real Chromium, against the devcluster and a running
// controller: the pages a person reads before approving, and Approve.
func TestUIInABrowser(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	chrome := browser(t)
	reg := sourcetest.StartRegistry(t, "", "")
	root := t.TempDir()
	copyTree(t, appChart(t), filepath.Join(root, "charts", "app"))
	copyTree(t, filepath.Join("testdata", "charts", "impact"), filepath.Join(root, "charts", "impact"))
	dir := filepath.Join(root, "stacks", "shop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	push := func(version string) string {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(uiStack(ns, version)), 0o644); err != nil {
			t.Fatal(err)
		}
		ref := "oci://" + reg.Host + "/stacks/shop:" + version
		if code, out, errOut := runConvoy(t, "push", dir, ref); code != 0 {
			t.Fatalf("push: exit %d\n%s\n%s", code, out, errOut)
		}
		return ref
	}
	ref := push("v1")
	// --min-interval 1s: the CRDs are the shared cluster's, and other tests' Stacks have intervals of seconds.
	if code, out, errOut := runConvoy(t, "controller", "install", "--kubeconfig", kc, "--min-interval", "1s"); code != 0 {
		t.Fatalf("controller install: exit %d\n%s\n%s", code, out, errOut)
	}
	c, err := ctl.NewClient(cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	hour := &metav1.Duration{Duration: time.Hour}
	for _, st := range []*v1alpha1.Stack{
		{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns}, Spec: v1alpha1.StackSpec{Source: ref, Approval: v1alpha1.ApprovalManual, Interval: hour}},
		{ObjectMeta: metav1.ObjectMeta{Name: "broken", Namespace: ns}, Spec: v1alpha1.StackSpec{Source: "oci://" + reg.Host + "/stacks/missing:v1", Interval: hour}},
	} {
		if err := c.Create(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	ctlLog := runControllerCLI(t, kc, ns, false)
	stackNow := func(name string) *v1alpha1.Stack {
		var st v1alpha1.Stack
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &st); err != nil {
			t.Fatal(err)
		}
		return &st
	}
	waitStack := func(name, what string, ok func(*v1alpha1.Stack) bool) {
		t.Helper()
		if !poll(90*time.Second, func() bool { return ok(stackNow(name)) }) {
			t.Fatalf("Stack %s not %s: %+v\ncontroller log:\n%s", name, what, stackNow(name).Status, ctlLog.String())
		}
	}
	waitStack("shop", "planned and denied", func(st *v1alpha1.Stack) bool {
		return st.Status.Plan != nil && st.Status.Plan.HasChanges && len(st.Status.Plan.DeniedBy) == 1
	})
	waitStack("broken", "failing", func(st *v1alpha1.Stack) bool { return st.Status.LastError != "" })

	url := startUI(t, "--kubeconfig", kc)
	base, token, _ := strings.Cut(url, "/stacks?token=")
	if code, body := uiBody(t, base+"/stacks", ""); code != http.StatusUnauthorized || strings.Contains(body, "shop") {
		t.Fatalf("a request without the token: %d %q", code, body)
	}
	viewerURL := startUI(t, "--kubeconfig", viewerKubeconfig(t, ns))
	viewerBase, viewerToken, _ := strings.Cut(viewerURL, "/stacks?token=")

	// The Stacks page: both Stacks, each in its state.
	do(t, chrome, chromedp.Navigate(url), chromedp.WaitVisible(`tr[data-stack="`+ns+`/broken"]`), screenshot(t, "stacks"))
	shopState := attr(t, chrome, `tr[data-stack="`+ns+`/shop"]`, "data-state")
	brokenState := attr(t, chrome, `tr[data-stack="`+ns+`/broken"]`, "data-state")
	brokenReason := browse(t, chrome, chromedp.Text(`tr[data-stack="`+ns+`/broken"] .reason`))
	broken := stackNow("broken")
	if shopState != "not-ready" || (brokenState != "stalled" && brokenState != "not-ready" && brokenState != "reconciling") || brokenReason == "" {
		t.Fatalf("states: shop %q (want not-ready: awaiting approval), broken %q %q (its conditions: %+v)", shopState, brokenState, brokenReason, broken.Status.Conditions)
	}

	// The Stack page: the denial, the masked value, the graph.
	shop := stackNow("shop")
	digest := shop.Status.Plan.Digest
	do(t, chrome, chromedp.Navigate(base+"/stacks/"+ns+"/shop"), chromedp.WaitVisible(`section.plan`), screenshot(t, "stack-install"))
	shownDigest := attr(t, chrome, `section.plan`, "data-digest")
	denial := browse(t, chrome, chromedp.Text(`li.policy-deny[data-policy="one_replica"]`))
	nodes := browse(t, chrome, chromedp.Evaluate[int](`document.querySelectorAll('svg.graph g.node').length`))
	page := browse(t, chrome, chromedp.OuterHTML(`html`))
	if shownDigest != digest || !strings.Contains(denial, "no more than one replica here") || nodes != 3 {
		t.Fatalf("the Stack page: digest %q (want %q), denial %q, %d graph nodes (want 3)", shownDigest, digest, denial, nodes)
	}
	if strings.Contains(page, uiCanary) || !strings.Contains(page, `message: (sensitive)`) {
		t.Fatalf("the DOM holds the sensitive value, or does not say it is masked:\n%s", page)
	}
	for _, u := range []string{base + "/stacks", base + "/stacks/" + ns + "/shop", base + "/stacks/" + ns + "/broken"} {
		if code, body := uiBody(t, u, token); code != http.StatusOK || strings.Contains(body, uiCanary) {
			t.Fatalf("GET %s: %d, canary in the body: %v", u, code, strings.Contains(body, uiCanary))
		}
	}

	// Without the right to patch the Stack, Approve is disabled and says
	// why; without the right to read its Secret, the plan's masked text.
	do(t, chrome, chromedp.Navigate(viewerURL), chromedp.WaitVisible(`tr[data-stack="`+ns+`/shop"]`),
		chromedp.Navigate(viewerBase+"/stacks/"+ns+"/shop"), chromedp.WaitVisible(`#approve`), screenshot(t, "stack-viewer"))
	disabled := browse(t, chrome, chromedp.Evaluate[bool](`document.querySelector('#approve').disabled`))
	why := browse(t, chrome, chromedp.Text(`.why-not`))
	page = browse(t, chrome, chromedp.OuterHTML(`html`))
	if !disabled || !strings.Contains(why, "you may not patch stacks.convoy.dev in namespace "+ns) {
		t.Fatalf("the viewer's Approve: disabled %v, reason %q", disabled, why)
	}
	if strings.Contains(page, uiCanary) || !strings.Contains(page, "from the plan ConfigMap") {
		t.Fatal("the viewer's page: the canary, or no masked plan text")
	}
	if code, body := uiBody(t, viewerBase+"/stacks/"+ns+"/shop", viewerToken); code != http.StatusOK || strings.Contains(body, uiCanary) {
		t.Fatalf("the viewer's page: %d, canary %v", code, strings.Contains(body, uiCanary))
	}

	// Approve, overriding the named policy: exactly the digest shown.
	do(t, chrome, chromedp.Navigate(base+"/stacks/"+ns+"/shop"), chromedp.WaitVisible(`#approve-override`),
		chromedp.Click(`#approve-override`), chromedp.WaitVisible(`.flash`))
	if flash := browse(t, chrome, chromedp.Text(`.flash`)); flash != "Approved "+digest+", overriding one_replica" {
		t.Fatalf("after Approve: %q", flash)
	}
	if st := stackNow("shop"); st.Spec.ApprovedPlan != digest || len(st.Spec.AllowPolicies) != 1 || st.Spec.AllowPolicies[0] != "one_replica" {
		t.Fatalf("spec after Approve: approvedPlan %q allowPolicies %v, want %s [one_replica]", st.Spec.ApprovedPlan, st.Spec.AllowPolicies, digest)
	}
	waitStack("shop", "applied", func(st *v1alpha1.Stack) bool {
		return st.Status.LastAppliedPlan == digest && len(st.Status.Releases) == 3
	})
	do(t, chrome, chromedp.Navigate(base+"/stacks"), chromedp.WaitVisible(`tr[data-stack="`+ns+`/shop"][data-state="ready"]`), screenshot(t, "stacks"))

	// An upgrade: api's pods roll (a new image), and the page says so as
	// the CLI does.
	ref2 := push("v2")
	st := stackNow("shop")
	st.Spec.Source = ref2
	if err := c.Update(ctx, st); err != nil {
		t.Fatal(err)
	}
	waitStack("shop", "planned again", func(st *v1alpha1.Stack) bool {
		return st.Status.Plan != nil && st.Status.Plan.Digest != digest && st.Status.Plan.HasChanges
	})
	text, err := planstore.StoredPlanText(ctx, c, stackNow("shop"))
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`impact: Deployment web rolls[^\n]*`).FindString(text)
	if want == "" {
		t.Fatalf("the CLI's text of the upgrade has no impact line for api:\n%s", text)
	}
	do(t, chrome, chromedp.Navigate(base+"/stacks/"+ns+"/shop"), chromedp.WaitVisible(`details[data-release="release.api"] .impact`), screenshot(t, "stack"))
	if impact := browse(t, chrome, chromedp.Text(`details[data-release="release.api"] .impact`)); impact != want {
		t.Fatalf("the impact line: %q, the CLI's: %q", impact, want)
	}
}
