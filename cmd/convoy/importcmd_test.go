package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/testfiles"

	"github.com/convoy-sh/convoy/internal/stack/config/sopstest"
)

// TestImportHelmfile converts a helmfile with repositories, defaults,
// environments, values files, secrets, needs and patches into a stack that
// validates, and warns about what it leaves out.
func TestImportHelmfile(t *testing.T) {
	key := sopstest.NewKey(t)
	sopstest.UseKeys(t, key)
	src := t.TempDir()
	files := map[string]string{
		"helmfile.yaml": `
repositories:
  - name: bitnami
    url: https://charts.bitnami.com/bitnami
helmDefaults:
  wait: true
  timeout: 600
environments:
  staging:
    values: [envs/staging.yaml]
  prod:
    values: [envs/prod.yaml, {replicas: 3}]
releases:
  - name: db
    namespace: shop
    chart: bitnami/postgresql
    version: ~15.2.0
    labels: {tier: data}
    secrets: [secrets/db.enc.yaml]
  - name: api
    namespace: shop
    chart: ./charts/api
    needs: [shop/db]
    values:
      - values/api.yaml
      - {image: {tag: "1.2"}}
    set:
      - name: service.port
        value: 8080
    labels: {tier: api}
    strategicMergePatches:
      - apiVersion: apps/v1
        kind: Deployment
        metadata: {name: api}
        spec: {replicas: 2}
    jsonPatches:
      - target: {kind: Service, name: api}
        patch:
          - {op: add, path: /metadata/annotations, value: {a: b}}
  - name: old
    chart: bitnami/redis
    installed: false
`,
		"envs/staging.yaml":   "domain: staging.example.com\n",
		"envs/prod.yaml":      "domain: example.com\n",
		"values/api.yaml":     "replicas: 1\n",
		"secrets/db.enc.yaml": string(sopstest.Encrypt(t, "x.yaml", []byte("auth:\n  password: pw\n"), key)),
	}
	testfiles.Write(t, src, files)
	out := filepath.Join(t.TempDir(), "stack")
	code, stdout, stderr := runConvoy(t, "import", "helmfile", filepath.Join(src, "helmfile.yaml"), "-o", out)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "release old") {
		t.Errorf("installed: false is translated (count = 0), yet warned about:\n%s", stderr)
	}
	hcl, err := os.ReadFile(filepath.Join(out, "stack.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`repository "bitnami"`, `environment "prod"`, `variable "domain"`, `depends_on = [release.db]`,
		`file("values/api.yaml")`, `sops_file("secrets/db.enc.yaml")`, `"service.port" = 8080`,
		`timeout = "600s"`, `patches = [`, `yamlencode(`, `jsonencode(`, `tier = "api"`,
		"release \"old\" {\n  name    = \"old\"\n  chart   = \"bitnami/redis\"\n  count   = 0\n",
	} {
		if !strings.Contains(string(hcl), want) {
			t.Errorf("stack.hcl lacks %s:\n%s", want, hcl)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "values", "api.yaml")); err != nil {
		t.Errorf("values file not copied: %v", err)
	}
	// The local chart stays behind (a warning says so): bring it along.
	if !strings.Contains(stderr, "Warning: helmfile.yaml: the local chart ./charts/api (release api) is relative to the helmfile's directory") {
		t.Errorf("no warning about the local chart:\n%s", stderr)
	}
	if err := os.MkdirAll(filepath.Join(out, "charts", "api", "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "charts", "api", "Chart.yaml"), []byte("apiVersion: v2\nname: api\nversion: 0.1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"staging", "prod"} {
		if code, stdout, stderr := runConvoy(t, "validate", "-C", out, "--env", env); code != 0 {
			t.Fatalf("validate --env %s: exit %d\n%s\n%s\n%s", env, code, stdout, stderr, hcl)
		}
	}
	code, _, stderr = runConvoy(t, "import", "helmfile", filepath.Join(src, "helmfile.yaml"), "-o", out)
	if code != 1 || !strings.Contains(stderr, "already holds a stack.hcl") {
		t.Errorf("second import: exit %d\n%s", code, stderr)
	}
}
