package chart

import (
	"regexp"
	"strings"
	"sync"
)

// impureFuncs are the template functions whose result is not a function
// of the chart, the values, the release and the capabilities: live
// lookups, the clock, randomness, generated keys and certificates, DNS.
var impureFuncs = regexp.MustCompile(`\b(lookup|now|rand[A-Za-z]*|shuffle|uuidv4|genPrivateKey|genCA|genCAWithKey|genSelfSignedCert|genSelfSignedCertWithKey|genSignedCert|genSignedCertWithKey|getHostByName|htpasswd|bcrypt|encryptAES)\b`)

var pureCharts sync.Map // *Chart → bool

// Pure reports whether the chart renders the same from the same inputs:
// no template outside a tests/ directory (test hooks run only with
// convoy test) mentions a function that looks up the cluster, reads the
// clock or draws random numbers, in the chart or its dependencies. It errs
// on the side of impure: a mention in a comment counts.
func Pure(c *Chart) bool {
	if p, ok := pureCharts.Load(c); ok {
		return p.(bool)
	}
	pure := true
	for _, t := range c.Templates {
		if strings.HasPrefix(t.Name, "templates/tests/") || strings.Contains(t.Name, "/tests/") {
			continue
		}
		if impureFuncs.Match(t.Data) {
			pure = false
			break
		}
	}
	for _, d := range c.dependencies {
		if pure && !Pure(d) {
			pure = false
		}
	}
	pureCharts.Store(c, pure)
	return pure
}

var capsCharts sync.Map // *Chart → bool

// UsesCapabilities reports whether a template of the chart or of its
// dependencies mentions .Capabilities: only those can render differently
// when the cluster starts serving another API.
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
