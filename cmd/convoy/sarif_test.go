package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/sarif/sariftest"
)

type sarifDoc struct {
	Runs []struct {
		Results []struct {
			RuleID, Level string
			Message       struct{ Text string }
			Locations     []struct {
				PhysicalLocation struct {
					ArtifactLocation struct{ URI, URIBaseID string }
					Region           struct{ StartLine, StartColumn int }
				}
			}
		}
	}
}

func readSARIF(t *testing.T, path string) sarifDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sariftest.Validate(t, data)
	var doc sarifDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// plan --sarif on a stack a policy denies: valid SARIF 2.1.0 whose
// denial is at the release block's file and line and names the object;
// the warning is there too.
func TestPlanSARIFLocatesPolicyDenialAtTheReleaseBlock(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}

# the API
release "a" {
  chart  = %[2]q
}
policy "two_replicas" {
  level     = "deny"
  condition = "object.kind != 'Deployment' || object.after == null || object.after.spec.replicas >= 2"
  message   = "a Deployment with fewer than two replicas"
}
`, ns, appChartPath()))
	t.Chdir(filepath.Dir(dir)) // CI runs from the repository's root
	out := filepath.Join(t.TempDir(), "plan.sarif")
	code, stdout, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--sarif", out)
	if code != 1 {
		t.Fatalf("denied plan: exit %d\n%s\n%s", code, stdout, errOut)
	}
	doc := readSARIF(t, out)
	found := false
	for _, r := range doc.Runs[0].Results {
		if r.RuleID != "policy/two_replicas" {
			continue
		}
		found = true
		loc := r.Locations[0].PhysicalLocation
		if r.Level != "error" || loc.ArtifactLocation.URI != "shop/stack.hcl" || loc.ArtifactLocation.URIBaseID != "%SRCROOT%" || loc.Region.StartLine != 7 {
			t.Errorf("denial: %+v", r)
		}
		if !strings.Contains(r.Message.Text, "apps/v1 Deployment "+ns+"/a") || !strings.Contains(r.Message.Text, "release.a") {
			t.Errorf("the message does not name the object: %q", r.Message.Text)
		}
	}
	if !found {
		t.Errorf("no result of the denial: %+v", doc)
	}
}

// validate --sarif: each diagnostic at its file, line and column.
func TestValidateSARIF(t *testing.T) {
	dir := writeStack(t, `
release "a" {
  chart = "./nowhere"
}

policy "broken" {
  condition = "object.kind == "
}
`)
	t.Setenv("KUBECONFIG", "/nonexistent")
	out := filepath.Join(t.TempDir(), "validate.sarif")
	if code, _, errOut := runConvoy(t, "validate", "-C", dir, "--sarif", out); code != 1 {
		t.Fatalf("validate: exit %d\n%s", code, errOut)
	}
	doc := readSARIF(t, out)
	var lines []int
	for _, r := range doc.Runs[0].Results {
		if r.Level == "error" && len(r.Locations) == 1 && strings.HasSuffix(r.Locations[0].PhysicalLocation.ArtifactLocation.URI, "stack.hcl") {
			lines = append(lines, r.Locations[0].PhysicalLocation.Region.StartLine)
		}
	}
	if !strings.Contains(fmt.Sprint(lines), "7") {
		t.Errorf("no error at stack.hcl line 7: %v\n%+v", lines, doc)
	}
}
