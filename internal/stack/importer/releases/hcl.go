package releases

import (
	"fmt"
	"strings"
	"unicode"
)

// hclString writes s as a quoted HCL string: only the escapes HCL knows,
// and template sequences (${, %{) escaped so nothing in a record is ever
// evaluated.
func hclString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case (r == '$' || r == '%') && i+1 < len(s) && s[i+1] == '{':
			b.WriteRune(r)
			b.WriteRune(r)
		case r == unicode.ReplacementChar || !unicode.IsPrint(r):
			if r > 0xffff {
				fmt.Fprintf(&b, `\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// identifier turns a release name into an HCL block label: letters,
// digits, '-' and '_', starting with a letter or '_'.
func identifier(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_'):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	id := b.String()
	if id == "" || !(unicode.IsLetter(rune(id[0])) || id[0] == '_') {
		id = "r_" + id
	}
	return id
}

// comment writes text as HCL line comments, one per line, with nothing
// from a record able to end the comment early.
func comment(indent, text string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(text, "\n") {
		b.WriteString(indent)
		b.WriteString("#")
		if line != "" {
			b.WriteString(" ")
			b.WriteString(strings.Map(func(r rune) rune {
				if !unicode.IsPrint(r) {
					return '?'
				}
				return r
			}, line))
		}
		b.WriteByte('\n')
	}
	return b.String()
}
