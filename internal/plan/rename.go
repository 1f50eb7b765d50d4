package plan

import (
	"fmt"
	"strings"
)

// ReasonRename is why a renamed release changes: its records and objects
// move to its new Helm name.
const ReasonRename ReasonKind = "rename"

// Rename is a release a moved block gives a new Helm name in the same
// namespace and cluster (ReleaseChange.Name is the new one). Apply copies
// the old release's records under the new name (every revision, with
// where it came from), deploys the new revision as an upgrade, then
// deletes the old records; objects whose names do not change keep their
// identity, the others are created anew and the old ones deleted.
type Rename struct {
	// From is the old Helm release name.
	From string
	// FromRevision and FromStatus are the old release's newest record as
	// the plan saw it; ToRevision and ToStatus the new name's own newest
	// record (0 and "": none yet), for a saved plan's verification.
	FromRevision int
	FromStatus   string
	ToRevision   int    `json:",omitempty"`
	ToStatus     string `json:",omitempty"`
	// State is how far an earlier, interrupted apply got.
	State RenameState
	// Copied is how many old revisions are copied already (RenameCopied).
	Copied int `json:",omitempty"`
	// Revisions is how many old revisions the rename copies.
	Revisions int
	// Objects are the old release's objects and what becomes of them.
	Objects []RenamedObject `json:",omitempty"`
}

// RenameState is how far a rename got.
type RenameState string

// Rename states, in the order apply reaches them.
const (
	// RenameNotStarted: nothing is written yet.
	RenameNotStarted RenameState = "not-started"
	// RenameCopied: an interrupted apply copied old revisions (Copied of
	// Revisions) under the new name, and wrote no new revision.
	RenameCopied RenameState = "history-copied"
	// RenameDeployed: the new name has its own newest revision (ToRevision,
	// ToStatus); the old records remain.
	RenameDeployed RenameState = "new-revision-written"
)

// RenamedObject is an object of the old release: Kept when the new
// release renders it under the same kind, namespace and name and it can be
// updated (it is re-labelled and re-annotated, never deleted: its uid
// stays); Recreated when it is rendered under the same name but an
// immutable field of it changes (a StatefulSet whose spec.selector holds
// the release name): it is deleted and created again under its name, with
// a new uid, for Why; otherwise replaced, by ReplacedBy when the new
// release renders one of its kind named after the new release (nil:
// none).
type RenamedObject struct {
	Ref        ObjectRef
	Kept       bool       `json:",omitempty"`
	Recreated  bool       `json:",omitempty"`
	Why        string     `json:",omitempty"`
	ReplacedBy *ObjectRef `json:",omitempty"`
}

// RenameLine is what a plan says of a renamed release:
// "release.old (web) will be renamed to release.new (web2)".
func (r *ReleaseChange) RenameLine() string {
	rn := r.Rename
	if rn == nil {
		return ""
	}
	from := rn.From
	if r.MovedFrom != nil {
		from = fmt.Sprintf("%s (%s)", r.MovedFrom, rn.From)
	}
	line := fmt.Sprintf("%s will be renamed to %s (%s)", from, r.Addr, r.Name)
	if s := rn.StateLine(); s != "" {
		line += "; " + s
	}
	return line
}

// StateLine says how far an interrupted rename got ("" when it has not
// started).
func (rn *Rename) StateLine() string {
	switch rn.State {
	case RenameCopied:
		return fmt.Sprintf("rename of %s interrupted: history copied (%d of %d revisions), old records remain", rn.From, rn.Copied, rn.Revisions)
	case RenameDeployed:
		return fmt.Sprintf("rename of %s interrupted: revision %d (%s) written under the new name, old records remain", rn.From, rn.ToRevision, rn.ToStatus)
	}
	return ""
}

// ObjectLines say per object of the old release whether it keeps its
// identity or is replaced.
func (rn *Rename) ObjectLines() []string {
	var out []string
	for _, o := range rn.Objects {
		switch {
		case o.Kept:
			out = append(out, fmt.Sprintf("%s keeps its identity (re-labelled to the new release)", o.Ref))
		case o.Recreated:
			out = append(out, fmt.Sprintf("%s is replaced under its name, deleted and created again with a new uid: %s", o.Ref, o.Why))
		case o.ReplacedBy != nil:
			out = append(out, fmt.Sprintf("%s is replaced by %s (the new one created, the old one deleted once the new release is ready)", o.Ref, *o.ReplacedBy))
		default:
			out = append(out, fmt.Sprintf("%s is deleted (the new release does not render it)", o.Ref))
		}
	}
	return out
}

// Renamed returns the releases of the plan that are renamed.
func (p *Plan) Renamed() []*ReleaseChange {
	var out []*ReleaseChange
	for _, r := range p.Releases {
		if r.Rename != nil {
			out = append(out, r)
		}
	}
	return out
}

// RenameObjects pairs the old release's objects with the new one's: an
// object rendered under the same identity is kept; one whose name holds
// the old release name is replaced by the new object of the same kind
// and namespace whose name is it with the new release name.
func RenameObjects(from, to string, old, next []ObjectRef) []RenamedObject {
	type id struct{ group, kind, namespace, name string }
	idOf := func(r ObjectRef) id { return id{r.Group, r.Kind, r.Namespace, r.Name} }
	in := map[id]ObjectRef{}
	for _, r := range next {
		in[idOf(r)] = r
	}
	var out []RenamedObject
	for _, r := range old {
		o := RenamedObject{Ref: r}
		if _, ok := in[idOf(r)]; ok {
			o.Kept = true
		} else if strings.Contains(r.Name, from) {
			want := r
			want.Name = strings.Replace(r.Name, from, to, 1)
			if n, ok := in[idOf(want)]; ok {
				o.ReplacedBy = &n
			}
		}
		out = append(out, o)
	}
	return out
}

// MarkRecreated turns the objects of renamed that the new release renders
// under their identity but replaces (objs: the release's object changes;
// an immutable field changes, as a selector holding the release name)
// from kept into recreated, with why.
func MarkRecreated(renamed []RenamedObject, objs []*ObjectChange) {
	type id struct{ group, kind, namespace, name string }
	replaced := map[id]*ObjectChange{}
	for _, o := range objs {
		if o.Action == ObjectReplace {
			replaced[id{o.Ref.Group, o.Ref.Kind, o.Ref.Namespace, o.Ref.Name}] = o
		}
	}
	for i := range renamed {
		r := &renamed[i]
		if o := replaced[id{r.Ref.Group, r.Ref.Kind, r.Ref.Namespace, r.Ref.Name}]; r.Kept && o != nil {
			r.Kept, r.Recreated, r.Why = false, true, ReplaceWhy(o)
		}
	}
}
