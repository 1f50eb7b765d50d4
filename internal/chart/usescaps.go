package chart

import (
	"strings"
	"sync"
)

var capsCharts sync.Map // *Chart → bool

// UsesCapabilities reports whether a template of the chart or of its
// dependencies mentions .Capabilities: only those can render differently
// when the cluster starts serving another API. A mention in a comment
// counts.
func UsesCapabilities(c *Chart) bool {
	if u, ok := capsCharts.Load(c); ok {
		return u.(bool)
	}
	uses := false
	for _, t := range c.Templates {
		if strings.Contains(string(t.Data), "Capabilities") {
			uses = true
			break
		}
	}
	for _, d := range c.dependencies {
		if !uses && UsesCapabilities(d) {
			uses = true
		}
	}
	capsCharts.Store(c, uses)
	return uses
}
