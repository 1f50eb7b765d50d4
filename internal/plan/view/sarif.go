package view

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sarif"
	"github.com/hashicorp/hcl/v2"
)

// SARIFOptions say where a plan's findings are written.
type SARIFOptions struct {
	ToolVersion string
	// Base is the directory file URIs are relative to (the repository's
	// root in CI).
	Base string
	// StackDir is the stack's directory: values origins are relative to it.
	StackDir string
	// Block returns the header range of a release block by name (false
	// when the stack has none: a removed release).
	Block func(name string) (hcl.Range, bool)
}

// SARIF rule IDs of a plan's findings.
const (
	RuleDataLoss    = "impact/data-loss"
	RuleStaleConfig = "impact/stale-config"
	RuleRemovedAPI  = "api/removed"
	RuleDeprecated  = "api/deprecated"
	RuleRefused     = "release/refused"
	rulePolicy      = "policy/"
)

// SARIF writes the plan's findings as a SARIF 2.1.0 log: one result per
// policy denial or warning, data-loss and stale-config impact, removed or
// deprecated API and refused release. Each is located at its release
// block; a finding about an object whose changed fields a values line set
// (the plan's provenance) points at that line, the block related. Messages
// name the release and the object (`apps/v1 Deployment ns/name`); they are
// the plan's own texts, masked as the plan is.
func SARIF(p *plan.Plan, o SARIFOptions) ([]byte, error) {
	l := &sarif.Log{Tool: "convoy", ToolVersion: o.ToolVersion, InformationURI: "https://github.com/convoy-sh/convoy", Base: o.Base,
		Rules: []sarif.Rule{
			{ID: RuleDataLoss, Description: "The plan deletes or replaces an object that holds data", Level: sarif.LevelWarning},
			{ID: RuleStaleConfig, Description: "A ConfigMap or Secret changes and workloads reading it are not restarted", Level: sarif.LevelNote},
			{ID: RuleRemovedAPI, Description: "An object uses an API version the target Kubernetes no longer serves", Level: sarif.LevelError},
			{ID: RuleDeprecated, Description: "An object uses a deprecated API version", Level: sarif.LevelWarning},
			{ID: RuleRefused, Description: "Apply refuses to change a release another stack or release owns", Level: sarif.LevelError},
		}}
	byAddr := map[string]*plan.ReleaseChange{}
	for _, r := range p.Releases {
		byAddr[r.Addr.String()] = r
	}
	s := sarifer{o: o, l: l}
	for _, res := range p.PolicyResults {
		level := sarif.LevelWarning
		if res.Level == plan.PolicyDeny {
			level = sarif.LevelError
		}
		s.add(rulePolicy+res.Policy, level, res.String(), byAddr[res.Release], res.Object)
	}
	for _, r := range p.Releases {
		if r.Refused() {
			msg := fmt.Sprintf("%s: apply refuses to change it", r.Addr)
			switch {
			case r.Owner != "" && !r.Adopt:
				msg = fmt.Sprintf("%s: the release is owned by stack %s; apply refuses to change it", r.Addr, r.Owner)
			case r.Takeover != nil && !r.Takeover.Allowed:
				msg = fmt.Sprintf("%s: %s", r.Addr, r.Takeover)
			case len(r.Conflicts) > 0:
				var objs []string
				for _, c := range r.Conflicts {
					objs = append(objs, c.String())
				}
				msg = fmt.Sprintf("%s: objects another release owns: %s", r.Addr, strings.Join(objs, "; "))
			}
			s.add(RuleRefused, sarif.LevelError, msg, r, "")
		}
		if r.Impact != nil {
			for _, d := range r.Impact.DataLoss {
				s.add(RuleDataLoss, sarif.LevelWarning, fmt.Sprintf("%s: %s %s: %s", r.Addr, d.Action, d.Ref, d.Reason), r, d.Ref.String())
			}
			for _, sc := range r.Impact.StaleConfig {
				var who []string
				for _, c := range sc.Consumers {
					who = append(who, fmt.Sprintf("%s (%s, picks it up %s)", c.Ref, c.Via, c.PicksUp))
				}
				s.add(RuleStaleConfig, sarif.LevelNote, fmt.Sprintf("%s: %s changes; read by %s", r.Addr, sc.Ref, strings.Join(who, ", ")), r, sc.Ref.String())
			}
		}
		for _, d := range r.Deprecations {
			rule, level := RuleDeprecated, sarif.LevelWarning
			if d.Removed {
				rule, level = RuleRemovedAPI, sarif.LevelError
			}
			s.add(rule, level, fmt.Sprintf("%s: %s", r.Addr, d), r, "")
		}
	}
	return l.JSON()
}

type sarifer struct {
	o SARIFOptions
	l *sarif.Log
}

// add appends a finding about release r (nil: the whole plan) and, if
// object is not "", one of its objects.
func (s sarifer) add(rule string, level sarif.Level, msg string, r *plan.ReleaseChange, object string) {
	f := sarif.Finding{Rule: rule, Level: level, Message: msg}
	var block *sarif.Location
	if r != nil && !r.Addr.IsRemoved() && s.o.Block != nil {
		if rng, ok := s.o.Block(r.Addr.Instance.Release.Name); ok {
			block = &sarif.Location{File: rng.Filename, Line: rng.Start.Line, Column: rng.Start.Column, EndLine: rng.End.Line, EndColumn: rng.End.Column, Message: "release block " + r.Addr.Instance.Release.String()}
		}
	}
	values := s.valuesLines(r, object)
	switch {
	case len(values) > 0:
		f.Where = &values[0]
		f.Related = values[1:]
		if block != nil {
			f.Related = append(f.Related, *block)
		}
	default:
		f.Where = block
	}
	s.l.Findings = append(s.l.Findings, f)
}

// valuesLines are the files and lines of the values leaves that set the
// changed fields of object (the plan's provenance), in order, once each.
func (s sarifer) valuesLines(r *plan.ReleaseChange, object string) []sarif.Location {
	if r == nil || object == "" {
		return nil
	}
	var out []sarif.Location
	seen := map[string]bool{}
	for _, oc := range r.Objects {
		if oc.Ref.String() != object || oc.Diff == nil {
			continue
		}
		for _, c := range oc.Diff.Changes {
			for _, origin := range c.Provenance {
				src := origin.Source
				if src == nil || src.File == "" || src.Line == 0 {
					continue
				}
				file := src.File
				if !filepath.IsAbs(file) && s.o.StackDir != "" {
					file = filepath.Join(s.o.StackDir, file)
				}
				key := fmt.Sprintf("%s:%d", file, src.Line)
				if seen[key] {
					continue
				}
				seen[key] = true
				out = append(out, sarif.Location{File: file, Line: src.Line, Column: src.Column, Message: origin.Input + " sets " + c.Path})
			}
		}
	}
	return out
}
