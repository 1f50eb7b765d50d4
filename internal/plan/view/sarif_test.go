package view_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/view"
	"github.com/convoy-sh/convoy/internal/sarif/sariftest"
	"github.com/convoy-sh/convoy/internal/stack/addrs"
	"github.com/hashicorp/hcl/v2"
)

// A finding about an object whose changed field a values line set points
// at that line (the plan's provenance), the release block related; one
// about a release without provenance at its block.
func TestSARIFPointsAtTheValuesLine(t *testing.T) {
	dir := t.TempDir()
	addr := addrs.ReleaseInstance{Release: addrs.Release{Name: "web"}}
	dep := plan.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	p := &plan.Plan{
		Releases: []*plan.ReleaseChange{{
			Addr: plan.InstanceAddr(addr), Action: plan.ActionUpgrade,
			Objects: []*plan.ObjectChange{{Ref: dep, Action: plan.ObjectUpdate, Diff: &plan.Diff{Changes: []*plan.Change{{
				Path: "spec.template.spec.containers[0].image", Op: plan.FieldChange,
				Provenance: []plan.Origin{{Input: "values image.tag", Kind: plan.OriginValuesFile, Source: &plan.Source{File: "values/web.yaml", Line: 3, Column: 8}}},
			}}}}},
			Deprecations: []plan.Deprecation{{Removed: true, RemovedIn: "1.25", DeprecatedIn: "1.21"}},
		}},
		PolicyResults: []plan.PolicyResult{{Policy: "no_latest", Level: plan.PolicyDeny, Message: "image tag latest", Release: "release.web", Object: dep.String()}},
	}
	data, err := view.SARIF(p, view.SARIFOptions{Base: dir, StackDir: dir, Block: func(name string) (hcl.Range, bool) {
		return hcl.Range{Filename: filepath.Join(dir, "stack.hcl"), Start: hcl.Pos{Line: 12, Column: 1}, End: hcl.Pos{Line: 12, Column: 14}}, name == "web"
	}})
	if err != nil {
		t.Fatal(err)
	}
	sariftest.Validate(t, data)
	var doc struct {
		Runs []struct {
			Results []struct {
				RuleID    string
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
				RelatedLocations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	rs := doc.Runs[0].Results
	if len(rs) != 2 {
		t.Fatalf("%d results:\n%s", len(rs), data)
	}
	deny, api := rs[0], rs[1]
	if l := deny.Locations[0].PhysicalLocation; deny.RuleID != "policy/no_latest" || l.ArtifactLocation.URI != "values/web.yaml" || l.Region.StartLine != 3 {
		t.Errorf("denial at %+v", deny)
	}
	if len(deny.RelatedLocations) != 1 || deny.RelatedLocations[0].PhysicalLocation.Region.StartLine != 12 {
		t.Errorf("the release block is not related: %+v", deny.RelatedLocations)
	}
	if l := api.Locations[0].PhysicalLocation; api.RuleID != view.RuleRemovedAPI || l.ArtifactLocation.URI != "stack.hcl" || l.Region.StartLine != 12 {
		t.Errorf("removed API at %+v", api)
	}
}
