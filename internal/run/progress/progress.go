// Package progress shows a run's releases as they are applied: a live view
// that redraws one line per release on a terminal, or plain timestamped
// lines. Both implement apply.Progress.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/run/apply"
	"github.com/convoy-sh/convoy/internal/stack/dag"
)

type rowState struct {
	apply.Row
	state   string
	started time.Time
	elapsed time.Duration
	done    bool
	// blockers are what the release's wait is blocked on, one line each,
	// while it is in phase blockedIn.
	blockers  []string
	blockedIn release.Phase
	// outage is, while the release's wait finds its API server not
	// answering, what the engine said of it (release.Event.Outage): shown
	// above the blockers until the next event that is not a blockers'.
	outage string
}

// maxBlockers and maxBlockerWidth keep the live view a few short lines per
// release.
const (
	maxBlockers     = 3
	maxDetails      = 2
	maxBlockerWidth = 140
)

// blockerLines are the live view's lines for a wait's blockers: per
// object its kind, namespace/name and own status, then the reasons found
// below it (its pods' problems, Warning events) indented, each cut to a
// terminal line.
func blockerLines(objs []kube.ObjectStatus) []string {
	cut := func(s string) string {
		if r := []rune(s); len(r) > maxBlockerWidth {
			return string(r[:maxBlockerWidth-1]) + "…"
		}
		return s
	}
	var out []string
	for i, o := range objs {
		if i == maxBlockers {
			out = append(out, fmt.Sprintf("… and %d more", len(objs)-maxBlockers))
			break
		}
		name := o.Ref.Name
		if o.Ref.Namespace != "" {
			name = o.Ref.Namespace + "/" + name
		}
		line := o.Ref.Kind + " " + name + ": "
		switch {
		case o.State != kube.StateNotReady && o.Message != "":
			line += o.State.String() + ": " + o.Message
		case o.Message != "":
			line += o.Message
		default:
			line += o.State.String()
		}
		out = append(out, cut(line))
		for j, d := range o.Details {
			if j == maxDetails {
				break
			}
			out = append(out, cut("    "+d))
		}
	}
	return out
}

type progressBase struct {
	mu    *sync.Mutex
	rows  []*rowState
	byID  map[string]*rowState
	byRel map[string]*rowState // namespace/name
}

func newBase(rows []apply.Row) progressBase {
	b := progressBase{mu: &sync.Mutex{}, byID: map[string]*rowState{}, byRel: map[string]*rowState{}}
	for _, r := range rows {
		rs := &rowState{Row: r, state: "waiting"}
		b.rows = append(b.rows, rs)
		b.byID[r.ID] = rs
		b.byRel[r.Namespace+"/"+r.Name] = rs
	}
	return b
}

// Lines is the plain view: one timestamped line per step.
type Lines struct {
	progressBase
	w   io.Writer
	now func() time.Time
	// failed is, by step, the failure the release engine reported, so
	// that the step's end does not print the same error again.
	failed map[string]string
}

// NewLines returns the plain view writing to w.
func NewLines(w io.Writer, rows []apply.Row) *Lines {
	return &Lines{progressBase: newBase(rows), w: w, now: time.Now, failed: map[string]string{}}
}

func (l *Lines) line(id, msg string) {
	fmt.Fprintf(l.w, "%s %s: %s\n", l.now().Format(time.RFC3339), id, msg)
}

// Event implements Progress.
func (l *Lines) Event(ev release.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := ev.Namespace + "/" + ev.Release
	if r := l.byRel[id]; r != nil {
		id = r.ID
	}
	if ev.Phase == release.PhaseFailed {
		l.failed[id] = ev.Message
	}
	l.line(id, ev.Message)
}

// Started implements Progress.
func (l *Lines) Started(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.line(id, "started")
}

// Finished implements Progress.
func (l *Lines) Finished(id string, o dag.Outcome[string]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	msg := fmt.Sprintf("%s after %s", o.Status, o.Duration.Round(10*time.Millisecond))
	if o.Err != nil && !strings.HasSuffix(l.failed[id], ": "+o.Err.Error()) {
		msg += ": " + o.Err.Error()
	}
	l.line(id, msg)
}

// dag.Skipped implements Progress.
func (l *Lines) Skipped(id, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.line(id, "skipped: "+reason)
}

// Close implements Progress.
func (l *Lines) Close() {}

// Live is the terminal view: one line per release, redrawn in place.
type Live struct {
	progressBase
	w      io.Writer
	drawn  int
	stop   chan struct{}
	closed sync.WaitGroup
}

// NewLive starts the terminal view on w (a terminal).
func NewLive(w io.Writer, rows []apply.Row) *Live {
	l := &Live{progressBase: newBase(rows), w: w, stop: make(chan struct{})}
	l.closed.Add(1)
	go func() {
		defer l.closed.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			l.draw()
			select {
			case <-l.stop:
				l.draw()
				return
			case <-t.C:
			}
		}
	}()
	return l
}

func (l *Live) draw() {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	if l.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", l.drawn)
	}
	width, n := 0, 0
	for _, r := range l.rows {
		width = max(width, len(r.ID))
	}
	for _, r := range l.rows {
		el := r.elapsed
		if !r.done && !r.started.IsZero() {
			el = time.Since(r.started)
		}
		timing := ""
		if el > 0 {
			timing = fmt.Sprintf(" (%s)", el.Round(100*time.Millisecond))
		}
		fmt.Fprintf(&b, "\x1b[2K%-*s  %s%s\n", width, r.ID, r.state, timing)
		n++
		if !r.done && r.outage != "" {
			fmt.Fprintf(&b, "\x1b[2K%-*s    ⚠ %s\n", width, "", r.outage)
			n++
		}
		if !r.done {
			for _, bl := range r.blockers {
				fmt.Fprintf(&b, "\x1b[2K%-*s    ⏳ %s\n", width, "", bl)
				n++
			}
		}
	}
	// Lines left from a taller frame are cleared.
	for ; n < l.drawn; n++ {
		b.WriteString("\x1b[2K\n")
	}
	l.drawn = n
	_, _ = io.WriteString(l.w, b.String())
}

// Event implements Progress.
func (l *Live) Event(ev release.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.byRel[ev.Namespace+"/"+ev.Release]; r != nil && !r.done {
		switch {
		case ev.Outage != nil:
			r.outage = ev.Message
			return
		case ev.Blockers != nil:
			r.blockers, r.blockedIn = blockerLines(ev.Blockers), ev.Phase
			r.state = fmt.Sprintf("%s: %d not ready", ev.Phase, len(ev.Blockers))
			return
		case ev.Phase != r.blockedIn:
			r.blockers = nil
		}
		r.outage = ""
		r.state = string(ev.Phase) + ": " + ev.Message
	}
}

// Started implements Progress.
func (l *Live) Started(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.byID[id]; r != nil {
		r.state, r.started = "starting", time.Now()
	}
}

// Finished implements Progress.
func (l *Live) Finished(id string, o dag.Outcome[string]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.byID[id]; r != nil {
		r.done, r.elapsed = true, o.Duration
		r.state = "done"
		if o.Status != dag.Succeeded {
			r.state = string(o.Status)
		}
	}
}

// dag.Skipped implements Progress.
func (l *Live) Skipped(id, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.byID[id]; r != nil {
		r.done, r.state = true, "skipped ("+reason+")"
	}
}

// Close implements Progress.
func (l *Live) Close() {
	close(l.stop)
	l.closed.Wait()
}
