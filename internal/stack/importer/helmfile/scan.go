package helmfile

import (
	"strings"
)

// An action is one {{ ... }} of a Go template, found by scanning the
// text: its byte span (the braces and trim markers included), its content
// without them, and whether it trims the whitespace before or after it.
type action struct {
	start, end int
	content    string
	trimLeft   bool
	trimRight  bool
}

// keyword is the control word an action starts with ("if", "end", ...),
// or "" for an expression, or "comment".
func (a action) keyword() string {
	c := strings.TrimSpace(a.content)
	if strings.HasPrefix(c, "/*") {
		return "comment"
	}
	word := c
	if i := strings.IndexAny(c, " \t\r\n("); i >= 0 {
		word = c[:i]
	}
	switch word {
	case "if", "range", "with", "define", "block", "else", "end", "template", "break", "continue":
		return word
	}
	return ""
}

// scanActions finds every action of src, in order. Quoted strings, raw
// strings, character constants and comments inside an action are skipped
// whole, so a "}}" in them does not end it. An action left open runs to the
// end of the text.
func scanActions(src string) []action {
	var out []action
	i := 0
	for {
		j := strings.Index(src[i:], "{{")
		if j < 0 {
			return out
		}
		a := action{start: i + j}
		k := a.start + 2
		if strings.HasPrefix(src[k:], "- ") || strings.HasPrefix(src[k:], "-\t") || strings.HasPrefix(src[k:], "-\n") {
			a.trimLeft = true
			k++
		}
		body := k
		end := len(src)
	scan:
		for k < len(src) {
			switch c := src[k]; {
			case c == '"' || c == '\'':
				k++
				for k < len(src) && src[k] != c && src[k] != '\n' {
					if src[k] == '\\' {
						k++
					}
					k++
				}
				k++
			case c == '`':
				if m := strings.IndexByte(src[k+1:], '`'); m >= 0 {
					k += m + 2
				} else {
					k = len(src)
				}
			case strings.HasPrefix(src[k:], "/*"):
				if m := strings.Index(src[k+2:], "*/"); m >= 0 {
					k += m + 4
				} else {
					k = len(src)
				}
			case strings.HasPrefix(src[k:], " -}}") || strings.HasPrefix(src[k:], "\t-}}") || strings.HasPrefix(src[k:], "\n-}}"):
				a.trimRight = true
				a.content = src[body:k]
				end = k + 4
				break scan
			case strings.HasPrefix(src[k:], "}}"):
				a.content = src[body:k]
				end = k + 2
				break scan
			default:
				k++
			}
		}
		if end == len(src) && a.content == "" && k >= len(src) {
			a.content = src[body:min(k, len(src))]
		}
		a.end = end
		out = append(out, a)
		i = end
	}
}

// lineOf is the 1-based line of byte offset off in src.
func lineOf(src string, off int) int {
	return strings.Count(src[:off], "\n") + 1
}

// lineStart and lineEnd are the offsets of the start of off's line and of
// its newline (or the end of src).
func lineStart(src string, off int) int {
	return strings.LastIndexByte(src[:off], '\n') + 1
}

func lineEnd(src string, off int) int {
	if i := strings.IndexByte(src[off:], '\n'); i >= 0 {
		return off + i
	}
	return len(src)
}

// alone reports whether src[start:end] is alone on its lines: only
// whitespace before it on its first line and after it on its last.
func alone(src string, start, end int) bool {
	return strings.TrimSpace(src[lineStart(src, start):start]) == "" &&
		strings.TrimSpace(src[end:lineEnd(src, end)]) == ""
}
