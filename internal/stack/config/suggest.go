package config

import (
	"maps"
	"slices"
	"unicode/utf8"
)

// suggestName is the declared name closest to given, for a "did you mean"
// in a diagnostic about an undeclared name: one within two edits (a typo,
// a transposition) and fewer edits than given has runes (a two-letter
// name is not "close" to every other), the first in sorted order on a
// tie; "" when none is that close.
func suggestName[V any](given string, declared map[string]V) string {
	best, bestDist := "", min(3, utf8.RuneCountInString(given))
	for _, name := range slices.Sorted(maps.Keys(declared)) {
		if d := editDistance(given, name); d < bestDist {
			best, bestDist = name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, by runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
