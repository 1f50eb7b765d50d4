package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Summary counts a plan's actions.
type Summary struct {
	Install, Upgrade, Uninstall, Unchanged int
	// Drifted counts live objects that differ from what convoy applied.
	Drifted int
}

// Summary counts the plan's actions and drifted objects.
func (p *Plan) Summary() Summary {
	var s Summary
	for _, r := range p.Releases {
		switch r.Action {
		case ActionInstall:
			s.Install++
		case ActionUpgrade:
			s.Upgrade++
		case ActionUninstall:
			s.Uninstall++
		case ActionNoOp:
			s.Unchanged++
		}
		s.Drifted += len(r.Drift)
	}
	return s
}

func (s Summary) String() string {
	line := fmt.Sprintf("Plan: %d to install, %d to upgrade, %d to uninstall, %d unchanged.", s.Install, s.Upgrade, s.Uninstall, s.Unchanged)
	if s.Drifted > 0 {
		line += fmt.Sprintf(" Drift: %d %s.", s.Drifted, plural(s.Drifted, "object", "objects"))
	}
	return line
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

var actionSymbol = map[Action]string{ActionInstall: "+", ActionUpgrade: "~", ActionUninstall: "-", ActionNoOp: "="}

var objectSymbol = map[ObjectAction]string{ObjectCreate: "+", ObjectUpdate: "~", ObjectDelete: "-", ObjectReplace: "-/+", ObjectNoOp: "="}

var opSymbol = map[FieldOp]string{FieldAdd: "+", FieldRemove: "-", FieldChange: "~"}

// RenderText writes the plan for a terminal. Sensitive values are masked.
func RenderText(w io.Writer, p *Plan) error {
	var b bytes.Buffer
	writeText(&b, p)
	_, err := io.WriteString(w, p.redactor().text(b.String()))
	return err
}

func writeText(b *bytes.Buffer, p *Plan) {
	if !p.HasChanges() {
		fmt.Fprintf(b, "No changes. Stack %q matches the cluster.\n\n", p.Stack)
	} else {
		fmt.Fprintf(b, "convoy will perform these actions on stack %q:\n\n", p.Stack)
	}
	for _, r := range p.Releases {
		if r.Action == ActionNoOp {
			continue
		}
		writeRelease(b, r)
		b.WriteString("\n")
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
	b.WriteString(p.Summary().String() + "\n")
}

func writeDrift(b *bytes.Buffer, r *ReleaseChange) {
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

func writeRelease(b *bytes.Buffer, r *ReleaseChange) {
	fmt.Fprintf(b, "  %s %s (%s) namespace %s", actionSymbol[r.Action], r.Addr, r.Action, r.Namespace)
	if r.Cluster != "" {
		fmt.Fprintf(b, ", cluster %s", r.Cluster)
	}
	b.WriteString("\n")
	switch {
	case r.Chart.Changed() && r.Chart.Before != nil && r.Chart.After != nil:
		fmt.Fprintf(b, "      chart: %s %s → %s %s\n", r.Chart.Before.Name, r.Chart.Before.Version, r.Chart.After.Name, r.Chart.After.Version)
	case r.Chart.After != nil:
		fmt.Fprintf(b, "      chart: %s %s\n", r.Chart.After.Name, r.Chart.After.Version)
	case r.Chart.Before != nil:
		fmt.Fprintf(b, "      chart: %s %s\n", r.Chart.Before.Name, r.Chart.Before.Version)
	}
	if r.KnownAfterApply {
		b.WriteString("      values: (known after apply): rendered when its dependencies are applied\n")
		return
	}
	if !r.Values.Empty() {
		b.WriteString("      values:\n")
		writeDiff(b, r.Values, "        ")
	}
	for _, h := range r.Hooks {
		fmt.Fprintf(b, "      hook %s: %s %s\n", strings.Join(h.Events, ","), h.Kind, h.Name)
	}
	for _, o := range r.Objects {
		if o.Action == ObjectNoOp && o.Reason == "" {
			continue
		}
		fmt.Fprintf(b, "      %s %s", objectSymbol[o.Action], o.Ref)
		if o.Reason != "" {
			fmt.Fprintf(b, " (%s)", o.Reason)
		}
		b.WriteString("\n")
		if o.Action == ObjectUpdate || o.Action == ObjectReplace {
			writeDiff(b, o.Diff, "          ")
		}
	}
}

func writeDiff(b *bytes.Buffer, d *Diff, indent string) {
	if d == nil {
		return
	}
	for _, c := range d.Changes {
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
		case c.Op == FieldAdd:
			fmt.Fprintf(b, "%s+ %s: %s%s\n", indent, path, formatValue(c.After), manager)
		case c.Op == FieldRemove:
			fmt.Fprintf(b, "%s- %s: %s%s\n", indent, path, formatValue(c.Before), manager)
		default:
			fmt.Fprintf(b, "%s~ %s: %s → %s%s\n", indent, path, formatValue(c.Before), formatValue(c.After), manager)
		}
	}
}

// formatValue prints a value compactly: strings quoted, structures as JSON.
func formatValue(v any) string {
	if s, ok := v.(string); ok && s == SensitivePlaceholder {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const maxLen = 200
	if len(b) > maxLen {
		return string(b[:maxLen]) + "…"
	}
	return string(b)
}

// RenderMarkdown writes a summary fit for a pull-request comment: the
// summary line, a table of releases, and each changed release's diff in a
// collapsed block.
func RenderMarkdown(w io.Writer, p *Plan) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "### convoy plan: stack `%s`\n\n**%s**\n\n", p.Stack, p.Summary())
	if len(p.Releases) > 0 {
		b.WriteString("| Release | Namespace | Action | Chart | Objects changed | Drift |\n|---|---|---|---|---|---|\n")
		for _, r := range p.Releases {
			chartStr := ""
			switch {
			case r.Chart.Changed() && r.Chart.Before != nil && r.Chart.After != nil:
				chartStr = fmt.Sprintf("%s %s → %s", r.Chart.Before.Name, r.Chart.Before.Version, r.Chart.After.Version)
			case r.Chart.After != nil:
				chartStr = r.Chart.After.Name + " " + r.Chart.After.Version
			case r.Chart.Before != nil:
				chartStr = r.Chart.Before.Name + " " + r.Chart.Before.Version
			}
			objs := "-"
			if r.KnownAfterApply {
				objs = "(known after apply)"
			} else if r.Action != ActionNoOp {
				n := 0
				for _, o := range r.Objects {
					if o.Action != ObjectNoOp {
						n++
					}
				}
				objs = fmt.Sprint(n)
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s %s | %s | %s | %d |\n", r.Addr, r.Namespace, actionSymbol[r.Action], r.Action, chartStr, objs, len(r.Drift))
		}
		b.WriteString("\n")
	}
	for _, r := range p.Releases {
		if r.Action == ActionNoOp && len(r.Drift) == 0 {
			continue
		}
		var d bytes.Buffer
		writeRelease(&d, r)
		if len(r.Drift) > 0 {
			d.WriteString("\n  Drift (changed outside convoy):\n")
			writeDrift(&d, r)
		}
		fmt.Fprintf(&b, "<details><summary><code>%s</code> (%s)</summary>\n\n```diff\n%s```\n\n</details>\n\n", r.Addr, r.Action, diffGutter(d.String()))
	}
	var warn []string
	for _, r := range p.Releases {
		for _, w := range r.Warnings {
			warn = append(warn, fmt.Sprintf("- `%s`: %s", r.Addr, w))
		}
	}
	if len(warn) > 0 {
		b.WriteString("**Warnings**\n\n" + strings.Join(warn, "\n") + "\n")
	}
	_, err := io.WriteString(w, p.redactor().text(b.String()))
	return err
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
