package addrs

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
)

// labelValueRE is what a Kubernetes label value may be.
var labelValueRE = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)

// LabelValue is the address as a Kubernetes label value, for the records
// a release writes: release.web, release.web.0 (count), release.web.k.eu
// (for_each). Release names hold no dots, so these never collide. An
// address that does not fit a label value (a key with other characters,
// longer than 63 characters) is "h." and a hash of its String: it can
// only be compared, never read back.
func (a ReleaseInstance) LabelValue() string {
	v := "release." + a.Release.Name
	switch a.Key.Kind {
	case IntKeyKind:
		v += "." + strconv.Itoa(a.Key.Int)
	case StringKeyKind:
		v += ".k." + a.Key.Str
	}
	if len(v) <= 63 && labelValueRE.MatchString(v) {
		return v
	}
	sum := sha256.Sum256([]byte(a.String()))
	return "h." + hex.EncodeToString(sum[:])[:40]
}

// LabelOf reports whether a label value written by LabelValue names an
// instance of the release: its own instance without a key, or a keyed one
// whose label value is readable.
func (a Release) LabelOf(v string) bool {
	p := "release." + a.Name
	return v == p || (len(v) > len(p) && v[:len(p)+1] == p+".")
}
