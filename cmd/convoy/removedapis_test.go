package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rewriteHelmRecord rewrites the manifest of a release's stored revision
// in its Helm Secret, as a record written on an older cluster reads: what
// helm install wrote, with edit applied to the manifest, written in place
// as `kubectl edit` writes (its labels and annotations kept).
func rewriteHelmRecord(t *testing.T, ns, name string, revision int, edit func(string) string) {
	t.Helper()
	ctx := context.Background()
	secrets := cluster.Client().CoreV1().Secrets(ns)
	sec, err := secrets.Get(ctx, fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, revision), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(string(sec.Data["release"]))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var rel map[string]any
	if err := json.Unmarshal(payload, &rel); err != nil {
		t.Fatal(err)
	}
	rel["manifest"] = edit(rel["manifest"].(string))
	if payload, err = json.Marshal(rel); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(payload); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	sec.Data["release"] = []byte(base64.StdEncoding.EncodeToString(gz.Bytes()))
	if _, err := secrets.Update(ctx, sec, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
}

// storedManifest is the manifest of a release's stored revision.
func storedManifest(t *testing.T, ns, name string, revision int) string {
	t.Helper()
	var got string
	rewriteHelmRecord(t, ns, name, revision, func(m string) string { got = m; return m })
	return got
}

// oldPDBRelease installs the pdb chart with the helm oracle as release
// "old" and rewrites its stored revision 1 to name policy/v1beta1, as
// helm install on a cluster older than 1.25 would have stored it; extra
// documents are appended to that manifest. It returns the stack dir of a
// stack of that release, with message "two".
func oldPDBRelease(t *testing.T, ns, extra string) string {
	t.Helper()
	chart := testChart(t, "pdb")
	if out, err := cluster.Helm(t, "install", "old", chart, "-n", ns); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	rewriteHelmRecord(t, ns, "old", 1, func(m string) string {
		if !strings.Contains(m, "apiVersion: policy/v1\n") {
			t.Fatalf("helm's manifest has no policy/v1 PodDisruptionBudget:\n%s", m)
		}
		return strings.Replace(m, "apiVersion: policy/v1\n", "apiVersion: policy/v1beta1\n", 1) + extra
	})
	return writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "old" {
  chart = %[2]q
  set   = { message = "two" }
  adopt = true # installed by helm, not by a stack
}
`, ns, chart))
}

// TestStoredRemovedAPIIsComparedAsSuccessor is issue 40's reproduction: a
// release whose stored revision names policy/v1beta1 PodDisruptionBudget
// (removed in 1.25) is planned as an upgrade compared against policy/v1,
// the plan says so, apply writes revision 2 and leaves revision 1 as it
// was, and helm upgrade and helm rollback then work; so does convoy's
// rollback to revision 1, and helm upgrade after it.
func TestStoredRemovedAPIIsComparedAsSuccessor(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := oldPDBRelease(t, ns, "")
	kc := cluster.Kubeconfig()

	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--no-color")
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("plan:\n%s", out)
	note := "note: stored revision 1 names policy/v1beta1 PodDisruptionBudget, removed in 1.25: compared as policy/v1"
	if strings.Count(out, note) != 1 || strings.Contains(out, "not served") || strings.Contains(out, "not compared") {
		t.Fatalf("plan does not say once that the stored PodDisruptionBudget is compared as policy/v1:\n%s", out)
	}
	if strings.Contains(out, "+ policy/v1 PodDisruptionBudget") {
		t.Fatalf("plan creates the PodDisruptionBudget that exists:\n%s", out)
	}
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--json")
	if code != 0 || !strings.Contains(out, `"from_api_version": "policy/v1beta1"`) || !strings.Contains(out, `"to_api_version": "policy/v1"`) {
		t.Fatalf("plan --json: exit %d, no stored_apis\n%s\n%s", code, out, errOut)
	}

	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if m := storedManifest(t, ns, "old", 1); !strings.Contains(m, "apiVersion: policy/v1beta1\n") {
		t.Errorf("apply rewrote stored revision 1:\n%s", m)
	}
	if m := storedManifest(t, ns, "old", 2); strings.Contains(m, "policy/v1beta1") || !strings.Contains(m, "apiVersion: policy/v1\n") {
		t.Errorf("revision 2 does not name policy/v1:\n%s", m)
	}
	if out, err := cluster.Helm(t, "upgrade", "old", testChart(t, "pdb"), "-n", ns, "--set", "message=three"); err != nil {
		t.Fatalf("helm upgrade after convoy's apply: %v\n%s", err, out)
	}
	if out, err := cluster.Helm(t, "rollback", "old", "2", "-n", ns); err != nil {
		t.Fatalf("helm rollback to convoy's revision: %v\n%s", err, out)
	}
	// convoy rolls back to the revision that names policy/v1beta1 (as
	// revision 5), recording what it applied, policy/v1: helm upgrades
	// from it.
	if code, out, errOut := runConvoy(t, "rollback", "old", "1", "-C", dir, "--kubeconfig", kc); code != 0 {
		t.Fatalf("convoy rollback to revision 1: exit %d\n%s\n%s", code, out, errOut)
	}
	if m := storedManifest(t, ns, "old", 5); strings.Contains(m, "policy/v1beta1") || !strings.Contains(m, "apiVersion: policy/v1\n") {
		t.Errorf("the rollback's revision 5 does not name policy/v1:\n%s", m)
	}
	if out, err := cluster.Helm(t, "upgrade", "old", testChart(t, "pdb"), "-n", ns); err != nil {
		t.Fatalf("helm upgrade after convoy's rollback: %v\n%s", err, out)
	}
}

// TestStoredRemovedKindWithoutSuccessorFailsThePlan: a stored revision
// naming policy/v1beta1 PodSecurityPolicy (removed in 1.25, replaced by
// nothing) fails the plan, naming the object, the release that removed it
// and the ways out; convoy records migrate then drops it and maps the
// PodDisruptionBudget, as helm-mapkubeapis does, after which convoy plans
// and helm upgrades.
func TestStoredRemovedKindWithoutSuccessorFailsThePlan(t *testing.T) {
	ns := cluster.Namespace(t)
	psp := "---\n# Source: pdb/templates/psp.yaml\napiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata:\n  name: old-psp\nspec: {}\n"
	dir := oldPDBRelease(t, ns, psp)
	kc := cluster.Kubeconfig()

	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--no-color")
	t.Logf("plan: exit %d\n%s", code, errOut)
	want := "policy/v1beta1 PodSecurityPolicy old-psp: removed in 1.25 with no successor"
	if code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "convoy records migrate old") || !strings.Contains(errOut, "--api-map") || !strings.Contains(errOut, "previous revision 1 of old") {
		t.Fatalf("plan: exit %d, want 1 and an error with %q and the ways out\n%s\n%s", code, want, out, errOut)
	}

	code, out, errOut = runConvoy(t, "records", "migrate", "old", "-C", dir, "--kubeconfig", kc, "--auto-approve")
	t.Logf("records migrate:\n%s", out)
	if code != 0 {
		t.Fatalf("records migrate: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, line := range []string{
		"~ policy/v1beta1 PodDisruptionBudget old-pdb (pdb/templates/pdb.yaml): removed in 1.25: policy/v1beta1 → policy/v1",
		"- policy/v1beta1 PodSecurityPolicy old-psp (pdb/templates/psp.yaml): removed in 1.25, with no successor: dropped from the record",
		"old revision 2 written (deployed); revision 1 is superseded.",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("records migrate does not say %q:\n%s", line, out)
		}
	}
	if m := storedManifest(t, ns, "old", 2); strings.Contains(m, "v1beta1") || !strings.Contains(m, "apiVersion: policy/v1\n") {
		t.Errorf("migrated revision 2:\n%s", m)
	}
	if code, out, _ := runConvoy(t, "records", "migrate", "old", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 || !strings.Contains(out, "nothing to migrate") {
		t.Errorf("second migrate: exit %d\n%s", code, out)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--no-color"); code != 0 || strings.Contains(out, "stored revision") {
		t.Fatalf("plan after migrate: exit %d\n%s\n%s", code, out, errOut)
	}
	if out, err := cluster.Helm(t, "upgrade", "old", testChart(t, "pdb"), "-n", ns); err != nil {
		t.Fatalf("helm upgrade after migrate: %v\n%s", err, out)
	}
}

// TestDestroyOfReleaseWithRemovedStoredKinds: a release whose stored
// revision names policy/v1beta1 PodDisruptionBudget and PodSecurityPolicy
// is uninstalled: the PodDisruptionBudget is deleted as policy/v1, the
// PodSecurityPolicy, which the cluster cannot hold, is left out.
func TestDestroyOfReleaseWithRemovedStoredKinds(t *testing.T) {
	ns := cluster.Namespace(t)
	psp := "---\n# Source: pdb/templates/psp.yaml\napiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata:\n  name: old-psp\nspec: {}\n"
	dir := oldPDBRelease(t, ns, psp)
	code, out, errOut := runConvoy(t, "destroy", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve", "--no-progress", "--no-color")
	if code != 0 || !strings.Contains(out, "policy/v1 PodDisruptionBudget "+ns+"/old-pdb") {
		t.Fatalf("destroy: exit %d, want 0 and the PodDisruptionBudget deleted as policy/v1\n%s\n%s", code, out, errOut)
	}
	_, err := cluster.Client().PolicyV1().PodDisruptionBudgets(ns).Get(context.Background(), "old-pdb", metav1.GetOptions{})
	if err == nil {
		t.Error("the PodDisruptionBudget is still there")
	}
}

// TestChartRenderingRemovedAPIFailsThePlan: a chart that renders
// policy/v1beta1 PodDisruptionBudget (or a batch/v1beta1 CronJob hook)
// fails the plan naming the object,
// the release that removed it and its replacement, instead of a plan
// that says the kind is "not served yet" and an apply that fails.
func TestChartRenderingRemovedAPIFailsThePlan(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "web" {
  chart = %[2]q
  set   = { pdbAPIVersion = "policy/v1beta1" }
}
`, ns, testChart(t, "pdb")))
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--no-color")
	t.Logf("plan: exit %d\n%s", code, errOut)
	want := "policy/v1beta1 PodDisruptionBudget " + ns + "/web-pdb: removed in 1.25, use policy/v1"
	if code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "templates/pdb.yaml") {
		t.Fatalf("plan: exit %d, want 1 and %q\n%s\n%s", code, want, out, errOut)
	}

	// A hook too, before anything runs.
	dir = writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "web" {
  chart = %[2]q
  set   = { hookCronJob = true }
}
`, ns, testChart(t, "pdb")))
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--no-color")
	want = "hook pdb/templates/hook.yaml: batch/v1beta1 CronJob " + ns + "/web-hook: removed in 1.25, use batch/v1"
	if code != 1 || !strings.Contains(errOut, want) {
		t.Fatalf("plan of a hook: exit %d, want 1 and %q\n%s\n%s", code, want, out, errOut)
	}
}

// TestKubeVersionReportsLaterRemoval: with a test-only map entry that
// deprecates v1 ConfigMap in 1.36 and removes it in 1.37 (the cluster
// serves it), a plan reports it per release as deprecated, and with
// --kube-version 1.37 (or the stack's kube_version) as removed, in text
// and JSON, also once the release is applied and planned unchanged, and a
// policy denies on it.
func TestKubeVersionReportsLaterRemoval(t *testing.T) {
	ns := cluster.Namespace(t)
	mapFile := filepath.Join(t.TempDir(), "map.yaml")
	if err := os.WriteFile(mapFile, []byte(`mappings:
  - deprecatedAPI: "apiVersion: v1\nkind: ConfigMap\n"
    deprecatedInVersion: "v1.36"
    removedInVersion: "v1.37"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	stack := func(extra string) string {
		return writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
  %[3]s
}
release "web" {
  chart = %[2]q
}
policy "no_removed_apis" {
  condition = "!release.deprecations.exists(d, d.removed)"
  message_expression = "release.deprecations.filter(d, d.removed).map(d, d.ref).join(', ') + ' removed in Kubernetes ' + release.kube_target"
}
`, ns, testChart(t, "pdb"), extra))
	}
	kc := cluster.Kubeconfig()
	dir := stack("")

	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--no-color", "--api-map", mapFile)
	if code != 0 || !strings.Contains(out, "APIs deprecated or removed in Kubernetes 1.36:\n  release.web: v1 ConfigMap "+ns+"/web-cfg: deprecated in 1.36, removed in 1.37, with no replacement\n") {
		t.Fatalf("plan on the 1.36 cluster: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--no-color"); code != 0 || strings.Contains(out, "deprecated") {
		t.Fatalf("plan without the map entry: exit %d\n%s", code, out)
	}

	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--no-color", "--api-map", mapFile, "--kube-version", "1.37")
	t.Logf("plan --kube-version 1.37: exit %d\n%s\n%s", code, out, errOut)
	if code != 1 || !strings.Contains(out, "APIs deprecated or removed in Kubernetes 1.37:\n  release.web: v1 ConfigMap "+ns+"/web-cfg: removed in 1.37, with no replacement\n") ||
		!strings.Contains(out+errOut, "v1 ConfigMap "+ns+"/web-cfg removed in Kubernetes 1.37") {
		t.Fatalf("plan --kube-version 1.37: exit %d, want 1 (policy) and the removal\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--json", "--api-map", mapFile, "--kube-version", "1.37")
	var doc struct {
		Releases []struct {
			KubeTarget   string `json:"kube_target"`
			Deprecations []struct {
				Ref, APIVersion, DeprecatedIn, RemovedIn, Replacement string
				Removed                                               bool
			} `json:"deprecations"`
		} `json:"releases"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Releases) != 1 {
		t.Fatalf("plan --json: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	if !strings.Contains(out, `"api_version": "v1"`) || !strings.Contains(out, `"deprecated_in": "1.36"`) || !strings.Contains(out, `"removed_in": "1.37"`) || !strings.Contains(out, `"replacement": ""`) {
		t.Errorf("plan --json lacks the documented fields (replacement \"\" as docs/policies.md says):\n%s", out)
	}
	r := doc.Releases[0]
	if r.KubeTarget != "1.37" || len(r.Deprecations) != 1 || r.Deprecations[0].Ref != "v1 ConfigMap "+ns+"/web-cfg" || !r.Deprecations[0].Removed {
		t.Errorf("plan --json: %+v", r)
	}

	// Past the releases convoy's table knows (1.36), the plan says so,
	// objects listed or not: an empty list there proves nothing.
	for _, target := range []string{"1.37", "1.40", "2.0"} {
		code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--no-color", "--kube-version", target)
		if code != 0 || !strings.Contains(out, "APIs deprecated or removed in Kubernetes "+target+":\n  convoy knows removals up to 1.36: what later releases remove is not listed\n") {
			t.Errorf("plan --kube-version %s: exit %d\n%s\n%s", target, code, out, errOut)
		}
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--json", "--kube-version", "1.40"); code != 0 || !strings.Contains(out, `"kube_known_through": "1.36"`) {
		t.Errorf("plan --json --kube-version 1.40: exit %d\n%s\n%s", code, out, errOut)
	}

	// Applied, the release is planned unchanged from its record (no
	// render): its objects are still checked.
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress", "--api-map", mapFile); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--no-color", "--api-map", mapFile, "--kube-version", "1.37")
	if code != 1 || !strings.Contains(out, "No changes.") || !strings.Contains(out, "release.web: v1 ConfigMap "+ns+"/web-cfg: removed in 1.37, with no replacement\n") {
		t.Fatalf("plan --kube-version 1.37 of the unchanged release: exit %d, want 1 (policy) and the removal\n%s\n%s", code, out, errOut)
	}

	// The stack's own settings: api_map and kube_version.
	if err := os.WriteFile(filepath.Join(dir, "apis.yaml"), []byte(mustRead(t, mapFile)), 0o644); err != nil {
		t.Fatal(err)
	}
	dir2 := stack(`api_map = "apis.yaml"` + "\n  kube_version = \"1.37\"")
	if err := os.WriteFile(filepath.Join(dir2, "apis.yaml"), []byte(mustRead(t, mapFile)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir2, "--kubeconfig", kc, "--no-color"); code != 1 || !strings.Contains(out, "v1 ConfigMap "+ns+"/web-cfg: removed in 1.37") {
		t.Fatalf("plan with the stack's api_map and kube_version: exit %d\n%s\n%s", code, out, errOut)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDefaultPlanFindsARewrittenRecordNamingARemovedAPI is issue 55's
// item 4: releases convoy installed, whose newest deployed revision's
// manifest is then rewritten in place to name policy/v1beta1
// PodDisruptionBudget (as records helm-mapkubeapis users meet), their
// fingerprint and applied labels kept. helm upgrade of such a release
// fails; the default plan (incremental, reading records' metadata) says
// of both that the stored revision names the removed API. A moved
// release whose stored revision names it is planned, not failed.
func TestDefaultPlanFindsARewrittenRecordNamingARemovedAPI(t *testing.T) {
	ns := cluster.Namespace(t)
	chart := testChart(t, "pdb")
	kc := cluster.Kubeconfig()
	stack := func(releases string) string {
		return writeStack(t, fmt.Sprintf("stack %[1]q {\n  default_namespace = %[1]q\n}\n%[2]s", ns, releases))
	}
	rel := func(name string) string { return fmt.Sprintf("release %q {\n  chart = %q\n}\n", name, chart) }
	dir := stack(rel("one") + rel("two"))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	// Planned again, both are proven unchanged from their labels.
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--no-color", "--stats"); code != 0 || !strings.Contains(out+errOut, "releases-unchanged-by-fingerprint=2") {
		t.Fatalf("plan before the rewrite: exit %d, want both unchanged by fingerprint\n%s\n%s", code, out, errOut)
	}
	for _, name := range []string{"one", "two"} {
		rewriteHelmRecord(t, ns, name, 1, func(m string) string {
			return strings.Replace(m, "apiVersion: policy/v1\n", "apiVersion: policy/v1beta1\n", 1)
		})
	}
	// The oracle: helm cannot upgrade it.
	if out, err := cluster.Helm(t, "upgrade", "two", chart, "-n", ns, "--dry-run=server"); err == nil || !strings.Contains(err.Error()+string(out), "resource mapping not found") {
		t.Fatalf("helm upgrade of the rewritten record: %v, want resource mapping not found\n%s", err, out)
	}
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--no-color", "--stats")
	t.Logf("plan: exit %d\n%s\n%s", code, out, errOut)
	note := "note: stored revision 1 names policy/v1beta1 PodDisruptionBudget, removed in 1.25: compared as policy/v1"
	if code != 0 || strings.Count(out, note) != 2 {
		t.Fatalf("default plan: exit %d, want the note for both releases\n%s\n%s", code, out, errOut)
	}

	dir = stack(rel("one") + rel("three") + "moved {\n  from = release.two\n  to   = release.three\n}\n")
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--no-color")
	t.Logf("plan of the move: exit %d\n%s\n%s", code, out, errOut)
	if code != 0 || !strings.Contains(out, "release.three") || strings.Count(out, note) != 2 {
		t.Fatalf("plan of the moved release: exit %d, want it planned with the note\n%s\n%s", code, out, errOut)
	}
}
