package helmfile

import (
	"strings"
)

type itemKind int

const (
	itemExpr    itemKind = iota // an expression translated into HCL
	itemHand                    // left by hand: kept as a comment
	itemComment                 // a template comment {{/* ... */}}
)

// An item is a part of a template that is not plain text: a translated
// expression, or a span left by hand (a control block with everything in
// it, or an expression with no translation), or a template comment.
type item struct {
	kind       itemKind
	start, end int // the span in the source; whole lines when alone
	alone      bool
	line       int // the 1-based line of its start
	expr       expr
	refs       refs   // what expr refers to
	why        string // why it is left by hand
	// trimLeft, trimRight: the action trims the blank space before or
	// after it ({{- and -}}).
	trimLeft, trimRight bool
}

// text is the item's source, trimmed of surrounding blank space.
func (it item) text(src string) string {
	return strings.TrimSpace(src[it.start:it.end])
}

// segment finds the items of src. Expressions outside control blocks are
// translated when they can be and allow (if not nil) accepts their
// references; a control block (if, range, with, define, block) is one item
// up to its end, left by hand, as is an expression with no translation.
func (tr translator) segment(src string, allow func(refs) error) []item {
	acts := scanActions(src)
	var out []item
	for i := 0; i < len(acts); i++ {
		a := acts[i]
		it := item{start: a.start, end: a.end, trimLeft: a.trimLeft, trimRight: a.trimRight}
		switch kw := a.keyword(); kw {
		case "comment":
			it.kind = itemComment
		case "if", "range", "with", "define", "block":
			depth := 1
			j := i + 1
			for ; j < len(acts) && depth > 0; j++ {
				switch acts[j].keyword() {
				case "if", "range", "with", "define", "block":
					depth++
				case "end":
					depth--
				}
			}
			it.end = acts[j-1].end
			it.trimRight = acts[j-1].trimRight
			i = j - 1
			it.kind = itemHand
			it.why = kw + " block"
			if depth > 0 {
				it.why = kw + " block without end"
			}
		case "":
			local := newRefs()
			e, err := tr.translate(a.content, &local)
			if err == nil && allow != nil {
				err = allow(local)
			}
			it.refs = local
			if err != nil {
				it.kind = itemHand
				it.why = err.Error()
			} else {
				it.kind = itemExpr
				it.expr = e
			}
		default:
			it.kind = itemHand
			it.why = "{{ " + kw + " }} outside its block"
		}
		if it.kind != itemExpr && alone(src, it.start, it.end) {
			it.alone = true
			it.start = lineStart(src, it.start)
			it.end = lineEnd(src, it.end)
		}
		it.line = lineOf(src, it.start)
		out = append(out, it)
	}
	return out
}

// commentLines writes text as HCL comment lines with the given indent.
func commentLines(text, indent string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString(strings.TrimRight(indent+"# "+l, " "))
		b.WriteString("\n")
	}
	return b.String()
}
