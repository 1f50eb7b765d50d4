package view

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/convoy-sh/convoy/internal/plan"
)

// MarkdownLimit is the size of a GitHub pull-request comment: a markdown
// plan stays under it.
const MarkdownLimit = 65536

// shortDiffLines is the longest release diff shown open; longer ones are
// collapsed in <details>.
const shortDiffLines = 12

// maxNamed is how many release addresses a one-line list names.
const maxNamed = 20

// Markdown writes a summary fit for a pull-request comment: the summary
// line, a table of the releases that change or drifted, the unchanged ones
// on one line, and each changed release's diff (collapsed when long). It
// stays under MarkdownLimit bytes (and so characters), saying what it cut.
// Sensitive values are masked.
func Markdown(w io.Writer, p *plan.Plan) error {
	_, err := io.WriteString(w, markdown(p, MarkdownLimit))
	return err
}

func markdown(p *plan.Plan, limit int) string {
	red := p.Redactor()
	var changed, unchanged []*plan.ReleaseChange
	for _, r := range p.Releases {
		if r.Action == plan.ActionNoOp && len(r.Drift) == 0 {
			unchanged = append(unchanged, r)
		} else {
			changed = append(changed, r)
		}
	}

	var b strings.Builder
	env := ""
	if p.Environment != "" {
		env = fmt.Sprintf(", environment `%s`", p.Environment)
	}
	fmt.Fprintf(&b, "### convoy plan: stack `%s`%s\n\n**%s**\n\n", p.Stack, env, p.Summary())
	b.WriteString(red.Text(markdownPolicies(p)))
	b.WriteString(red.Text(markdownPoliciesAtApply(p)))
	if s := p.ImpactSummary().String(); s != "" {
		b.WriteString(red.Text(s) + "\n\n")
	}
	// The note on what was cut, and the closing lines, always fit.
	const reserve = 4096
	budget := limit - 1 - reserve
	fits := func(s string) bool { return b.Len()+len(s) <= budget }

	b.WriteString(red.Text(markdownMoves(p)))
	var cutRows, cutDiffs []string
	if len(changed) > 0 {
		b.WriteString("| Release | Namespace | Action | Chart | Objects changed | Drift |\n|---|---|---|---|---|---|\n")
		for _, r := range changed {
			row := red.Text(tableRow(r))
			if !fits(row) {
				cutRows = append(cutRows, r.Addr.String())
				continue
			}
			b.WriteString(row)
		}
		b.WriteString("\n")
	}
	if len(unchanged) > 0 {
		var names []string
		for _, r := range unchanged {
			names = append(names, r.Addr.String())
		}
		fmt.Fprintf(&b, "%d unchanged: %s\n\n", len(unchanged), red.Text(nameList(names)))
	}
	for _, r := range changed {
		block := red.Text(releaseBlock(r))
		if !fits(block) {
			cutDiffs = append(cutDiffs, r.Addr.String())
			continue
		}
		b.WriteString(block)
	}
	var warn []string
	for _, r := range p.Releases {
		for _, w := range r.Warnings {
			warn = append(warn, red.Text(fmt.Sprintf("- `%s`: %s", r.Addr, w)))
		}
	}
	cutWarnings := 0
	if len(warn) > 0 && fits("**Warnings**\n\n") {
		b.WriteString("**Warnings**\n\n")
		for _, w := range warn {
			if !fits(w + "\n") {
				cutWarnings++
				continue
			}
			b.WriteString(w + "\n")
		}
	} else {
		cutWarnings = len(warn)
	}
	headings, lines := deprecationLines(p)
	cutDeprecations := 0
	for _, h := range headings {
		if !fits("**" + h + "**\n\n") {
			cutDeprecations += len(lines[h])
			continue
		}
		b.WriteString("\n**" + h + "**\n\n")
		for _, l := range lines[h] {
			l = red.Text("- " + l + "\n")
			if !fits(l) {
				cutDeprecations++
				continue
			}
			b.WriteString(l)
		}
	}
	if len(cutRows)+len(cutDiffs)+cutWarnings+cutDeprecations > 0 {
		var what []string
		if len(cutRows) > 0 {
			what = append(what, fmt.Sprintf("the table rows of %d %s (%s)", len(cutRows), plural(len(cutRows), "release", "releases"), nameList(cutRows)))
		}
		if len(cutDiffs) > 0 {
			what = append(what, fmt.Sprintf("the diffs of %d %s (%s)", len(cutDiffs), plural(len(cutDiffs), "release", "releases"), nameList(cutDiffs)))
		}
		if cutWarnings > 0 {
			what = append(what, fmt.Sprintf("%d %s", cutWarnings, plural(cutWarnings, "warning", "warnings")))
		}
		if cutDeprecations > 0 {
			what = append(what, fmt.Sprintf("%d deprecated %s", cutDeprecations, plural(cutDeprecations, "API", "APIs")))
		}
		note := fmt.Sprintf("\n**Cut to stay under a pull-request comment's %d characters:** %s. `convoy plan` or `convoy show PLAN_FILE` prints the whole plan.\n",
			limit, strings.Join(what, "; "))
		b.WriteString(red.Text(note))
	}
	return b.String()
}

func tableRow(r *plan.ReleaseChange) string {
	chartStr := ""
	switch {
	case r.Chart.Changed() && r.Chart.Before != nil && r.Chart.After != nil:
		chartStr = fmt.Sprintf("%s %s → %s", r.Chart.Before.Name, r.Chart.Before.Version, r.Chart.After.Version)
	case r.Chart.After != nil:
		chartStr = r.Chart.After.Name + " " + r.Chart.After.Version
	case r.Chart.Before != nil:
		chartStr = r.Chart.Before.Name + " " + r.Chart.Before.Version
	}
	if pf := r.PromotedFrom; pf != nil {
		chartStr += fmt.Sprintf(" (promoted from %s revision %d)", pf.Environment, pf.Revision)
	}
	objs := "-"
	if r.KnownAfterApply {
		objs = "(known after apply)"
	} else if r.Action != plan.ActionNoOp {
		n := 0
		for _, o := range r.Objects {
			if o.Action != plan.ObjectNoOp {
				n++
			}
		}
		objs = fmt.Sprint(n)
	}
	return fmt.Sprintf("| `%s` | %s | %s %s | %s | %s | %d |\n", r.Addr, r.Namespace, actionSymbol[r.Action], r.Action, chartStr, objs, len(r.Drift))
}

// releaseBlock is a release's diff: open when short, else in <details>.
func releaseBlock(r *plan.ReleaseChange) string {
	var d bytes.Buffer
	writeRelease(&d, r, Full)
	if len(r.Drift) > 0 {
		d.WriteString("\n  Drift (changed outside convoy):\n")
		writeDrift(&d, r)
	}
	diff := diffGutter(d.String())
	lines := strings.Count(diff, "\n")
	if lines <= shortDiffLines {
		return fmt.Sprintf("**`%s`** (%s)\n\n```diff\n%s```\n\n", r.Addr, r.Action, diff)
	}
	return fmt.Sprintf("<details><summary><code>%s</code> (%s, %d lines)</summary>\n\n```diff\n%s```\n\n</details>\n\n", r.Addr, r.Action, lines, diff)
}

// nameList names addresses in backticks, at most maxNamed of them.
func nameList(names []string) string {
	shown := names
	if len(shown) > maxNamed {
		shown = shown[:maxNamed]
	}
	out := "`" + strings.Join(shown, "`, `") + "`"
	if n := len(names) - len(shown); n > 0 {
		out += fmt.Sprintf(" and %d more", n)
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
