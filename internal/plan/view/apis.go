package view

import (
	"bytes"
	"fmt"

	"github.com/convoy-sh/convoy/internal/plan"
)

// writeStoredAPIs says, under a release, which removed API versions its
// stored revision names and what they were compared as.
func writeStoredAPIs(b *bytes.Buffer, r *plan.ReleaseChange) {
	for _, s := range r.StoredAPIs {
		fmt.Fprintf(b, "      note: %s\n", s)
	}
}

// deprecationLines are the plan's deprecated and removed APIs, one line
// per object, under a heading per target Kubernetes release. A target past
// the releases convoy's table knows gets its heading, objects or not, and
// a last line saying so: an empty list there proves nothing.
func deprecationLines(p *plan.Plan) (headings []string, lines map[string][]string) {
	lines = map[string][]string{}
	beyond := map[string]string{} // heading → the newest release known
	for _, r := range p.Releases {
		if len(r.Deprecations) == 0 && r.KubeKnown == "" {
			continue
		}
		h := fmt.Sprintf("APIs deprecated or removed in Kubernetes %s", r.KubeTarget)
		if _, ok := lines[h]; !ok {
			headings = append(headings, h)
			lines[h] = nil
		}
		for _, d := range r.Deprecations {
			lines[h] = append(lines[h], fmt.Sprintf("%s: %s", r.Addr, d))
		}
		if r.KubeKnown != "" {
			beyond[h] = r.KubeKnown
		}
	}
	for _, h := range headings {
		if known, ok := beyond[h]; ok {
			lines[h] = append(lines[h], fmt.Sprintf("convoy knows removals up to %s: what later releases remove is not listed", known))
		}
	}
	return headings, lines
}

// writeDeprecations is the text plan's section of deprecated APIs.
func writeDeprecations(b *bytes.Buffer, p *plan.Plan) {
	headings, lines := deprecationLines(p)
	for _, h := range headings {
		b.WriteString(h + ":\n")
		for _, l := range lines[h] {
			b.WriteString("  " + l + "\n")
		}
		b.WriteString("\n")
	}
}

type jsonDeprecation struct {
	Ref          string `json:"ref"`
	APIVersion   string `json:"api_version"`
	Kind         string `json:"kind"`
	DeprecatedIn string `json:"deprecated_in,omitempty"`
	RemovedIn    string `json:"removed_in,omitempty"`
	Removed      bool   `json:"removed"`
	// Replacement is "" when nothing replaces the API (as policies see it:
	// docs/policies.md), never left out.
	Replacement string `json:"replacement"`
}

type jsonStoredAPI struct {
	Revision       int    `json:"revision"`
	FromAPIVersion string `json:"from_api_version"`
	Kind           string `json:"kind"`
	ToAPIVersion   string `json:"to_api_version"`
	RemovedIn      string `json:"removed_in,omitempty"`
}

func jsonDeprecations(r *plan.ReleaseChange) []jsonDeprecation {
	var out []jsonDeprecation
	for _, d := range r.Deprecations {
		out = append(out, jsonDeprecation{Ref: d.Ref.String(), APIVersion: d.Ref.APIVersion(), Kind: d.Ref.Kind, DeprecatedIn: d.DeprecatedIn, RemovedIn: d.RemovedIn, Removed: d.Removed, Replacement: d.Replacement})
	}
	return out
}

func jsonStoredAPIs(r *plan.ReleaseChange) []jsonStoredAPI {
	var out []jsonStoredAPI
	for _, s := range r.StoredAPIs {
		out = append(out, jsonStoredAPI{Revision: s.Revision, FromAPIVersion: s.FromAPIVersion, Kind: s.Kind, ToAPIVersion: s.ToAPIVersion, RemovedIn: s.RemovedIn})
	}
	return out
}
