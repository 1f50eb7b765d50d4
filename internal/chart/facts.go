package chart

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
)

// facts are what is computed once about a loaded chart, which is never
// modified: kept on the chart, they go with it (a long-running controller
// loads charts again and again).
type facts struct {
	digestOnce, capsOnce sync.Once
	digest               string
	usesCaps             bool
}

// Digest hashes every file of the chart as loaded, and its dependencies'.
// "" for a chart whose files are not at hand (decoded from a record).
func (c *Chart) Digest() string {
	if c.factsOnly {
		return c.facts.digest
	}
	if len(c.Raw) == 0 {
		return ""
	}
	if c.facts == nil {
		return c.computeDigest()
	}
	c.facts.digestOnce.Do(func() { c.facts.digest = c.computeDigest() })
	return c.facts.digest
}

func (c *Chart) computeDigest() string {
	h := sha256.New()
	for _, f := range c.Raw {
		h.Write([]byte(f.Name + "\x00" + strconv.Itoa(len(f.Data)) + "\x00"))
		h.Write(f.Data)
	}
	for _, d := range c.dependencies {
		h.Write([]byte("dependency\x00" + d.Digest()))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// UsesCapabilities reports whether a template of the chart or of its
// dependencies mentions .Capabilities: only those can render differently
// when the cluster starts serving another API. A mention in a comment
// counts.
func (c *Chart) UsesCapabilities() bool {
	if c.factsOnly {
		return c.facts.usesCaps
	}
	if c.facts == nil {
		return c.computeUsesCapabilities()
	}
	c.facts.capsOnce.Do(func() { c.facts.usesCaps = c.computeUsesCapabilities() })
	return c.facts.usesCaps
}

func (c *Chart) computeUsesCapabilities() bool {
	for _, t := range c.Templates {
		if strings.Contains(string(t.Data), "Capabilities") {
			return true
		}
	}
	for _, d := range c.dependencies {
		if d.UsesCapabilities() {
			return true
		}
	}
	return false
}

// Facts is a chart that answers Digest and UsesCapabilities as c does,
// with c's metadata, and holds nothing else of it: no files, templates or
// values. It is for a caller that keeps a chart only to ask those (a saved
// plan's apply settles the record it writes by the chart's fingerprint),
// so that a large chart's files are not held meanwhile. It cannot be
// rendered.
func (c *Chart) Facts() *Chart {
	return &Chart{Metadata: c.Metadata, factsOnly: true,
		facts: &facts{digest: c.Digest(), usesCaps: c.UsesCapabilities()}}
}
