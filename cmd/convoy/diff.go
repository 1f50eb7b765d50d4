package main

import (
	"fmt"
	"strings"
)

// unifiedDiff renders a unified diff (3 lines of context) between two
// texts, for `fmt --diff`. It uses a longest-common-subsequence table, which
// is fine for hand-written configuration; beyond maxDiffCells it falls back
// to replacing the whole file.
func unifiedDiff(name, a, b string) string {
	const maxDiffCells = 16 << 20
	al, bl := splitLines(a), splitLines(b)
	type op struct {
		kind byte // ' ', '-', '+'
		line string
	}
	var ops []op
	if (len(al)+1)*(len(bl)+1) > maxDiffCells {
		for _, l := range al {
			ops = append(ops, op{'-', l})
		}
		for _, l := range bl {
			ops = append(ops, op{'+', l})
		}
	} else {
		n, m := len(al), len(bl)
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if al[i] == bl[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && al[i] == bl[j]:
				ops = append(ops, op{' ', al[i]})
				i++
				j++
			case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
				ops = append(ops, op{'+', bl[j]})
				j++
			default:
				ops = append(ops, op{'-', al[i]})
				i++
			}
		}
	}

	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s (formatted)\n", name, name)
	const ctx = 3
	for start := 0; start < len(ops); {
		// Find the next change.
		for start < len(ops) && ops[start].kind == ' ' {
			start++
		}
		if start == len(ops) {
			break
		}
		lo := max(0, start-ctx)
		// Extend the hunk while changes are within 2*ctx of each other.
		end := start
		for k := start; k < len(ops); k++ {
			if ops[k].kind != ' ' {
				end = k
			} else if k-end > 2*ctx {
				break
			}
		}
		hi := min(len(ops), end+ctx+1)
		// Line numbers at lo.
		aLine, bLine := 1, 1
		for _, o := range ops[:lo] {
			if o.kind != '+' {
				aLine++
			}
			if o.kind != '-' {
				bLine++
			}
		}
		aCount, bCount := 0, 0
		for _, o := range ops[lo:hi] {
			if o.kind != '+' {
				aCount++
			}
			if o.kind != '-' {
				bCount++
			}
		}
		fmt.Fprintf(&sb, "@@ -%d,%d +%d,%d @@\n", aLine, aCount, bLine, bCount)
		for _, o := range ops[lo:hi] {
			sb.WriteByte(o.kind)
			sb.WriteString(o.line)
			sb.WriteByte('\n')
		}
		start = hi
	}
	return sb.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
