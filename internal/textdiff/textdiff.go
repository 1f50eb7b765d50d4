// Package textdiff computes line diffs of small texts (configuration files,
// multi-line values in a plan) with a longest-common-subsequence table.
package textdiff

import "strings"

// Op is one line of a diff: Kind is ' ' (unchanged), '-' (only in a) or
// '+' (only in b).
type Op struct {
	Kind byte
	Line string
}

// SplitLines splits text into lines; a final newline ends the last line
// rather than starting an empty one.
func SplitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// Lines diffs two texts line by line, deletions before insertions within a
// change, as diff -u shows them. When the table would exceed maxCells
// cells, the result replaces every line of a with every line of b.
func Lines(a, b string, maxCells int) []Op {
	al, bl := SplitLines(a), SplitLines(b)
	var ops []Op
	if (len(al)+1)*(len(bl)+1) > maxCells {
		for _, l := range al {
			ops = append(ops, Op{'-', l})
		}
		for _, l := range bl {
			ops = append(ops, Op{'+', l})
		}
		return ops
	}
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
			ops = append(ops, Op{' ', al[i]})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, Op{'-', al[i]})
			i++
		default:
			ops = append(ops, Op{'+', bl[j]})
			j++
		}
	}
	return ops
}
