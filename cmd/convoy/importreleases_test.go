package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/stack/config/sopstest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestImportReleasesPlansUnchanged is issue 24's acceptance: releases
// installed with helm (v4, and v3) are imported with convoy import
// releases; convoy fmt --check, convoy init and convoy plan
// --detailed-exitcode in the directory written all exit 0. The password
// set on the release lands in the secrets file only, and the release whose
// newest revision failed is listed and skipped.
func TestImportReleasesPlansUnchanged(t *testing.T) {
	ns := cluster.Namespace(t)
	shape := testChart(t, "podshape")
	for _, args := range [][]string{
		{"install", "web", shape, "-n", ns, "--set", "replicaCount=2", "--set", "hpa.enabled=true", "--set", "auth.password=hunter2xyz", "--set", "ui.message=hello ${world}", "--labels", "team=web"},
		{"install", "api", shape, "-n", ns, "--set", "service.port=8080", "--set", "image.tag=2.0.0"},
		{"install", "broken", shape, "-n", ns, "--set", "service.enabled=false"},
	} {
		if out, err := cluster.Helm(t, args...); err != nil {
			t.Fatalf("helm %v: %v\n%s", args, err, out)
		}
	}
	if out, err := cluster.Helm3(t, "install", "legacy", testChart(t, "helm3-whitespace"), "-n", ns, "--set", "extra=true"); err != nil {
		t.Fatalf("helm3 install: %v\n%s", err, out)
	}
	// The upgrade fails on the API server: broken's newest revision is failed.
	if out, err := cluster.Helm(t, "upgrade", "broken", shape, "-n", ns, "--set", "service.type=Bogus"); err == nil {
		t.Fatalf("helm upgrade to an invalid Service succeeded:\n%s", out)
	}

	dir := filepath.Join(t.TempDir(), "imported")
	code, out, errOut := runConvoy(t, "import", "releases", "--namespace", ns, "-o", dir, "--kubeconfig", cluster.Kubeconfig())
	if code != 0 {
		t.Fatalf("import releases: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "Skipped "+ns+"/broken: its newest revision (2) is failed, not deployed") {
		t.Errorf("the failed release is not listed as skipped:\n%s", errOut)
	}
	if !strings.Contains(out, "Imported 3 releases") {
		t.Errorf("output: %s", out)
	}
	values, err := os.ReadFile(filepath.Join(dir, "values", "web.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := os.ReadFile(filepath.Join(dir, "secrets", "web.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(values), "hunter2xyz") || !strings.Contains(string(secrets), "hunter2xyz") || !strings.Contains(string(secrets), "sops --encrypt") {
		t.Errorf("the password is not apart in the secrets file:\nvalues:\n%s\nsecrets:\n%s", values, secrets)
	}
	for _, f := range []string{"charts/podshape-1.2.3/templates/_helpers.tpl", "charts/podshape-1.2.3/crds/widgets.yaml", "charts/helm3-whitespace-0.1.0/Chart.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			t.Errorf("the chart is not written from the record: %v", err)
		}
	}

	for _, args := range [][]string{
		{"fmt", "--check", "-C", dir},
		{"init", "-C", dir},
		{"plan", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--detailed-exitcode"},
	} {
		code, out, errOut := runConvoy(t, args...)
		if code != 0 {
			stack, _ := os.ReadFile(filepath.Join(dir, "stack.hcl"))
			t.Fatalf("convoy %s: exit %d\n%s\n%s\nstack.hcl:\n%s", args[0], code, out, errOut, stack)
		}
		if strings.Contains(out+errOut, "hunter2xyz") {
			t.Errorf("convoy %s printed the password:\n%s\n%s", args[0], out, errOut)
		}
		if args[0] == "plan" && !strings.Contains(out, "3 unchanged") {
			t.Errorf("plan: %s", out)
		}
	}

	// Step 2 of docs/adopting.md: the secrets file encrypted with SOPS and
	// read with sops_file, the plan is still unchanged.
	key := sopstest.NewKey(t)
	sopstest.UseKeys(t, key)
	if err := os.WriteFile(filepath.Join(dir, "secrets", "web.yaml"), sopstest.Encrypt(t, "web.yaml", secrets, key), 0o600); err != nil {
		t.Fatal(err)
	}
	stack, err := os.ReadFile(filepath.Join(dir, "stack.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	sopsStack := strings.Replace(string(stack), "    file(\"secrets/web.yaml\"),\n", "    sops_file(\"secrets/web.yaml\"),\n", 1)
	if sopsStack == string(stack) {
		t.Fatalf("stack.hcl does not read secrets/web.yaml:\n%s", stack)
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(sopsStack), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--detailed-exitcode"); code != 0 || strings.Contains(out+errOut, "hunter2xyz") {
		t.Errorf("plan with the secrets encrypted: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestImportReleasesAdoptsFromTheOwningStack: a release another convoy
// stack owns is imported with adopt_from_stack naming it; the plan adopts
// it (no install, no uninstall).
func TestImportReleasesAdoptsFromTheOwningStack(t *testing.T) {
	ns := cluster.Namespace(t)
	team := writeStack(t, `
stack "team" {
  default_namespace = "`+ns+`"
}
release "owned" {
  chart         = "`+testChart(t, "podshape")+`"
  values        = [{ service = { port = 8080 } }]
  set_sensitive = { "auth.password" = "s3cr3tvalue" }
  wait          = false
}
`)
	if code, out, errOut := runConvoy(t, "apply", "-C", team, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	dir := filepath.Join(t.TempDir(), "imported")
	if code, out, errOut := runConvoy(t, "import", "releases", "-n", ns, "-o", dir, "--kubeconfig", cluster.Kubeconfig()); code != 0 {
		t.Fatalf("import releases: exit %d\n%s\n%s", code, out, errOut)
	}
	stack, err := os.ReadFile(filepath.Join(dir, "stack.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(stack), `adopt_from_stack = "team"`) {
		t.Fatalf("no adopt_from_stack:\n%s", stack)
	}
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, `adopted from stack "team"`) || !strings.Contains(out, "0 to install, 1 to upgrade, 0 to uninstall") {
		t.Errorf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, "s3cr3tvalue") {
		t.Errorf("the plan printed the sensitive value:\n%s", out)
	}
}

// TestImportReleasesSurvivesHostileRecords: record Secrets that do not
// decode, or whose chart names files outside the chart directory, skip
// their release with the reason; the others are imported, nothing is
// written outside the directory, and nothing panics.
func TestImportReleasesSurvivesHostileRecords(t *testing.T) {
	ns := cluster.Namespace(t)
	if out, err := cluster.Helm(t, "install", "good", testChart(t, "podshape"), "-n", ns); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	record := func(name string, payload []byte) {
		t.Helper()
		var gz bytes.Buffer
		w := gzip.NewWriter(&gz)
		if _, err := w.Write(payload); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1." + name + ".v1", Namespace: ns, Labels: map[string]string{"owner": "helm", "name": name, "status": "deployed", "version": "1"}},
			Type:       "helm.sh/release.v1",
			Data:       map[string][]byte{"release": []byte(base64.StdEncoding.EncodeToString(gz.Bytes()))},
		}
		if _, err := cluster.Client().CoreV1().Secrets(ns).Create(context.Background(), sec, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	record("garbled", []byte("{not json"))
	evil := func(file string) []byte {
		return []byte(`{"name":"x","namespace":"` + ns + `","version":1,"info":{"status":"deployed"},"chart":{"metadata":{"apiVersion":"v2","name":"evil","version":"1.0.0"},"templates":[{"name":"` + file + `","data":"eA=="}]}}`)
	}
	record("dotdot", evil("../../../../escaped.yaml"))
	record("absolute", evil("/tmp/escaped.yaml"))

	parent := t.TempDir()
	dir := filepath.Join(parent, "imported")
	code, out, errOut := runConvoy(t, "import", "releases", "-n", ns, "-o", dir, "--kubeconfig", cluster.Kubeconfig())
	if code != 0 {
		t.Fatalf("import releases: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"Skipped " + ns + "/garbled: its newest record (revision 1) cannot be read: ",
		"Skipped " + ns + "/dotdot: the chart file \"../../../../escaped.yaml\" would be written outside the chart directory",
		"Skipped " + ns + "/absolute: the chart file \"/tmp/escaped.yaml\" would be written outside the chart directory",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(out, "Imported 1 release into") {
		t.Errorf("output: %s", out)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("written next to the stack directory: %v", entries)
	}
	if _, err := os.Stat("/tmp/escaped.yaml"); err == nil {
		t.Errorf("/tmp/escaped.yaml was written")
	}
}

// TestImportReleasesNamesTheChartRepository: with --repo CHART=URL the
// release names its chart in a repository block (version pinned to the
// deployed one) instead of a copy written from the record; convoy init
// fetches it from the repository and the plan is unchanged.
func TestImportReleasesNamesTheChartRepository(t *testing.T) {
	ns := cluster.Namespace(t)
	t.Setenv("CONVOY_CACHE_DIR", filepath.Join(t.TempDir(), "charts"))
	repo := sourcetest.NewHTTPRepo(t, false)
	sourcetest.Helm(t, t.TempDir(), "package", testChart(t, "podshape"), "--destination", repo.Dir)
	repo.Index(t)
	if out, err := cluster.Helm(t, "install", "web", filepath.Join(repo.Dir, "podshape-1.2.3.tgz"), "-n", ns, "--set", "replicaCount=2"); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	dir := filepath.Join(t.TempDir(), "imported")
	if code, out, errOut := runConvoy(t, "import", "releases", "-n", ns, "-o", dir, "--repo", "podshape="+repo.URL(), "--kubeconfig", cluster.Kubeconfig()); code != 0 {
		t.Fatalf("import releases: exit %d\n%s\n%s", code, out, errOut)
	}
	stack, err := os.ReadFile(filepath.Join(dir, "stack.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`repository "podshape" {`, `url = "` + repo.URL() + `"`, `chart     = "podshape/podshape"`, `version   = "1.2.3"`} {
		if !strings.Contains(string(stack), want) {
			t.Errorf("stack.hcl lacks %s:\n%s", want, stack)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "charts")); err == nil {
		t.Errorf("the chart was written from the record though --repo names its repository")
	}
	for _, args := range [][]string{
		{"init", "-C", dir},
		{"plan", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--detailed-exitcode"},
	} {
		if code, out, errOut := runConvoy(t, args...); code != 0 {
			t.Fatalf("convoy %s: exit %d\n%s\n%s\n%s", args[0], code, out, errOut, stack)
		}
	}
	if repo.Count("podshape-1.2.3.tgz") == 0 {
		t.Errorf("convoy init did not fetch the chart from the repository: %v", repo.Requests())
	}
}
