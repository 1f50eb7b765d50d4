package config

import (
	"github.com/convoy-sh/convoy/internal/stack/addrs"
	"github.com/hashicorp/hcl/v2"
)

// The release addresses live in internal/stack/addrs, which the plan shares;
// these names keep the configuration's code reading as it did.
type (
	InstanceKeyKind     = addrs.InstanceKeyKind
	InstanceKey         = addrs.InstanceKey
	ReleaseAddr         = addrs.Release
	ReleaseInstanceAddr = addrs.ReleaseInstance
)

// Instance key kinds.
const (
	NoKeyKind     = addrs.NoKeyKind
	IntKeyKind    = addrs.IntKeyKind
	StringKeyKind = addrs.StringKeyKind
)

// NoKey is the key of a release without count or for_each.
var NoKey = addrs.NoKey

// IntKey is the key of a count instance.
func IntKey(i int) InstanceKey { return addrs.IntKey(i) }

// StringKey is the key of a for_each instance.
func StringKey(s string) InstanceKey { return addrs.StringKey(s) }

// ParseReleaseInstanceAddr parses an address as written on the command line.
func ParseReleaseInstanceAddr(s string) (ReleaseInstanceAddr, hcl.Diagnostics) {
	return addrs.ParseReleaseInstance(s)
}
