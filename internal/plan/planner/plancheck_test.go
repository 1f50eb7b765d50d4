package planner_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func transformChart(t *testing.T) string { return chartPath(t, "testdata", "charts", "transform") }

// transformed lists what the transform chart renders a secret to.
func transformed(secret string) []string {
	b64 := base64.StdEncoding.EncodeToString([]byte(secret))
	sum := sha256.Sum256([]byte(secret))
	sha := hex.EncodeToString(sum[:])
	return []string{secret, b64, strings.ToUpper(secret), secret[:9], base64.StdEncoding.EncodeToString([]byte(b64)), sha, sha[:16]}
}

func assertAbsent(t *testing.T, what string, secrets []string, outputs ...string) {
	t.Helper()
	for _, s := range secrets {
		for _, leak := range transformed(s) {
			for _, o := range outputs {
				if strings.Contains(o, leak) {
					t.Fatalf("%s leaks %q (from %q):\n%s", what, leak, s, o)
				}
			}
		}
	}
}

func transformStack(chart, ns, extra string) string {
	return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
variable "secret" {
  type      = string
  sensitive = true
}
release "t" {
  chart         = %[1]q
  set_sensitive = { secret = var.secret }
  %[3]s
}
`, chart, ns, extra)
}

// jsonChanges maps "Kind path" to whether the change is masked.
func jsonChanges(t *testing.T, js string) map[string]bool {
	t.Helper()
	var doc struct {
		Releases []struct {
			Objects []struct {
				Kind    string `json:"kind"`
				Changes []struct {
					Path      string `json:"path"`
					Sensitive bool   `json:"sensitive"`
				} `json:"changes"`
			} `json:"objects"`
		} `json:"releases"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, js)
	}
	out := map[string]bool{}
	for _, r := range doc.Releases {
		for _, o := range r.Objects {
			for _, c := range o.Changes {
				out[o.Kind+" "+c.Path] = c.Sensitive
			}
		}
	}
	return out
}

// TestSecretsThroughTemplateFunctionsAreMasked: upper, trunc, b64enc |
// b64enc and sha256sum of a sensitive value appear in no output of an
// install or an upgrade plan; fields that only change between renders
// (randAlphaNum) are not taken for secrets.
func TestSecretsThroughTemplateFunctionsAreMasked(t *testing.T) {
	const now, old = "canary-7f3a9c2e-do-not-print", "oldcanary-1111aaaa"
	m := newMem(t, transformStack(transformChart(t), "shop", ""))

	m.vars = map[string]string{"secret": now}
	p := m.mustPlan(nil, planner.ObserveContent)
	text, js, md := render(t, p)
	assertAbsent(t, "install plan", []string{now}, text, js, md)
	for _, d := range transformed(now)[2:] {
		if !slices.Contains(p.Release("release.t").Sensitive, d) && !strings.Contains(d, now) {
			t.Errorf("%q is not among the release's sensitive strings, which apply masks its errors with", d)
		}
	}

	m.vars = map[string]string{"secret": old}
	m.deploy()
	m.vars = map[string]string{"secret": now}
	p = m.mustPlan(nil, planner.ObserveContent)
	text, js, md = render(t, p)
	assertAbsent(t, "upgrade plan", []string{now, old}, text, js, md)
	masked := jsonChanges(t, js)
	for _, path := range []string{"data.upper", "data.trunc", "data.twice", "data.sha", `metadata.annotations["checksum/secret"]`} {
		if s, ok := masked["ConfigMap "+path]; !ok || !s {
			t.Errorf("%s: in the diff %v, masked %v", path, ok, s)
		}
	}
	for _, path := range []string{"data.random", "data.revision", "data.length"} {
		if s, ok := masked["ConfigMap "+path]; !ok || s {
			t.Errorf("%s: in the diff %v, masked %v (it does not depend on the secret)", path, ok, s)
		}
	}
	if !strings.Contains(text, `~ data.upper: (sensitive)`) {
		t.Errorf("text:\n%s", text)
	}
}

// TestPlanRejectsAnInvalidNewObject: a new object the API server refuses
// fails the plan, naming the template and the object, also in a namespace
// create_namespace creates; nothing is created.
func TestPlanRejectsAnInvalidNewObject(t *testing.T) {
	ns := cluster.Namespace(t)
	fresh := ns + "-new"
	t.Cleanup(func() {
		_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), fresh, metav1.DeleteOptions{})
	})
	extra := fmt.Sprintf("namespace = %q\n  create_namespace = true\n  values = [{ badName = true }]", fresh)
	e := newEnv(t, transformStack(transformChart(t), ns, extra))
	_, err := e.plan(map[string]string{"secret": "s3cret-value"}, nil, false)
	if err == nil {
		t.Fatal("plan of an invalid object succeeded")
	}
	for _, want := range []string{"release.t: ", "template transform/templates/bad-name.yaml", "v1 ConfigMap " + fresh + "/Bad_Name!!", "metadata.name: Invalid value"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if _, err := cluster.Client().CoreV1().Namespaces().Get(context.Background(), fresh, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("namespace %s: %v", fresh, err)
	}

	// Valid objects in the namespace the release creates plan as creates,
	// without warnings.
	writeStack(t, e.dir, transformStack(transformChart(t), ns, fmt.Sprintf("namespace = %q\n  create_namespace = true", fresh)))
	p := e.mustPlan(map[string]string{"secret": "s3cret-value"})
	r := p.Release("release.t")
	if r.Action != plan.ActionInstall || len(r.Objects) != 1 || r.Objects[0].Action != plan.ObjectCreate || len(r.Warnings) != 0 {
		t.Fatalf("release: %s %+v warnings %q", r.Action, r.Objects, r.Warnings)
	}
	// Without create_namespace, apply depends on someone else creating it.
	writeStack(t, e.dir, transformStack(transformChart(t), ns, fmt.Sprintf("namespace = %q", fresh)))
	p = e.mustPlan(map[string]string{"secret": "s3cret-value"})
	if w := p.Release("release.t").Warnings; len(w) != 1 || !strings.Contains(w[0], "namespace "+fresh+" does not exist") {
		t.Fatalf("warnings: %q", w)
	}
}

// TestMemPlanRejectsAnInvalidNewObject: a new object the dry run refuses
// (its name) fails the plan, naming the template and the object; nothing
// is created. TestPlanRejectsAnInvalidNewObject proves it of the API
// server, with the namespaces it refuses objects in.
func TestMemPlanRejectsAnInvalidNewObject(t *testing.T) {
	m := newMem(t, transformStack(transformChart(t), "shop", "values = [{ badName = true }]"))
	m.vars = map[string]string{"secret": "s3cret-value"}
	_, err := m.plan(nil, planner.ObserveContent)
	if err == nil {
		t.Fatal("plan of an invalid object succeeded")
	}
	for _, want := range []string{"release.t: ", "template transform/templates/bad-name.yaml", "v1 ConfigMap shop/Bad_Name!!", "metadata.name: Invalid value"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if live, err := m.v.Live(context.Background(), ref("", "v1", "ConfigMap", "shop", "Bad_Name!!")); live != nil || err != nil {
		t.Fatalf("the invalid object is live: %v", err)
	}
	assertAbsent(t, "error", []string{"s3cret-value"}, err.Error())
}

// TestPlanReportsARecordTooLargeToStore: a chart whose release record
// exceeds what a Secret holds fails the plan with the size and the limit.
func TestPlanReportsARecordTooLargeToStore(t *testing.T) {
	chart := filepath.Join(t.TempDir(), "big")
	blob := make([]byte, 1200<<10)
	if _, err := rand.Read(blob); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"Chart.yaml":          "apiVersion: v2\nname: big\nversion: 0.1.0\n",
		"templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  size: {{ len (.Files.Get \"files/blob\") | quote }}\n",
		"files/blob":          base64.StdEncoding.EncodeToString(blob),
		"templates/NOTES.txt": "big\n",
	} {
		path := filepath.Join(chart, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := newMem(t, fmt.Sprintf("stack \"shop\" {\n  default_namespace = \"shop\"\n}\nrelease \"big\" {\n  chart = %q\n}\n", chart))
	_, err := m.plan(nil, planner.ObserveContent)
	if err == nil {
		t.Fatal("plan of an oversized release succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, "release.big: release big revision 1 in namespace shop: the release record would be ") || !strings.Contains(msg, fmt.Sprintf("more than the %d bytes (1.0 MiB) a Secret holds", release.MaxRecordBytes)) {
		t.Fatalf("error does not name the size and the limit: %v", err)
	}
	// The ways out: SQL storage, or the chart's heaviest part.
	if !strings.Contains(msg, `storage { driver = "sql" }`) || !strings.Contains(msg, "heaviest parts are the chart's files/blob (1.6 MiB)") {
		t.Fatalf("error does not say the way out: %v", err)
	}
}
