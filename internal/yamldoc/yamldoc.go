// Package yamldoc converts YAML documents to JSON once per text. A plan
// renders a release's chart, whose sorter reads each document's head
// (Helm's SimpleHead), then parses the rendering and the deployed
// revision's manifest into objects: when nothing changed, these are the
// same documents, and converting YAML is most of what each step costs.
// chart and kube both convert through JSON, so each document is converted
// once.
//
// What it holds is bounded: past documentsMax bytes it starts over, and a
// document over documentLargest (a large ConfigMap or CRD: the memory of a
// large release counts) is converted every time and not kept.
package yamldoc

import (
	"bytes"
	"crypto/sha256"
	"sync"
	"sync/atomic"

	"sigs.k8s.io/yaml"
)

const (
	documentsMax    = 32 << 20
	documentLargest = 64 << 10
)

// JSON is sigs.k8s.io/yaml.YAMLToJSON of doc with surrounding white space
// trimmed ("null" for an empty document), as converted before when the
// same document was: the same text after its leading comment lines and
// document start (a stored manifest's documents begin with helm's
// "# Source:" line, which the rendering's do not). The result is shared: callers must not modify
// it. Errors are not kept: a document that fails fails again.
func JSON(doc []byte) ([]byte, error) {
	return convert(doc, nil, true)
}

// Unkept is JSON without keeping what it converts: a conversion kept
// before serves, else the document is converted. For a caller whose
// documents may not be converted again (`convoy render`), so that it
// holds no more than it did.
func Unkept(doc []byte) ([]byte, error) {
	return convert(doc, nil, false)
}

// Checked is JSON, with check run on the JSON of each document it keeps
// once: a document that passed is not checked again, and one that failed
// is checked again (and fails again) when converted next.
func Checked(doc []byte, check func(data []byte) error) ([]byte, error) {
	return convert(doc, check, true)
}

func convert(doc []byte, check func(data []byte) error, keep bool) ([]byte, error) {
	key := sha256.Sum256(withoutLeadingComments(doc))
	e, ok := documents.get(key)
	if !ok {
		converted.Add(1)
		data, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		e = &entry{data: bytes.TrimSpace(data)}
		if keep && len(doc) <= documentLargest {
			e = documents.put(key, e)
		}
	}
	if check == nil || e.checked.Load() {
		return e.data, nil
	}
	if err := check(e.data); err != nil {
		return nil, err
	}
	e.checked.Store(true)
	return e.data, nil
}

// Conversions counts the documents converted from YAML so far in this
// process (not those found converted).
func Conversions() int64 { return converted.Load() }

var converted atomic.Int64

// withoutLeadingComments is doc from its first line that is not a comment,
// blank or a bare document start ("---": a multi-document reader leaves it
// on the first document): the same document to YAML.
func withoutLeadingComments(doc []byte) []byte {
	start := false
	for len(doc) > 0 {
		line, rest, _ := bytes.Cut(doc, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		t := bytes.TrimLeft(line, " ")
		switch {
		case !plain(line):
			return doc // a character YAML refuses, even in a comment
		case len(t) == 0 || t[0] == '#':
		case string(bytes.TrimRight(line, " \t")) == "---" && !start:
			start = true // a second one would end an empty document
		default:
			return doc
		}
		doc = rest
	}
	return doc
}

// plain reports whether line holds only printable ASCII and tabs:
// characters YAML takes in a comment, none of them a line break.
func plain(line []byte) bool {
	for _, c := range line {
		if (c < 0x20 || c > 0x7e) && c != '\t' {
			return false
		}
	}
	return true
}

var documents cache

type entry struct {
	data    []byte
	checked atomic.Bool
}

// cache keeps documents' JSON by the SHA-256 of their text (without
// leading comments): the text itself would double what it holds.
type cache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]*entry
	size    int
}

func (c *cache) get(key [sha256.Size]byte) (*entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	return e, ok
}

// put keeps e under key, unless another conversion of the same document
// was kept first: that one is returned.
func (c *cache) put(key [sha256.Size]byte, e *entry) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if kept, ok := c.entries[key]; ok {
		return kept
	}
	if c.entries == nil || c.size+len(key)+len(e.data) > documentsMax {
		c.entries, c.size = map[[sha256.Size]byte]*entry{}, 0
	}
	c.entries[key] = e
	c.size += len(key) + len(e.data)
	return e
}
