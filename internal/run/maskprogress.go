package run

import (
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/run/apply"
	"github.com/convoy-sh/convoy/internal/sensitive"
)

// maskingProgress masks the plan's sensitive values (and what templates
// rendered from them) in everything a progress view shows: the engine's
// messages quote API server errors, which quote field values.
type maskingProgress struct {
	apply.Progress
	red *sensitive.Redactor
}

func (r maskingProgress) Event(ev release.Event) {
	ev.Message = r.red.Text(ev.Message)
	r.Progress.Event(ev)
}

func (r maskingProgress) Finished(id string, o apply.Outcome) {
	o.Err, o.RestoreErr = r.red.Err(o.Err), r.red.Err(o.RestoreErr)
	r.Progress.Finished(id, o)
}

func (r maskingProgress) Skipped(id, reason string) {
	r.Progress.Skipped(id, r.red.Text(reason))
}
