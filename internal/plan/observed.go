package plan

import "strings"

// ObservationKind says how a saved plan's verification compares an
// observed object whose resourceVersion moved since the plan: which hash
// ObservedObject.Hash is (planner/verify.go computes and compares them).
type ObservationKind string

const (
	// ObservedAbsent: the object did not exist; it must not exist now.
	ObservedAbsent ObservationKind = "absent"
	// ObservedContent: the object's content without status and server
	// bookkeeping (planner.ContentHash), for objects the plan deletes.
	ObservedContent ObservationKind = "content"
	// ObservedShape: the object's content restricted to the fields the
	// saved rendering applies (planner.ShapeHash).
	ObservedShape ObservationKind = "shape"
	// ObservedApplied: what convoy's field manager applied of the object
	// and its uid, read from its metadata (planner.AppliedHash), for
	// releases a plan proved unchanged without reading whole objects.
	ObservedApplied ObservationKind = "applied"
)

// Legacy prefixes of ObservedObject.Hash in plan files of format version
// 5 and older, which had no Kind: "applied:" and "shape:" marked the
// kinds, a bare hash was content.
const (
	legacyAppliedPrefix = "applied:"
	legacyShapePrefix   = "shape:"
)

// UpgradeLegacy sets Kind on an observation decoded from a plan file of
// format version 5 or older, from its hash's prefix (which it strips), or
// from its empty resourceVersion (absent). Observations that have a Kind
// are left as they are.
func (o *ObservedObject) UpgradeLegacy() {
	if o.Kind != "" {
		return
	}
	if o.ResourceVersion == "" {
		o.Kind, o.Hash = ObservedAbsent, ""
		return
	}
	if h, ok := strings.CutPrefix(o.Hash, legacyAppliedPrefix); ok {
		o.Kind, o.Hash = ObservedApplied, h
	} else if h, ok := strings.CutPrefix(o.Hash, legacyShapePrefix); ok {
		o.Kind, o.Hash = ObservedShape, h
	} else {
		o.Kind = ObservedContent
	}
}
