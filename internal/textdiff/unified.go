package textdiff

import (
	"fmt"
	"strings"
)

// Unified renders a unified diff (3 lines of context) between two
// texts, for `fmt --diff`. It uses a longest-common-subsequence table, which
// is fine for hand-written configuration; beyond maxDiffCells it falls back
// to replacing the whole file.
func Unified(name, a, b string) string {
	ops := Lines(a, b, 16<<20)

	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s (formatted)\n", name, name)
	const ctx = 3
	for start := 0; start < len(ops); {
		// Find the next change.
		for start < len(ops) && ops[start].Kind == ' ' {
			start++
		}
		if start == len(ops) {
			break
		}
		lo := max(0, start-ctx)
		// Extend the hunk while changes are within 2*ctx of each other.
		end := start
		for k := start; k < len(ops); k++ {
			if ops[k].Kind != ' ' {
				end = k
			} else if k-end > 2*ctx {
				break
			}
		}
		hi := min(len(ops), end+ctx+1)
		// Line numbers at lo.
		aLine, bLine := 1, 1
		for _, o := range ops[:lo] {
			if o.Kind != '+' {
				aLine++
			}
			if o.Kind != '-' {
				bLine++
			}
		}
		aCount, bCount := 0, 0
		for _, o := range ops[lo:hi] {
			if o.Kind != '+' {
				aCount++
			}
			if o.Kind != '-' {
				bCount++
			}
		}
		fmt.Fprintf(&sb, "@@ -%d,%d +%d,%d @@\n", aLine, aCount, bLine, bCount)
		for _, o := range ops[lo:hi] {
			sb.WriteByte(o.Kind)
			sb.WriteString(o.Line)
			sb.WriteByte('\n')
		}
		start = hi
	}
	return sb.String()
}
