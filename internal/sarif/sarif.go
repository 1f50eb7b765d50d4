// Package sarif writes findings as a SARIF 2.1.0 log (the OASIS Static
// Analysis Results Interchange Format), which GitHub code scanning and
// GitLab show on the lines of a change. It holds the format only; what a
// finding is and where it points is the caller's (plan/view for plans,
// cmd/convoy for diagnostics).
package sarif

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
)

// Version is the SARIF version written; Schema the schema's URI.
const (
	Version = "2.1.0"
	Schema  = "https://json.schemastore.org/sarif-2.1.0.json"
)

// Level is a result's level.
type Level string

// SARIF levels.
const (
	LevelError   Level = "error"
	LevelWarning Level = "warning"
	LevelNote    Level = "note"
)

// Rule describes one kind of finding ("policy/no_latest").
type Rule struct {
	ID          string
	Description string
	Level       Level
}

// Location is a place in a file: its path (as the caller knows it) and
// a 1-based line and column; EndLine and EndColumn may be 0.
type Location struct {
	File                             string
	Line, Column, EndLine, EndColumn int
	// Message says what is there ("release block", "values image.tag").
	Message string
}

// Finding is one result.
type Finding struct {
	Rule    string
	Level   Level
	Message string
	// Where is the primary location (nil: none known); Related are other
	// places that explain it.
	Where   *Location
	Related []Location
}

// Log collects findings of one run of a tool.
type Log struct {
	Tool, ToolVersion, InformationURI string
	// Base is the directory file paths are made relative to (the
	// repository's root in CI: the working directory); files outside it
	// are written as absolute file: URIs.
	Base     string
	Rules    []Rule
	Findings []Finding
}

type (
	doc struct {
		Schema  string `json:"$schema"`
		Version string `json:"version"`
		Runs    []run  `json:"runs"`
	}
	run struct {
		Tool    tool     `json:"tool"`
		Results []result `json:"results"`
	}
	tool struct {
		Driver driver `json:"driver"`
	}
	driver struct {
		Name           string `json:"name"`
		Version        string `json:"version,omitempty"`
		InformationURI string `json:"informationUri,omitempty"`
		Rules          []rule `json:"rules"`
	}
	rule struct {
		ID                   string  `json:"id"`
		ShortDescription     message `json:"shortDescription"`
		DefaultConfiguration config  `json:"defaultConfiguration"`
	}
	config struct {
		Level Level `json:"level"`
	}
	message struct {
		Text string `json:"text"`
	}
	result struct {
		RuleID              string            `json:"ruleId"`
		RuleIndex           int               `json:"ruleIndex"`
		Level               Level             `json:"level"`
		Message             message           `json:"message"`
		Locations           []location        `json:"locations,omitempty"`
		RelatedLocations    []location        `json:"relatedLocations,omitempty"`
		PartialFingerprints map[string]string `json:"partialFingerprints"`
	}
	location struct {
		ID               *int             `json:"id,omitempty"`
		PhysicalLocation physicalLocation `json:"physicalLocation"`
		Message          *message         `json:"message,omitempty"`
	}
	physicalLocation struct {
		ArtifactLocation artifactLocation `json:"artifactLocation"`
		Region           *region          `json:"region,omitempty"`
	}
	artifactLocation struct {
		URI       string `json:"uri"`
		URIBaseID string `json:"uriBaseId,omitempty"`
	}
	region struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn,omitempty"`
		EndLine     int `json:"endLine,omitempty"`
		EndColumn   int `json:"endColumn,omitempty"`
	}
)

// JSON renders the log. Results keep the order of Findings; a finding of
// a rule not in Rules gets the rule added (its description the rule ID).
func (l *Log) JSON() ([]byte, error) {
	rules := slices.Clone(l.Rules)
	index := map[string]int{}
	for i, r := range rules {
		index[r.ID] = i
	}
	results := []result{}
	for _, f := range l.Findings {
		i, ok := index[f.Rule]
		if !ok {
			i = len(rules)
			index[f.Rule] = i
			rules = append(rules, Rule{ID: f.Rule, Description: f.Rule, Level: f.Level})
		}
		r := result{RuleID: f.Rule, RuleIndex: i, Level: cmp.Or(f.Level, LevelWarning), Message: message{f.Message}}
		if f.Where != nil {
			r.Locations = []location{l.location(*f.Where, nil)}
		}
		for j, rel := range f.Related {
			id := j
			r.RelatedLocations = append(r.RelatedLocations, l.location(rel, &id))
		}
		// The same finding in the next run of the pipeline is the same
		// alert: its rule, message and file, not its line (which moves).
		h := sha256.New()
		h.Write([]byte(f.Rule + "\x00" + f.Message + "\x00"))
		if f.Where != nil {
			h.Write([]byte(r.Locations[0].PhysicalLocation.ArtifactLocation.URI))
		}
		r.PartialFingerprints = map[string]string{"convoyFinding/v1": hex.EncodeToString(h.Sum(nil))[:32]}
		results = append(results, r)
	}
	d := doc{Schema: Schema, Version: Version, Runs: []run{{
		Tool:    tool{Driver: driver{Name: l.Tool, Version: l.ToolVersion, InformationURI: l.InformationURI, Rules: []rule{}}},
		Results: results,
	}}}
	for _, r := range rules {
		d.Runs[0].Tool.Driver.Rules = append(d.Runs[0].Tool.Driver.Rules, rule{ID: r.ID, ShortDescription: message{cmp.Or(r.Description, r.ID)}, DefaultConfiguration: config{cmp.Or(r.Level, LevelWarning)}})
	}
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func (l *Log) location(loc Location, id *int) location {
	out := location{ID: id, PhysicalLocation: physicalLocation{ArtifactLocation: l.artifact(loc.File)}}
	if loc.Line > 0 {
		r := &region{StartLine: loc.Line, StartColumn: loc.Column}
		if loc.EndLine >= loc.Line {
			r.EndLine = loc.EndLine
			if loc.EndColumn > 0 && (loc.EndLine > loc.Line || loc.EndColumn > loc.Column) {
				r.EndColumn = loc.EndColumn
			}
		}
		out.PhysicalLocation.Region = r
	}
	if loc.Message != "" {
		out.Message = &message{loc.Message}
	}
	return out
}

// artifact names a file relative to Base (with the %SRCROOT% base, which
// code scanning resolves to the repository's root), or as a file: URI.
func (l *Log) artifact(file string) artifactLocation {
	abs, err := filepath.Abs(file)
	if err == nil && l.Base != "" {
		base, err := filepath.Abs(l.Base)
		if err == nil {
			if rel, err := filepath.Rel(base, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return artifactLocation{URI: escapePath(filepath.ToSlash(rel)), URIBaseID: "%SRCROOT%"}
			}
		}
	}
	if err != nil {
		return artifactLocation{URI: escapePath(filepath.ToSlash(file))}
	}
	return artifactLocation{URI: "file://" + escapePath(filepath.ToSlash(abs))}
}

// escapePath percent-encodes what a URI reference cannot hold raw.
func escapePath(p string) string {
	var b strings.Builder
	for _, c := range []byte(p) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("-._~/!$&'()*+,;=:@", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{c})))
		}
	}
	return b.String()
}
