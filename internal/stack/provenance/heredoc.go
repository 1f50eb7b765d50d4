package provenance

import (
	"bytes"
	"strings"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// heredoc places the lines of YAML text that expr, a heredoc, gave at
// their lines in the stack file (and their columns, less the indentation
// <<- strips); nil when expr is not a heredoc or its text's lines are not
// its source's (an interpolation gave several lines, a directive some or
// none).
func (b *builder) heredoc(expr hcl.Expression, text string) func(line, col int) *plan.Source {
	tmpl, ok := expr.(*hclsyntax.TemplateExpr)
	if !ok || b.src == nil {
		return nil
	}
	rng := tmpl.Range()
	f := b.src.Files[rng.Filename]
	if f == nil || rng.End.Byte > len(f.Bytes) || !bytes.HasPrefix(f.Bytes[rng.Start.Byte:], []byte("<<")) {
		return nil
	}
	for _, p := range tmpl.Parts {
		if _, lit := p.(*hclsyntax.LiteralValueExpr); !lit && p.Range().Start.Line != p.Range().End.Line {
			return nil
		}
	}
	first, last := rng.Start.Line+1, rng.End.Line-1
	textLines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(textLines) != last-first+1 {
		return nil
	}
	srcLines := bytes.Split(f.Bytes, []byte("\n"))
	if last > len(srcLines) {
		return nil
	}
	indent := make([]int, len(textLines)) // what <<- stripped, per line
	for i, tl := range textLines {
		sl := string(srcLines[first-1+i])
		if strings.TrimSpace(tl) != "" {
			indent[i] = max(0, leading(sl)-leading(tl))
		}
	}
	file := b.show(rng.Filename)
	return func(line, col int) *plan.Source {
		if line < 1 || line > len(indent) {
			return b.source(rng)
		}
		return &plan.Source{File: file, Line: first + line - 1, Column: col + indent[line-1]}
	}
}

func leading(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }
