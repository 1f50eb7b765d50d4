package view

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/convoy-sh/convoy/internal/plan"
)

// writeMoves says where moved blocks moved releases: a move alone
// changes nothing on the cluster.
func writeMoves(b *bytes.Buffer, p *plan.Plan) {
	moved := p.Moved()
	for _, r := range moved {
		if r.Rename != nil {
			fmt.Fprintf(b, "  # %s\n", r.RenameLine())
			continue
		}
		fmt.Fprintf(b, "  # %s\n", r.MoveLine())
	}
	if len(moved) > 0 {
		b.WriteString("\n")
	}
}

// writeForget prints a release a removed block with destroy = false
// stops managing.
func writeForget(b *bytes.Buffer, r *plan.ReleaseChange, stack string) {
	fmt.Fprintf(b, "  . %s (forget) namespace %s", r.Addr, r.Namespace)
	if r.Cluster != "" {
		fmt.Fprintf(b, ", cluster %s", r.Cluster)
	}
	fmt.Fprintf(b, "\n      %s\n\n", r.ForgetLine(stack))
}

// markdownMoves lists the moves, and what removed blocks forget, for a
// pull-request comment.
func markdownMoves(p *plan.Plan) string {
	var lines []string
	for _, r := range p.Moved() {
		if rn := r.Rename; rn != nil {
			lines = append(lines, fmt.Sprintf("- `%s` (`%s`) will be renamed to `%s` (`%s`)", r.MovedFrom, rn.From, r.Addr, r.Name))
			if s := rn.StateLine(); s != "" {
				lines = append(lines, "  - "+s)
			}
			for _, o := range rn.ObjectLines() {
				lines = append(lines, "  - "+o)
			}
			continue
		}
		lines = append(lines, fmt.Sprintf("- `%s` has moved to `%s`", r.MovedFrom, r.Addr))
	}
	for _, r := range p.Releases {
		if r.Action == plan.ActionForget {
			lines = append(lines, "- "+r.ForgetLine(stackName(p)))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n\n"
}

// writeRenameObjects says per object of a renamed release's old release
// whether it keeps its identity or is replaced.
func writeRenameObjects(b *bytes.Buffer, r *plan.ReleaseChange) {
	rn := r.Rename
	if rn == nil {
		return
	}
	switch rn.State {
	case plan.RenameDeployed:
		fmt.Fprintf(b, "      renamed from %s: the old records are deleted once this upgrade succeeds\n", rn.From)
	case plan.RenameCopied:
		fmt.Fprintf(b, "      renamed from %s: the other %d of %d revisions copied under the new name, then the old records deleted\n", rn.From, rn.Revisions-rn.Copied, rn.Revisions)
	default:
		fmt.Fprintf(b, "      renamed from %s: %d %s copied under the new name, then the old records deleted\n", rn.From, rn.Revisions, plural(rn.Revisions, "revision", "revisions"))
	}
	for _, l := range rn.ObjectLines() {
		fmt.Fprintf(b, "      ~ %s\n", l)
	}
}
