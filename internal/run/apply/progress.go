package apply

import (
	"github.com/convoy-sh/convoy/internal/cluster/release"
)

// Row is one release in a progress view.
type Row struct {
	ID, Namespace, Name string
}

// Progress shows what each release of a run is doing. Both views are safe
// for concurrent use.
type Progress interface {
	// Event is a step reported by the release engine.
	Event(ev release.Event)
	// Started, Finished and Skipped are reported by the walker: each step
	// ends once, Finished or Skipped. A step the run never started because
	// it was cancelled is Finished (cancelled) without being Started.
	Started(id string)
	Finished(id string, o Outcome)
	Skipped(id, reason string)
	// Close stops the view (a live view draws its final state).
	Close()
}

// NoProgress shows nothing.
type NoProgress struct{}

func (NoProgress) Event(release.Event)      {}
func (NoProgress) Started(string)           {}
func (NoProgress) Finished(string, Outcome) {}
func (NoProgress) Skipped(string, string)   {}
func (NoProgress) Close()                   {}
