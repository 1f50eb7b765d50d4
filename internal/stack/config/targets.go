package config

import (
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
)

// ResolveTargets turns --target arguments into instance addresses, in
// address order without repeats. "release.api" (or "api") selects every
// instance of the release; `release.api["eu"]` one instance. Targets that
// match nothing are errors.
func (s *Stack) ResolveTargets(targets []string) ([]ReleaseInstanceAddr, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	seen := map[ReleaseInstanceAddr]bool{}
	var out []ReleaseInstanceAddr
	for _, t := range targets {
		addr, d := ParseReleaseInstanceAddr(t)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		// Without a key, the target names the whole release.
		matched := s.collect(&out, seen, func(ri *ReleaseInstance) bool {
			return ri.Addr.Release == addr.Release && (addr.Key == NoKey || ri.Addr.Key == addr.Key)
		})
		if !matched {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "No such release",
				Detail:   fmt.Sprintf("The target %s matches no release instance of the stack.", addr),
			})
		}
	}
	sortAddrs(out)
	return out, diags
}

func sortAddrs(as []ReleaseInstanceAddr) {
	slices.SortFunc(as, func(a, b ReleaseInstanceAddr) int {
		switch {
		case a.Less(b):
			return -1
		case b.Less(a):
			return 1
		}
		return 0
	})
}

// collect appends to *out the instances match accepts that seen does not
// hold yet, and reports whether match accepted any.
func (s *Stack) collect(out *[]ReleaseInstanceAddr, seen map[ReleaseInstanceAddr]bool, match func(*ReleaseInstance) bool) bool {
	matched := false
	for _, ri := range s.Releases {
		if !match(ri) {
			continue
		}
		matched = true
		if !seen[ri.Addr] {
			seen[ri.Addr] = true
			*out = append(*out, ri.Addr)
		}
	}
	return matched
}
