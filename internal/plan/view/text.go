// Package view prints plans: text for terminals, JSON (docs/plan-json.md)
// and markdown for pull-request comments. Renderers only walk the plan's
// precomputed data; sensitive values are masked in all of them.
package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/convoy-sh/convoy/internal/plan"
)

var actionSymbol = map[plan.Action]string{plan.ActionInstall: "+", plan.ActionUpgrade: "~", plan.ActionUninstall: "-", plan.ActionNoOp: "=", plan.ActionForget: "."}

var objectSymbol = map[plan.ObjectAction]string{plan.ObjectCreate: "+", plan.ObjectUpdate: "~", plan.ObjectDelete: "-", plan.ObjectReplace: "-/+", plan.ObjectNoOp: "="}

var opSymbol = map[plan.FieldOp]string{plan.FieldAdd: "+", plan.FieldRemove: "-", plan.FieldChange: "~"}

// Detail says how much of each release the text view prints.
type Detail int

const (
	// Full prints values diffs, hooks, objects and their field diffs.
	Full Detail = iota
	// Compact prints the actions only: each changing release and the
	// objects it creates, updates, replaces or deletes.
	Compact
)

// TextOptions choose how the text view prints.
type TextOptions struct {
	Detail Detail
	// Color marks the action symbols with ANSI colours: + green, ~ yellow,
	// - red, -/+ magenta.
	Color bool
}

// Text writes the plan for a terminal, without colour. Sensitive values
// are masked.
func Text(w io.Writer, p *plan.Plan) error { return TextWith(w, p, TextOptions{}) }

// TextWith writes the plan for a terminal as o says. Sensitive values are
// masked.
func TextWith(w io.Writer, p *plan.Plan, o TextOptions) error {
	var b bytes.Buffer
	writeText(&b, p, o.Detail)
	out := p.Redactor().Text(b.String())
	if o.Color {
		out = colorize(out)
	}
	_, err := io.WriteString(w, out)
	return err
}

func writeText(b *bytes.Buffer, p *plan.Plan, detail Detail) {
	stack := stackName(p)
	switch {
	case p.Destroy && !p.HasChanges():
		fmt.Fprintf(b, "Nothing to destroy: no release of stack %s is installed.\n\n", stack)
	case p.Destroy:
		fmt.Fprintf(b, "convoy will destroy stack %s:\n\n", stack)
	case !p.HasChanges():
		fmt.Fprintf(b, "No changes. Stack %s matches the cluster.\n\n", stack)
	default:
		fmt.Fprintf(b, "convoy will perform these actions on stack %s:\n\n", stack)
	}
	writeSelection(b, p)
	writeMoves(b, p)
	shown := map[string]bool{}
	for _, r := range p.Releases {
		if r.Action == plan.ActionNoOp {
			if r.Rename != nil {
				fmt.Fprintf(b, "  ~ %s (finish rename) namespace %s\n      apply deletes the records of %s\n\n", r.Addr, r.Namespace, r.Rename.From)
			}
			// A dependent of a changing release that stays as it is says
			// why (it would otherwise be expected to upgrade with it).
			for _, why := range r.Reasons {
				if why.Kind == plan.ReasonDependency {
					fmt.Fprintf(b, "  = %s (no-op) namespace %s\n      no-op: %s\n\n", r.Addr, r.Namespace, why.Detail)
				}
			}
			continue
		}
		if r.Action == plan.ActionForget {
			writeForget(b, r, stack)
			continue
		}
		writeRelease(b, r, detail)
		writeReleasePolicies(b, p, r)
		shown[r.Addr.String()] = true
		b.WriteString("\n")
	}
	if detail == Compact {
		writePolicySummary(b, p, shown)
		b.WriteString(p.Summary().String() + "\n")
		writeImpactSummary(b, p)
		return
	}
	var drifted bool
	for _, r := range p.Releases {
		if len(r.Drift) > 0 {
			drifted = true
		}
	}
	if drifted {
		b.WriteString("Drift: objects changed outside convoy since it last applied them:\n\n")
		for _, r := range p.Releases {
			writeDrift(b, r)
		}
		b.WriteString("\n")
	}
	warned := false
	for _, r := range p.Releases {
		for _, w := range r.Warnings {
			fmt.Fprintf(b, "Warning: %s: %s\n", r.Addr, w)
			warned = true
		}
	}
	if warned {
		b.WriteString("\n")
	}
	writeDeprecations(b, p)
	writePolicySummary(b, p, shown)
	b.WriteString(p.Summary().String() + "\n")
	writeImpactSummary(b, p)
}

func writeDrift(b *bytes.Buffer, r *plan.ReleaseChange) {
	for _, d := range r.Drift {
		fmt.Fprintf(b, "  %s: %s\n", r.Addr, d.Ref)
		if d.Missing {
			b.WriteString("      the object was deleted\n")
		}
		writeDiff(b, d.Diff, "      ")
		switch {
		case d.Corrected:
			b.WriteString("      apply restores it\n")
		case d.Note != "":
			fmt.Fprintf(b, "      apply does not restore it: %s\n", d.Note)
		default:
			b.WriteString("      apply does not restore it (convoy does not set these fields)\n")
		}
	}
}

func writeRelease(b *bytes.Buffer, r *plan.ReleaseChange, detail Detail) {
	switch {
	case r.Refused() && r.Owner != "" && !r.Adopt:
		fmt.Fprintf(b, "  ! %s (refused: owned by stack %q) namespace %s", r.Addr, r.Owner, r.Namespace)
	case r.Refused() && r.Takeover != nil && !r.Takeover.Allowed:
		fmt.Fprintf(b, "  ! %s (refused: %s) namespace %s", r.Addr, r.Takeover.By(), r.Namespace)
	case r.Refused():
		fmt.Fprintf(b, "  ! %s (refused: %d %s owned by other releases) namespace %s", r.Addr, len(r.Conflicts), plural(len(r.Conflicts), "object", "objects"), r.Namespace)
	case r.Adopt:
		fmt.Fprintf(b, "  %s %s (%s, adopted from stack %q) namespace %s", actionSymbol[r.Action], r.Addr, r.Action, r.Owner, r.Namespace)
	default:
		fmt.Fprintf(b, "  %s %s (%s) namespace %s", actionSymbol[r.Action], r.Addr, r.Action, r.Namespace)
	}
	if r.Cluster != "" {
		fmt.Fprintf(b, ", cluster %s", r.Cluster)
	}
	b.WriteString("\n")
	if r.Interrupted != nil {
		fmt.Fprintf(b, "      %s\n", r.Interrupted)
	}
	writeRenameObjects(b, r)
	for _, c := range r.Conflicts {
		fmt.Fprintf(b, "      ! %s\n", c)
	}
	if r.Refused() {
		return
	}
	writeImpact(b, r)
	if detail == Compact {
		for _, o := range r.Objects {
			if o.Action != plan.ObjectNoOp {
				fmt.Fprintf(b, "      %s %s\n", objectSymbol[o.Action], o.Ref)
			}
		}
		writeClaimExpansions(b, r)
		return
	}
	if len(r.Reasons) > 0 {
		why := make([]string, len(r.Reasons))
		for i, rs := range r.Reasons {
			why[i] = rs.String()
		}
		fmt.Fprintf(b, "      why: %s\n", strings.Join(why, "; "))
	}
	if r.Attribution != "" {
		fmt.Fprintf(b, "      attribution: %s\n", r.Attribution)
	}
	if r.Prunes != nil {
		fmt.Fprintf(b, "      history: %s\n", r.Prunes)
	}
	writeStoredAPIs(b, r)
	// A promoted chart says where it comes from (convoy promote --from-env).
	promoted := ""
	if pf := r.PromotedFrom; pf != nil {
		promoted = fmt.Sprintf(" promoted from %s (revision %d)", pf.Environment, pf.Revision)
	}
	switch {
	case r.Chart.Changed() && r.Chart.Before != nil && r.Chart.After != nil:
		fmt.Fprintf(b, "      chart: %s %s → %s %s%s\n", r.Chart.Before.Name, r.Chart.Before.Version, r.Chart.After.Name, r.Chart.After.Version, promoted)
	case r.Chart.After != nil:
		fmt.Fprintf(b, "      chart: %s %s%s\n", r.Chart.After.Name, r.Chart.After.Version, promoted)
	case r.Chart.Before != nil:
		fmt.Fprintf(b, "      chart: %s %s\n", r.Chart.Before.Name, r.Chart.Before.Version)
	}
	if r.KnownAfterApply {
		b.WriteString("      values: (known after apply): rendered when its dependencies are applied\n")
		if r.PoliciesAtApply {
			b.WriteString("      policies: checked at apply, on what it renders then (a denial stops it before anything of it is applied)\n")
		}
		return
	}
	if !r.Values.Empty() {
		b.WriteString("      values:\n")
		writeDiff(b, r.Values, "        ")
	}
	for _, h := range r.Hooks {
		fmt.Fprintf(b, "      hook %s: %s %s\n", strings.Join(h.Events, ","), h.Kind, h.Name)
	}
	for i := 0; i < len(r.Objects); i++ {
		o := r.Objects[i]
		if o.Action == plan.ObjectNoOp && o.Reason == "" {
			continue
		}
		// Many unchanged objects of one kind for one reason (a chart's
		// crds/ on upgrade) are one line.
		if n := sameNoOps(r.Objects[i:]); n > 3 {
			fmt.Fprintf(b, "      = %d × %s %s (%s)\n", n, o.Ref.APIVersion(), o.Ref.Kind, o.Reason)
			i += n - 1
			continue
		}
		fmt.Fprintf(b, "      %s %s", objectSymbol[o.Action], o.Ref)
		if o.Reason != "" {
			fmt.Fprintf(b, " (%s)", o.Reason)
		}
		b.WriteString("\n")
		if o.Action == plan.ObjectUpdate || o.Action == plan.ObjectReplace {
			writeDiff(b, o.Diff, "          ")
		}
		for _, l := range o.CRD.Lines() {
			fmt.Fprintf(b, "          %s\n", l)
		}
	}
	writeClaimExpansions(b, r)
}

// writeClaimExpansions writes the claims apply resizes (expand_claims),
// after the objects: apply resizes them once the StatefulSets are applied.
func writeClaimExpansions(b *bytes.Buffer, r *plan.ReleaseChange) {
	for _, e := range r.ClaimExpansions {
		fmt.Fprintf(b, "      %s %s %s: storage %s → %s (expand_claims)\n",
			objectSymbol[plan.ObjectUpdate], e.Ref.Kind, e.Ref.Name, e.From, e.To)
	}
}

func writeDiff(b *bytes.Buffer, d *plan.Diff, indent string) {
	if d == nil {
		return
	}
	for _, c := range d.Changes {
		start := b.Len()
		writeChange(b, c, indent)
		// The inputs that changed it, after its first line.
		if note := plan.ProvenanceText(c); note != "" {
			text := b.String()[start:]
			end := strings.IndexByte(text, '\n')
			if end < 0 {
				end = len(text)
			}
			b.Truncate(start)
			b.WriteString(text[:end] + "  " + note + text[end:])
		}
	}
}

// writeChange writes one change of a diff.
func writeChange(b *bytes.Buffer, c *plan.Change, indent string) {
	path := c.Path
	if path == "" {
		path = "(whole value)"
	}
	manager := ""
	if c.Manager != "" {
		manager = fmt.Sprintf(" (field manager %q)", c.Manager)
	}
	switch {
	case c.Lines != nil:
		fmt.Fprintf(b, "%s%s %s:%s\n", indent, opSymbol[c.Op], path, manager)
		for _, l := range c.Lines {
			fmt.Fprintf(b, "%s    %s\n", indent, l)
		}
	case c.Op == plan.FieldAdd:
		writeLeaves(b, indent, "+", c.Path, c.After, manager)
	case c.Op == plan.FieldRemove:
		writeLeaves(b, indent, "-", c.Path, c.Before, manager)
	case isStructure(c.Before) || isStructure(c.After):
		writeStructureChange(b, indent, c, manager)
	default:
		fmt.Fprintf(b, "%s~ %s: %s → %s%s\n", indent, path, formatValue(c.Before), formatValue(c.After), manager)
	}
}

// writeLeaves prints an added or removed value as one line per leaf, at
// its YAML path: `+ image.tag: "1.2"`.
func writeLeaves(b *bytes.Buffer, indent, sym, path string, v any, manager string) {
	for _, l := range plan.Leaves(path, v) {
		p := l.Path
		if p == "" {
			p = "(whole value)"
		}
		fmt.Fprintf(b, "%s%s %s: %s%s\n", indent, sym, p, formatValue(l.Value), manager)
	}
}

// writeStructureChange prints a change of or to a structure (a list whose
// length changes, a map that becomes a scalar) leaf by leaf: the leaves
// that go or change their value with -, the new ones with +.
func writeStructureChange(b *bytes.Buffer, indent string, c *plan.Change, manager string) {
	before, after := plan.Leaves(c.Path, c.Before), plan.Leaves(c.Path, c.After)
	same := func(l plan.Leaf, in []plan.Leaf) bool {
		for _, o := range in {
			if o.Path == l.Path && formatValue(o.Value) == formatValue(l.Value) {
				return true
			}
		}
		return false
	}
	for _, l := range before {
		if !same(l, after) {
			writeLeaves(b, indent, "-", l.Path, l.Value, manager)
		}
	}
	for _, l := range after {
		if !same(l, before) {
			writeLeaves(b, indent, "+", l.Path, l.Value, manager)
		}
	}
}

func isStructure(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// formatValue prints a leaf as a YAML scalar: strings double-quoted,
// numbers, booleans and null as they are, empty structures as {} and [];
// without HTML escapes (a probe's `$(< file)` reads as written), cut
// between characters when long.
func formatValue(v any) string {
	if s, ok := v.(string); ok && s == plan.SensitivePlaceholder {
		return s
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	const maxLen = 200
	if len(b) > maxLen {
		n := maxLen
		for n > 0 && !utf8.RuneStart(b[n]) {
			n--
		}
		return string(b[:n]) + "…"
	}
	return string(b)
}

// ANSI colours of the action symbols.
const (
	ansiReset   = "\x1b[0m"
	ansiRed     = "\x1b[31m"
	ansiGreen   = "\x1b[32m"
	ansiYellow  = "\x1b[33m"
	ansiMagenta = "\x1b[35m"
)

var symbolColor = []struct{ sym, color string }{
	{"-/+ ", ansiMagenta}, {"+ ", ansiGreen}, {"- ", ansiRed}, {"~ ", ansiYellow},
}

// colorize colours the action symbol that starts a line (after its
// indent); unified-diff lines and everything else stay as they are.
func colorize(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		body := strings.TrimLeft(l, " ")
		indent := l[:len(l)-len(body)]
		for _, sc := range symbolColor {
			if strings.HasPrefix(body, sc.sym) {
				sym := strings.TrimSuffix(sc.sym, " ")
				lines[i] = indent + sc.color + sym + ansiReset + body[len(sym):]
				break
			}
		}
	}
	return strings.Join(lines, "")
}

// diffGutter moves each line's change symbol to the first column, where a
// ```diff block colours it: "+" and "-" as they are, "~" and "-/+" as "!".
func diffGutter(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		body := strings.TrimLeft(l, " ")
		indent := len(l) - len(body)
		for _, sym := range []string{"-/+ ", "+ ", "- ", "~ "} {
			if strings.HasPrefix(body, sym) {
				mark := sym[:1]
				if sym == "~ " || sym == "-/+ " {
					mark = "!"
				}
				lines[i] = mark + strings.Repeat(" ", indent) + body
				break
			}
		}
		if lines[i] == l && l != "\n" && l != "" {
			lines[i] = " " + l
		}
	}
	return strings.Join(lines, "")
}

// sameNoOps counts the no-op objects at the start of objs that share the
// first one's kind and reason.
func sameNoOps(objs []*plan.ObjectChange) int {
	n := 0
	for _, o := range objs {
		if o.Action != plan.ObjectNoOp || o.Reason == "" || o.Ref.Kind != objs[0].Ref.Kind || o.Ref.APIVersion() != objs[0].Ref.APIVersion() || o.Reason != objs[0].Reason {
			break
		}
		n++
	}
	return n
}

// writeSelection says what a plan limited by --target or -l covers, and
// which releases --include-deps added and why.
func writeSelection(b *bytes.Buffer, p *plan.Plan) {
	if len(p.Targets) == 0 {
		return
	}
	fmt.Fprintf(b, "Selected: %s", strings.Join(strs(p.Targets), ", "))
	for _, s := range p.Selectors {
		fmt.Fprintf(b, " (-l %s)", s)
	}
	b.WriteString("\n")
	for _, r := range p.Releases {
		if len(r.IncludedFor) > 0 {
			fmt.Fprintf(b, "Included: %s, a dependency of %s (--include-deps)\n", r.Addr, strings.Join(strs(r.IncludedFor), ", "))
		}
	}
	b.WriteString("\n")
}

// stackName is the quoted stack name, with its environment if any.
func stackName(p *plan.Plan) string {
	if p.Environment == "" {
		return fmt.Sprintf("%q", p.Stack)
	}
	return fmt.Sprintf("%q (environment %q)", p.Stack, p.Environment)
}
