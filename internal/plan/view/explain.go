package view

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/plan"
)

// ExplainQuery is what convoy explain asks about: a release (its address,
// `release.api` or `api`), optionally one of its objects (`Kind/name` or
// the printed reference `apps/v1 Deployment ns/name`) and a field path
// (`spec.replicas`, or a prefix of changed paths).
type ExplainQuery struct {
	Release, Object, Path string
}

// Explain writes the whole provenance chain of the changed fields the
// query selects: each origin with where it is written, what it read (via)
// and what it overrode. Values are masked as in the text plan; an
// unknown release or object is an error, a field that does not change is
// said to be unchanged.
func Explain(w io.Writer, p *plan.Plan, q ExplainQuery) error {
	r := findRelease(p, q.Release)
	if r == nil {
		return fmt.Errorf("the plan has no release %s", q.Release)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s (%s) namespace %s\n", r.Addr, r.Action, r.Namespace)
	if r.Attribution != "" {
		fmt.Fprintf(&b, "  attribution: %s\n", r.Attribution)
	}
	if r.KnownAfterApply {
		b.WriteString("  its values are known after apply: nothing is attributed before it is rendered\n")
	}
	found := false
	if q.Object == "" && !r.Values.Empty() {
		b.WriteString("  values:\n")
		for _, c := range r.Values.Changes {
			if q.Path == "" || plan.HasPrefix(c.Path, q.Path) {
				explainChange(&b, c, "    ", "where it is set is not recorded in this plan")
				found = true
			}
		}
	}
	matched := false
	for _, o := range r.Objects {
		if q.Object != "" && !objectMatches(o.Ref, q.Object) {
			continue
		}
		matched = true
		var cs []*plan.Change
		changed := map[string]bool{}
		if o.Diff != nil {
			for _, c := range o.Diff.Changes {
				changed[c.Path] = true
				if q.Path == "" || plan.HasPrefix(c.Path, q.Path) {
					cs = append(cs, c)
				}
			}
		}
		// Unchanged fields, traced when the plan explains the release.
		var same []string
		fields := r.Explained[o.Ref.Group+"/"+o.Ref.Kind+"/"+o.Ref.Name]
		for _, path := range slices.Sorted(maps.Keys(fields)) {
			if !changed[path] && (q.Path == "" || plan.HasPrefix(path, q.Path)) {
				same = append(same, path)
			}
		}
		if len(cs)+len(same) == 0 {
			if q.Object != "" {
				fmt.Fprintf(&b, "  %s %s: %s\n", objectSymbol[o.Action], o.Ref, unchangedNote(o, q.Path, r.Explained != nil))
			}
			continue
		}
		fmt.Fprintf(&b, "  %s %s\n", objectSymbol[o.Action], o.Ref)
		for _, c := range cs {
			explainChange(&b, c, "    ", "no changed input explains it (the revision number, a lookup or a random value a template prints), or it was not attributed")
			found = true
		}
		for _, path := range same {
			fmt.Fprintf(&b, "    = %s (unchanged)\n", path)
			for _, og := range fields[path] {
				explainOrigin(&b, og, "      ", "← ")
			}
			found = true
		}
	}
	if q.Object != "" && !matched {
		return fmt.Errorf("%s has no object %s in this plan", r.Addr, q.Object)
	}
	if !found && q.Object == "" {
		b.WriteString("  no field of it changes in this plan\n")
	}
	_, err := io.WriteString(w, p.Redactor().Text(b.String()))
	return err
}

// unchangedNote says what explain can tell of an object's fields that do
// not change.
func unchangedNote(o *plan.ObjectChange, path string, traced bool) string {
	what := "no field changes"
	if path != "" {
		what = path + " does not change"
	}
	switch {
	case traced && path != "":
		return what + " in this plan, and no values leaf of the release sets it (a constant of the chart, or computed without printing a value)"
	case traced:
		return what + " in this plan, and no values leaf of the release sets any of them"
	case o.Action == plan.ObjectCreate:
		return "created whole: its fields are not attributed"
	}
	return what + " in this plan (a saved plan does not trace unchanged fields: explain -C DIR does)"
}

func explainChange(b *bytes.Buffer, c *plan.Change, indent, none string) {
	var line bytes.Buffer
	writeChange(&line, c, indent)
	first, _, _ := strings.Cut(line.String(), "\n")
	b.WriteString(first + "\n")
	if len(c.Provenance) == 0 {
		fmt.Fprintf(b, "%s  ← %s\n", indent, none)
		return
	}
	if c.ProvenanceJoint {
		fmt.Fprintf(b, "%s  ← no input alone changes it; these together do:\n", indent)
	}
	for _, o := range c.Provenance {
		explainOrigin(b, o, indent+"  ", "← ")
	}
}

func explainOrigin(b *bytes.Buffer, o plan.Origin, indent, lead string) {
	fmt.Fprintf(b, "%s%s%s [%s]", indent, lead, o.Input, o.Kind)
	if s := o.Source.String(); s != "" {
		fmt.Fprintf(b, " at %s", s)
	}
	b.WriteString("\n")
	for _, v := range o.Via {
		explainOrigin(b, v, indent+"    ", "reads ")
	}
	for _, v := range o.Overrode {
		explainOrigin(b, v, indent+"    ", "overrode ")
	}
}

// findRelease finds a release by its address, with or without the
// "release." prefix.
func findRelease(p *plan.Plan, addr string) *plan.ReleaseChange {
	for _, r := range p.Releases {
		a := r.Addr.String()
		if a == addr || a == "release."+addr {
			return r
		}
	}
	return nil
}

// objectMatches reports whether ref is the object q names: its printed
// reference, or Kind/name (the kind in any case).
func objectMatches(ref plan.ObjectRef, q string) bool {
	if ref.String() == q {
		return true
	}
	kind, name, ok := strings.Cut(q, "/")
	return ok && strings.EqualFold(kind, ref.Kind) && name == ref.Name
}
