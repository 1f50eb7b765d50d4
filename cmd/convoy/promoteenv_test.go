package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// promoteStack is a stack of two environments: web from a chart
// repository, its greeting the environment's; reader, the same chart, its
// values known only once web is applied; worker from a local chart, whose
// pods never get Ready in staging (its install fails there).
func promoteStack(repoURL, chartPath, base string) string {
	return fmt.Sprintf(`
stack "promo" {}
variable "message" {
  type = string
}
variable "worker_broken" {
  type    = bool
  default = false
}
environment "staging" {
  vars = { message = "hello staging", worker_broken = true }
}
environment "production" {
  vars = { message = "hello production" }
}
repository "charts" {
  url = %q
}
release "web" {
  chart            = "charts/web"
  version          = ">=1.0.0"
  namespace        = "%[3]s-${environment.name}"
  create_namespace = true
  values           = [{ greeting = var.message }]
}
release "reader" {
  chart            = "charts/web"
  version          = ">=1.0.0"
  namespace        = "%[3]s-${environment.name}"
  values           = [{ greeting = "after web revision ${release.web.revision}" }]
}
release "worker" {
  chart            = %[2]q
  namespace        = "%[3]s-${environment.name}"
  create_namespace = true
  timeout          = "3s"
  values           = [{ neverReady = var.worker_broken }]
}
`, repoURL, chartPath, base)
}

// TestPromoteBetweenEnvironments is item 4 of issue 27: production gets
// exactly the chart staging deployed (1.0.0, though the lock file has
// moved to 1.1.0) with production's own values, through a saved plan that
// convoy apply applies; the records name the source; a release staging
// failed is refused with its address; --auto-approve applies directly.
func TestPromoteBetweenEnvironments(t *testing.T) {
	base := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	t.Setenv("CONVOY_CACHE_DIR", filepath.Join(t.TempDir(), "charts"))
	t.Setenv("CONVOY_ENV", "")
	repo := sourcetest.NewHTTPRepo(t, false)
	repo.Publish(t, "web", "1.0.0")
	dir := writeStack(t, promoteStack(repo.URL(), appChart(t), base))
	for _, env := range []string{"staging", "production"} {
		ns := base + "-" + env
		t.Cleanup(func() {
			_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		})
	}
	staging, production := base+"-staging", base+"-production"
	must := func(what string, want int, args ...string) (string, string) {
		t.Helper()
		code, out, errOut := runConvoy(t, args...)
		if code != want {
			t.Fatalf("%s: exit %d, want %d\n%s\n%s", what, code, want, out, errOut)
		}
		return out, errOut
	}
	must("init", 0, "init", "-C", dir, "--env", "staging")
	// staging: web deployed at 1.0.0, worker failed (never Ready).
	must("apply staging", 1, "apply", "-C", dir, "--kubeconfig", kc, "--env", "staging", "--auto-approve", "--no-progress")
	if got := revisions(statusOf(t, staging, "web")); got != "1:deployed" {
		t.Fatalf("staging web: %s", got)
	}
	if got := revisions(statusOf(t, staging, "reader")); got != "1:deployed" {
		t.Fatalf("staging reader: %s", got)
	}
	if got := revisions(statusOf(t, staging, "worker")); got != "1:failed" {
		t.Fatalf("staging worker: %s", got)
	}

	// A newer chart is published and locked: the stack would now install
	// 1.1.0, but staging has deployed 1.0.0.
	repo.Publish(t, "web", "1.1.0")
	must("init --upgrade", 0, "init", "-C", dir, "--env", "staging", "--upgrade")

	// The failed worker refuses the promotion, named with its status.
	_, errOut := must("promote with a failed source", 1, "promote", "--from-env", "staging", "--to-env", "production", "-C", dir, "--kubeconfig", kc)
	for _, want := range []string{"release.worker", "failed at revision 1", staging + "/worker", "--allow-missing"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "release.web") {
		t.Errorf("the refusal names web, which staging deployed:\n%s", errOut)
	}
	if h := statusOf(t, production, "web"); len(h) != 0 {
		t.Fatalf("a refused promotion wrote %s", revisions(h))
	}

	// --allow-missing leaves worker out; the plan is saved, not applied.
	planFile := filepath.Join(t.TempDir(), "promote.plan")
	out, errOut := must("promote --out", 0, "promote", "--from-env", "staging", "--to-env", "production", "-C", dir, "--kubeconfig", kc, "--allow-missing", "--out", planFile, "--no-color")
	if !strings.Contains(out, "chart: web 1.0.0 promoted from staging (revision 1)") || strings.Contains(out, "1.1.0") {
		t.Errorf("the plan does not promote web 1.0.0 from staging:\n%s", out)
	}
	if !strings.Contains(out, `environment "production"`) || strings.Contains(out, "worker") {
		t.Errorf("the plan is not production's web and reader:\n%s", out)
	}
	if !strings.Contains(errOut, "Left out (--allow-missing): release.worker") || !strings.Contains(errOut, "convoy apply") {
		t.Errorf("stderr:\n%s", errOut)
	}
	if h := statusOf(t, production, "web"); len(h) != 0 {
		t.Fatalf("promote without --auto-approve wrote %s", revisions(h))
	}
	must("apply the saved promotion", 0, "apply", "--kubeconfig", kc, planFile, "--no-progress")
	h := statusOf(t, production, "web")
	if revisions(h) != "1:deployed" || h[0].Chart.Metadata.Version != "1.0.0" {
		t.Fatalf("production web: %s, chart %s", revisions(h), h[0].Chart.Metadata.Version)
	}
	if d := h[0].Info.Description; !strings.Contains(d, "Promoted from staging revision 1") {
		t.Errorf("the record's description does not name the source: %q", d)
	}
	if hist, err := cluster.Helm(t, "history", "web", "-n", production); err != nil || !strings.Contains(hist, "Install complete (Promoted from staging revision 1)") {
		t.Errorf("helm history does not show the promotion: %v\n%s", err, hist)
	}
	// reader was rendered at apply (its values read web's revision), with
	// staging's chart too.
	h = statusOf(t, production, "reader")
	if revisions(h) != "1:deployed" || h[0].Chart.Metadata.Version != "1.0.0" || !strings.Contains(h[0].Info.Description, "Promoted from staging revision 1") {
		t.Fatalf("production reader: %s, chart %s, %q", revisions(h), h[0].Chart.Metadata.Version, h[0].Info.Description)
	}
	if !strings.Contains(out, "reader") || !strings.Contains(out, "known after apply") {
		t.Errorf("the plan does not render reader at apply:\n%s", out)
	}
	cm, err := cluster.Client().CoreV1().ConfigMaps(production).Get(context.Background(), "web-web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["chartVersion"] != "1.0.0" || cm.Data["greeting"] != "hello production" {
		t.Errorf("production's configmap: %v", cm.Data)
	}
	// The saved plan is spent: applied again, it is refused as stale.
	if code, _, errOut := runConvoy(t, "apply", "--kubeconfig", kc, planFile, "--no-progress"); code != 1 || !strings.Contains(errOut, "the saved plan is stale") || !strings.Contains(errOut, "release web (namespace "+production+") was installed since the plan") {
		t.Errorf("the spent plan: exit %d\n%s", code, errOut)
	}

	// The stack itself (its lock file at 1.1.0) would upgrade production:
	// promotion pins staging's chart, plan follows the lock file.
	out, _ = must("plan production", 2, "plan", "-C", dir, "--kubeconfig", kc, "--env", "production", "--target", "release.web", "--detailed-exitcode", "--no-color")
	if !strings.Contains(out, "web 1.0.0 → web 1.1.0") {
		t.Errorf("plan --env production does not show the lock file's 1.1.0:\n%s", out)
	}

	// A promotion saved now promotes staging's revision 1 (a no-op);
	// once staging moves on, it is refused as stale.
	stalePlan := filepath.Join(t.TempDir(), "stale.plan")
	must("promote --out (no-op)", 0, "promote", "--from-env", "staging", "--to-env", "production", "-C", dir, "--kubeconfig", kc, "--allow-missing", "--out", stalePlan)

	// staging moves to 1.1.0; --auto-approve promotes it at once.
	must("apply staging web", 0, "apply", "-C", dir, "--kubeconfig", kc, "--env", "staging", "--target", "release.web", "--auto-approve", "--no-progress")
	_, errOut = must("apply the stale promotion", 1, "apply", "--kubeconfig", kc, stalePlan, "--no-progress")
	if !strings.Contains(errOut, "the saved plan is stale") || !strings.Contains(errOut, fmt.Sprintf(`release.web: environment "staging"'s release %s/web is at revision 2 now, not 1`, staging)) {
		t.Errorf("the stale promotion:\n%s", errOut)
	}
	out, _ = must("promote --auto-approve", 0, "promote", "--from-env", "staging", "--to-env", "production", "-C", dir, "--kubeconfig", kc, "--allow-missing", "--auto-approve", "--no-progress", "--no-color")
	if !strings.Contains(out, "chart: web 1.0.0 → web 1.1.0 promoted from staging (revision 2)") {
		t.Errorf("the auto-approved plan:\n%s", out)
	}
	h = statusOf(t, production, "web")
	if revisions(h) != "1:superseded 2:deployed" || h[1].Chart.Metadata.Version != "1.1.0" || !strings.Contains(h[1].Info.Description, "Promoted from staging revision 2") {
		t.Fatalf("production web after --auto-approve: %s, %s, %q", revisions(h), h[1].Chart.Metadata.Version, h[1].Info.Description)
	}
	// Now the lock file admits what production runs: no change.
	must("plan production after", 0, "plan", "-C", dir, "--kubeconfig", kc, "--env", "production", "--target", "release.web", "--detailed-exitcode")

	// JSON says where the chart comes from; nothing to do now.
	out, _ = must("promote --json", 0, "promote", "--from-env", "staging", "--to-env", "production", "-C", dir, "--kubeconfig", kc, "--allow-missing", "--json", "--detailed-exitcode")
	var doc struct {
		Releases []struct {
			Address      string `json:"address"`
			Action       string `json:"action"`
			PromotedFrom *struct {
				Environment string `json:"environment"`
				Namespace   string `json:"namespace"`
				Revision    int    `json:"revision"`
				ChartDigest string `json:"chart_digest"`
			} `json:"promoted_from"`
		} `json:"releases"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Releases) != 2 {
		t.Fatalf("releases: %+v", doc.Releases)
	}
	r := doc.Releases[0]
	if pf := r.PromotedFrom; r.Address != "release.web" || r.Action != "no-op" || pf == nil || pf.Environment != "staging" || pf.Namespace != staging || pf.Revision != 2 || !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(pf.ChartDigest) {
		t.Errorf("JSON: %+v %+v", r, r.PromotedFrom)
	}
}

// TestPromoteRefusesBadEnvironments: the same environment twice, an
// unknown one (named with the stack's environment blocks), positional
// arguments and --env are refused before anything is read from a cluster.
func TestPromoteRefusesBadEnvironments(t *testing.T) {
	dir := writeStack(t, `
stack "promo" {}
environment "staging" {}
environment "production" {}
release "web" {
  chart = "./chart"
}
`)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--from-env", "staging", "--to-env", "staging"}, []string{`--from-env and --to-env both name environment "staging"`}},
		// The target environment is the stack's: opening it names what is declared.
		{[]string{"--from-env", "staging", "--to-env", "qa"}, []string{`Unknown environment`, `no environment "qa"`, `"production", "staging"`, "stack.hcl line 4"}},
		{[]string{"--from-env", "dev", "--to-env", "production"}, []string{`--from-env "dev"`}},
		{[]string{"--to-env", "production"}, []string{"needs --from-env and --to-env"}},
		{[]string{"pipe", "stage", "--from-env", "staging", "--to-env", "production"}, []string{`takes no arguments (got "pipe stage")`}},
		{[]string{"pipe"}, []string{"promote takes PIPELINE STAGE", "or --from-env and --to-env"}},
		{[]string{"--digest", "sha256:00", "--from-env", "staging", "--to-env", "production"}, []string{"--digest and --namespace name a Pipeline's stage"}},
		{[]string{"--env", "staging", "--from-env", "staging", "--to-env", "production"}, []string{"not --env"}},
	} {
		args := append([]string{"promote", "-C", dir, "--kubeconfig", "/nonexistent"}, tc.args...)
		code, out, errOut := runConvoy(t, args...)
		if code != 1 {
			t.Errorf("%v: exit %d\n%s\n%s", tc.args, code, out, errOut)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", tc.args, w, errOut)
			}
		}
	}
}

// TestPromoteReadsTheSourceThroughItsClusterBlock: the source
// environment's records are read through its own cluster blocks, which its
// variables point elsewhere than the target's.
func TestPromoteReadsTheSourceThroughItsClusterBlock(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "staging-kubeconfig")
	dir := writeStack(t, fmt.Sprintf(`
stack "promo" {}
variable "kubeconfig" {
  type = string
}
environment "staging" {
  vars = { kubeconfig = %q }
}
environment "production" {
  vars = { kubeconfig = "/nonexistent/production-kubeconfig" }
}
cluster "main" {
  kubeconfig = var.kubeconfig
}
release "web" {
  chart   = "./chart"
  cluster = cluster.main
}
`, missing))
	code, out, errOut := runConvoy(t, "promote", "-C", dir, "--from-env", "staging", "--to-env", "production")
	if code != 1 || !strings.Contains(errOut, `environment "staging": release.web`) || !strings.Contains(errOut, missing) || strings.Contains(errOut, "production-kubeconfig") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestPromoteRefusesASourceNoStackWrote: a release helm installed in the
// source environment is not that environment's deployment to promote.
func TestPromoteRefusesASourceNoStackWrote(t *testing.T) {
	base := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	staging := base + "-staging"
	t.Cleanup(func() {
		_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), staging, metav1.DeleteOptions{})
	})
	if out, err := cluster.Helm(t, "install", "web", appChart(t), "-n", staging, "--create-namespace"); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	dir := writeStack(t, fmt.Sprintf(`
stack "promo" {}
environment "staging" {}
environment "production" {}
release "web" {
  chart     = %q
  namespace = "%s-${environment.name}"
}
`, appChart(t), base))
	code, out, errOut := runConvoy(t, "promote", "-C", dir, "--kubeconfig", kc, "--from-env", "staging", "--to-env", "production")
	want := fmt.Sprintf(`environment "staging": release.web: release %s/web revision 1 was deployed by no convoy stack`, staging)
	if code != 1 || !strings.Contains(errOut, want) {
		t.Fatalf("exit %d, want %q\n%s\n%s", code, want, out, errOut)
	}
}

// TestPromoteAChartWithSubcharts: records lack subcharts, so a chart with
// one is promoted from the stack's own chart when that is the chart the
// source deployed (same version and content), and refused, saying why,
// when it is not.
func TestPromoteAChartWithSubcharts(t *testing.T) {
	base := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	staging, production := base+"-staging", base+"-production"
	for _, ns := range []string{staging, production} {
		t.Cleanup(func() {
			_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		})
	}
	chartDir := filepath.Join(t.TempDir(), "shop")
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(chartDir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	chartYAML := func(version string) string {
		return "apiVersion: v2\nname: shop\nversion: " + version + "\ndependencies:\n  - name: common\n    version: 0.1.0\n    repository: file://charts/common\n"
	}
	write("Chart.yaml", chartYAML("1.0.0"))
	write("values.yaml", "greeting: hello\n")
	write("templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-shop\ndata:\n  greeting: {{ .Values.greeting | quote }}\n")
	write("charts/common/Chart.yaml", "apiVersion: v2\nname: common\nversion: 0.1.0\n")
	write("charts/common/values.yaml", "flavour: plain\n")
	write("charts/common/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-common\ndata:\n  flavour: {{ .Values.flavour | quote }}\n")
	dir := writeStack(t, fmt.Sprintf(`
stack "promo" {}
environment "staging" {}
environment "production" {}
release "shop" {
  chart            = %q
  namespace        = "%s-${environment.name}"
  create_namespace = true
  values           = [{ greeting = "hello ${environment.name}" }]
}
`, chartDir, base))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--env", "staging", "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply staging: exit %d\n%s\n%s", code, out, errOut)
	}
	promote := func() (int, string, string) {
		return runConvoy(t, "promote", "-C", dir, "--kubeconfig", kc, "--from-env", "staging", "--to-env", "production", "--no-color")
	}

	// The chart on disk moved on: refused, saying why.
	write("Chart.yaml", chartYAML("1.1.0"))
	code, _, errOut := promote()
	if code != 1 || !strings.Contains(errOut, `release.shop: the chart shop 1.0.0 that environment "staging" deployed (revision 1) has subcharts`) || !strings.Contains(errOut, "the stack's chart is shop 1.1.0") {
		t.Fatalf("a newer chart on disk: exit %d\n%s", code, errOut)
	}
	// Same version, other templates: refused too.
	write("Chart.yaml", chartYAML("1.0.0"))
	write("templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-shop\ndata:\n  greeting: {{ .Values.greeting | upper | quote }}\n")
	code, _, errOut = promote()
	if code != 1 || !strings.Contains(errOut, "differs from it in its templates") {
		t.Fatalf("other templates: exit %d\n%s", code, errOut)
	}
	// The same chart again: promoted, subchart included.
	write("templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-shop\ndata:\n  greeting: {{ .Values.greeting | quote }}\n")
	code, out, errOut := runConvoy(t, "promote", "-C", dir, "--kubeconfig", kc, "--from-env", "staging", "--to-env", "production", "--no-color", "--auto-approve", "--no-progress")
	if code != 0 || !strings.Contains(out, "chart: shop 1.0.0 promoted from staging (revision 1)") {
		t.Fatalf("promote: exit %d\n%s\n%s", code, out, errOut)
	}
	for name, want := range map[string]string{"shop-shop": "hello production", "shop-common": "plain"} {
		cm, err := cluster.Client().CoreV1().ConfigMaps(production).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := cm.Data["greeting"] + cm.Data["flavour"]; got != want {
			t.Errorf("%s: %v", name, cm.Data)
		}
	}
}
