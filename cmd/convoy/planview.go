package main

import (
	"io"
	"os"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/view"
	"github.com/spf13/pflag"
)

// planViewFlags choose how a plan is printed as text.
type planViewFlags struct {
	NoColor bool
	Compact bool
}

func addPlanViewFlags(fs *pflag.FlagSet, f *planViewFlags) {
	fs.BoolVar(&f.NoColor, "no-color", false, "print the plan without colours (also: NO_COLOR set, or not a terminal)")
	fs.BoolVar(&f.Compact, "compact", false, "print the actions only: each changing release and its object actions, no values or field diffs")
}

// options are the text view's options for output to w: colour only on a
// terminal, without --no-color and NO_COLOR (https://no-color.org).
func (f planViewFlags) options(w io.Writer) view.TextOptions {
	o := view.TextOptions{Detail: view.Full}
	if f.Compact {
		o.Detail = view.Compact
	}
	o.Color = !f.NoColor && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" && isTerminal(w)
	return o
}

// text prints p as text to w.
func (f planViewFlags) text(w io.Writer, p *plan.Plan) error {
	return view.TextWith(w, p, f.options(w))
}
