// Package addrs holds the addresses of a stack's releases: a release
// block (release.db) and one of its instances (release.api["eu"]), parsed
// once at the edge and compared as values everywhere else.
package addrs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// InstanceKeyKind says how a release block was expanded.
type InstanceKeyKind uint8

const (
	NoKeyKind     InstanceKeyKind = iota // single instance, no count or for_each
	IntKeyKind                           // count
	StringKeyKind                        // for_each
)

// InstanceKey identifies one instance of an expanded release block. The zero
// value is "no key". InstanceKey is comparable and can be used as a map key.
type InstanceKey struct {
	Kind InstanceKeyKind
	Int  int
	Str  string
}

// NoKey is the key of a release without count or for_each.
var NoKey = InstanceKey{}

// IntKey is the key of a count instance.
func IntKey(i int) InstanceKey { return InstanceKey{Kind: IntKeyKind, Int: i} }

// StringKey is the key of a for_each instance.
func StringKey(s string) InstanceKey { return InstanceKey{Kind: StringKeyKind, Str: s} }

// String renders the key as it appears in an address: "", "[0]" or `["eu"]`.
func (k InstanceKey) String() string {
	switch k.Kind {
	case IntKeyKind:
		return "[" + strconv.Itoa(k.Int) + "]"
	case StringKeyKind:
		return "[" + strconv.Quote(k.Str) + "]"
	default:
		return ""
	}
}

// Value is the key as a cty value: each.key or count.index.
func (k InstanceKey) Value() cty.Value {
	switch k.Kind {
	case IntKeyKind:
		return cty.NumberIntVal(int64(k.Int))
	case StringKeyKind:
		return cty.StringVal(k.Str)
	default:
		return cty.NilVal
	}
}

func (k InstanceKey) less(o InstanceKey) bool {
	if k.Kind != o.Kind {
		return k.Kind < o.Kind
	}
	if k.Kind == IntKeyKind {
		return k.Int < o.Int
	}
	return k.Str < o.Str
}

// Release names a release block: release.<name>.
type Release struct {
	Name string
}

func (a Release) String() string { return "release." + a.Name }

// Less orders release addresses by name.
func (a Release) Less(o Release) bool { return a.Name < o.Name }

// Instance returns the address of one instance of the release.
func (a Release) Instance(k InstanceKey) ReleaseInstance {
	return ReleaseInstance{Release: a, Key: k}
}

// ReleaseInstance names one instance of a release: release.db,
// release.api["eu"], release.worker[0].
type ReleaseInstance struct {
	Release Release
	Key     InstanceKey
}

func (a ReleaseInstance) String() string { return a.Release.String() + a.Key.String() }

// Less orders instance addresses by release name, then key (numerically for
// count), giving the stable order used everywhere.
func (a ReleaseInstance) Less(o ReleaseInstance) bool {
	if a.Release.Name != o.Release.Name {
		return a.Release.Name < o.Release.Name
	}
	return a.Key.less(o.Key)
}

// MarshalText makes addresses usable as JSON strings and map keys.
func (a ReleaseInstance) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText parses an address written by MarshalText.
func (a *ReleaseInstance) UnmarshalText(b []byte) error {
	addr, diags := ParseReleaseInstance(string(b))
	if diags.HasErrors() {
		return fmt.Errorf("%q is not a release address", b)
	}
	*a = addr
	return nil
}

// ParseReleaseInstance parses an address as written on the command line
// (for --target): `release.db`, `release.api["eu"]`, `release.x[0]`.
// A bare release name ("db") is accepted too.
func ParseReleaseInstance(s string) (ReleaseInstance, hcl.Diagnostics) {
	src := s
	if !strings.HasPrefix(src, "release.") {
		src = "release." + src
	}
	trav, diags := hclsyntax.ParseTraversalAbs([]byte(src), "<address>", hcl.InitialPos)
	if diags.HasErrors() {
		return ReleaseInstance{}, diags
	}
	bad := hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Invalid release address",
		Detail:   fmt.Sprintf("%q is not a release address. Expected release.NAME, release.NAME[INDEX] or release.NAME[\"KEY\"].", s),
	}}
	if len(trav) < 2 || len(trav) > 3 {
		return ReleaseInstance{}, bad
	}
	name, ok := trav[1].(hcl.TraverseAttr)
	if !ok {
		return ReleaseInstance{}, bad
	}
	addr := ReleaseInstance{Release: Release{Name: name.Name}}
	if len(trav) == 3 {
		idx, ok := trav[2].(hcl.TraverseIndex)
		if !ok {
			return ReleaseInstance{}, bad
		}
		k, ok := KeyFromValue(idx.Key)
		if !ok {
			return ReleaseInstance{}, bad
		}
		addr.Key = k
	}
	return addr, nil
}

// KeyFromValue converts a literal index into an instance key.
func KeyFromValue(v cty.Value) (InstanceKey, bool) {
	if v.IsNull() || !v.IsKnown() {
		return NoKey, false
	}
	switch v.Type() {
	case cty.String:
		return StringKey(v.AsString()), true
	case cty.Number:
		bf := v.AsBigFloat()
		if !bf.IsInt() {
			return NoKey, false
		}
		i, acc := bf.Int64()
		if acc != 0 || i < 0 || i > 1<<31 {
			return NoKey, false
		}
		return IntKey(int(i)), true
	}
	return NoKey, false
}
