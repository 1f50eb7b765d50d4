package sarif_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/sarif"
	"github.com/convoy-sh/convoy/internal/sarif/sariftest"
)

func TestLogIsValidSARIF(t *testing.T) {
	base := t.TempDir()
	l := &sarif.Log{Tool: "convoy", ToolVersion: "dev", InformationURI: "https://github.com/convoy-sh/convoy", Base: base,
		Rules: []sarif.Rule{{ID: "policy/no_latest", Description: "policy no_latest", Level: sarif.LevelError}}}
	l.Findings = []sarif.Finding{
		{Rule: "policy/no_latest", Level: sarif.LevelError, Message: "deny no_latest on release.web: apps/v1 Deployment shop/web: image tag latest",
			Where:   &sarif.Location{File: filepath.Join(base, "stacks", "shop one", "stack.hcl"), Line: 10, Column: 1, EndLine: 10, EndColumn: 14},
			Related: []sarif.Location{{File: filepath.Join(base, "values.yaml"), Line: 3, Message: "values image.tag"}, {File: "/elsewhere/x.hcl", Line: 1}}},
		{Rule: "impact/data-loss", Level: sarif.LevelWarning, Message: "no location"},
	}
	data, err := l.JSON()
	if err != nil {
		t.Fatal(err)
	}
	sariftest.Validate(t, data)
	var doc struct {
		Runs []struct {
			Tool struct {
				Driver struct{ Rules []struct{ ID string } }
			}
			Results []struct {
				RuleIndex int
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI, URIBaseID string }
						Region           struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Runs[0]
	if len(r.Tool.Driver.Rules) != 2 || r.Results[1].RuleIndex != 1 {
		t.Errorf("rules %+v", r.Tool.Driver.Rules)
	}
	if loc := r.Results[0].Locations[0].PhysicalLocation; loc.ArtifactLocation.URI != "stacks/shop%20one/stack.hcl" || loc.Region.StartLine != 10 {
		t.Errorf("location %+v", loc)
	}
	if !strings.Contains(string(data), `"uri": "file:///elsewhere/x.hcl"`) {
		t.Errorf("a file outside the base is not an absolute URI:\n%s", data)
	}
	// The schema is not a rubber stamp.
	for _, bad := range []string{
		strings.Replace(string(data), `"version": "2.1.0"`, `"version": "2.0.0"`, 1),
		strings.Replace(string(data), `"startLine": 10`, `"startLine": 0`, 1),
		strings.Replace(string(data), `"level": "error"`, `"level": "fatal"`, 1),
	} {
		if sariftest.Check([]byte(bad)) == nil {
			t.Errorf("the schema accepts an invalid log")
		}
	}
}
