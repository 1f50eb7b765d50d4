package plan

import "fmt"

// StoredAPI is a removed API version a stored revision of the release
// names, whose objects the plan read and compared as its successor's
// (internal/cluster/apimap). Apply writes the next revision as the chart renders
// it; the stored revision is left as it was.
type StoredAPI struct {
	// Revision is the stored revision that names it.
	Revision int
	// From is the removed API version and kind ("policy/v1beta1",
	// "PodDisruptionBudget"); To the API version it was compared as.
	FromAPIVersion, Kind, ToAPIVersion string
	// RemovedIn is the Kubernetes release that stopped serving it ("1.25";
	// "" when the API map does not say).
	RemovedIn string `json:",omitempty"`
}

func (s StoredAPI) String() string {
	removed := "no longer served"
	if s.RemovedIn != "" {
		removed = "removed in " + s.RemovedIn
	}
	return fmt.Sprintf("stored revision %d names %s %s, %s: compared as %s", s.Revision, s.FromAPIVersion, s.Kind, removed, s.ToAPIVersion)
}

// Deprecation is an object the release applies whose API version the
// target Kubernetes release (ReleaseChange.KubeTarget) deprecates or has
// removed.
type Deprecation struct {
	Ref ObjectRef
	// DeprecatedIn and RemovedIn are Kubernetes releases ("1.21", "1.25");
	// "" when the API map does not say.
	DeprecatedIn string `json:",omitempty"`
	RemovedIn    string `json:",omitempty"`
	// Removed: the target release no longer serves it.
	Removed bool `json:",omitempty"`
	// Replacement is the API version that replaces it ("" when none does).
	Replacement string `json:",omitempty"`
}

func (d Deprecation) String() string {
	s := d.Ref.String() + ": "
	switch {
	case d.Removed:
		s += "removed in " + d.RemovedIn
	case d.RemovedIn != "":
		s += "deprecated in " + d.DeprecatedIn + ", removed in " + d.RemovedIn
	default:
		s += "deprecated in " + d.DeprecatedIn
	}
	if d.Replacement != "" {
		return s + ", use " + d.Replacement
	}
	return s + ", with no replacement"
}
