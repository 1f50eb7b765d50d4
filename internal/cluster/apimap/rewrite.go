package apimap

import (
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// Rewrite is one object of a manifest that Migrate changed.
type Rewrite struct {
	// Source is the template the document came from ("# Source:"), when
	// the manifest says.
	Source string
	// Namespace and Name are as the document gives them.
	Namespace, Name string
	// From is the removed API; To what it now names, nil when the object
	// was dropped (its kind has no successor).
	From  API
	To    *API
	Entry Entry
}

// Migrate rewrites a stored manifest as helm-mapkubeapis does: every
// document naming an API version served says false for, that m knows a
// served successor of, names the successor instead; a document whose kind
// has no successor is dropped. Only the document's top-level apiVersion
// line changes; everything else is kept byte for byte. It returns the
// manifest and what changed, in order.
func (m *Map) Migrate(manifest string, served func(API) bool) (string, []Rewrite) {
	docs := splitDocuments(manifest)
	var out strings.Builder
	var changes []Rewrite
	for _, d := range docs {
		head, ok := documentHead(d)
		if !ok || served(head.API) {
			out.WriteString(d)
			continue
		}
		e, to, known := m.Successor(head.API, served)
		if !known {
			out.WriteString(d)
			continue
		}
		changes = append(changes, Rewrite{Source: sourceOf(d), Namespace: head.Metadata.Namespace, Name: head.Metadata.Name, From: head.API, To: to, Entry: e})
		if to == nil {
			continue // dropped: nothing serves its kind
		}
		out.WriteString(replaceAPIVersion(d, to.APIVersion))
	}
	return out.String(), changes
}

type docHead struct {
	API      `json:",inline"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// documentHead decodes a document's apiVersion, kind and name.
func documentHead(doc string) (docHead, bool) {
	var h docHead
	body := separatorRE.ReplaceAllString(doc, "")
	if err := yaml.Unmarshal([]byte(body), &h); err != nil || h.APIVersion == "" || h.Kind == "" {
		return docHead{}, false
	}
	return h, true
}

var (
	separatorRE  = regexp.MustCompile(`(?m)^---.*$`)
	apiVersionRE = regexp.MustCompile(`(?m)^apiVersion:[ \t]*[^\n]*$`)
)

// splitDocuments cuts a manifest into its documents, each with the "---"
// line that opens it, so that joining them gives the manifest back.
func splitDocuments(manifest string) []string {
	var docs []string
	start := 0
	for _, loc := range separatorRE.FindAllStringIndex(manifest, -1) {
		if loc[0] > start {
			docs = append(docs, manifest[start:loc[0]])
		}
		start = loc[0]
	}
	if start < len(manifest) {
		docs = append(docs, manifest[start:])
	}
	return docs
}

// replaceAPIVersion sets the top-level apiVersion line of a document.
func replaceAPIVersion(doc, apiVersion string) string {
	done := false
	return apiVersionRE.ReplaceAllStringFunc(doc, func(line string) string {
		if done {
			return line
		}
		done = true
		return "apiVersion: " + apiVersion
	})
}

// sourceOf is the template a rendered document names in its "# Source:"
// comment, or "".
func sourceOf(doc string) string {
	for line := range strings.SplitSeq(doc, "\n") {
		if src, ok := strings.CutPrefix(strings.TrimSpace(line), "# Source: "); ok {
			return strings.TrimSpace(src)
		}
	}
	return ""
}
