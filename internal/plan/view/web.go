package view

import (
	"bytes"

	"github.com/convoy-sh/convoy/internal/plan"
)

// ReleaseText is one release of a plan as the text view prints it, for
// pages that show the releases one at a time (convoy ui): its impact line,
// its full text (values, hooks, objects and their field diffs) and its
// drift. Sensitive values are masked as in Text.
type ReleaseText struct {
	Impact, Text, Drift string
}

// ReleaseTexts returns the text of each release of p by address.
func ReleaseTexts(p *plan.Plan) map[string]ReleaseText {
	red := p.Redactor()
	out := make(map[string]ReleaseText, len(p.Releases))
	for _, r := range p.Releases {
		var t ReleaseText
		if r.Impact != nil {
			t.Impact = red.Text(impactLine(r.Impact))
		}
		if r.Action != plan.ActionNoOp && r.Action != plan.ActionForget {
			var b bytes.Buffer
			writeRelease(&b, r, Full)
			t.Text = red.Text(b.String())
		}
		if len(r.Drift) > 0 {
			var b bytes.Buffer
			writeDrift(&b, r)
			t.Drift = red.Text(b.String())
		}
		out[r.Addr.String()] = t
	}
	return out
}
