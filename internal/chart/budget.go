package chart

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"
	"time"
)

// Render budget. Helm has none: a chart can render until the process runs
// out of memory or forever. Convoy renders untrusted charts (a pull
// request's) and many releases in one process, so every render is
// bounded. Real charts are far below these limits: Helm stores a release
// in a Secret or ConfigMap of at most 1 MiB, compressed.
const (
	// DefaultMaxOutputBytes bounds the bytes a render's templates write.
	DefaultMaxOutputBytes = 100 << 20
	// DefaultRenderTimeout bounds the time a render's templates execute.
	DefaultRenderTimeout = 60 * time.Second

	// maxListLen bounds the lists until and untilStep build and the
	// numbers seq prints: `range until 50000000` would otherwise allocate
	// 400 MB before the first iteration.
	maxListLen = 1_000_000
	// maxFuncBytes bounds the strings repeat, indent, nindent and the
	// random string functions build in a single call.
	maxFuncBytes = 16 << 20
)

// ErrRenderBudget is wrapped by every error about a render exceeding its
// budget: output size, time, or the size of a value a function would build.
var ErrRenderBudget = errors.New("render budget exceeded")

// BudgetError is a render stopped by its budget. Template is the template
// being executed when it was stopped.
type BudgetError struct {
	Template string
	Message  string
}

func (e *BudgetError) Error() string {
	if e.Template == "" { // the budget ran out before a template started
		return "rendering the chart's templates: " + e.Message
	}
	return "rendering " + e.Template + ": " + e.Message
}
func (e *BudgetError) Unwrap() error { return ErrRenderBudget }

// renderBudget is the budget of one render. Template execution spends it
// through budgetWriter; expire is called from the timer's goroutine.
type renderBudget struct {
	maxBytes int64
	left     int64
	timeout  time.Duration
	expired  atomic.Bool
	current  atomic.Pointer[string] // the top-level template executing
	// started is closed when the first template starts executing: the
	// time limit bounds execution, not the parsing before it (which the
	// chart's size bounds), so a loaded machine's slow parse is no
	// runaway template.
	started   chan struct{}
	startOnce sync.Once
}

func newRenderBudget(opts RenderOptions) *renderBudget {
	b := &renderBudget{maxBytes: opts.MaxOutputBytes, timeout: opts.Timeout}
	if b.maxBytes <= 0 {
		b.maxBytes = DefaultMaxOutputBytes
	}
	if b.timeout <= 0 {
		b.timeout = DefaultRenderTimeout
	}
	b.left = b.maxBytes
	b.started = make(chan struct{})
	empty := ""
	b.current.Store(&empty)
	return b
}

func (b *renderBudget) setCurrent(name string) {
	b.current.Store(&name)
	b.startOnce.Do(func() { close(b.started) })
}

func (b *renderBudget) timeoutError() error {
	return &BudgetError{Template: *b.current.Load(), Message: fmt.Sprintf("templates ran longer than %s, the render time limit", b.timeout)}
}

// check fails once the time is up. text/template cannot be interrupted,
// so it is called wherever execution passes through convoy's code: every
// write, include and tpl.
func (b *renderBudget) check() error {
	if b.expired.Load() {
		return b.timeoutError()
	}
	return nil
}

// spend takes n bytes of output from the budget.
func (b *renderBudget) spend(n int) error {
	if err := b.check(); err != nil {
		return err
	}
	b.left -= int64(n)
	if b.left < 0 {
		return &BudgetError{Template: *b.current.Load(), Message: fmt.Sprintf("templates wrote more than %d bytes, the render output limit", b.maxBytes)}
	}
	return nil
}

// budgetWriter is a strings.Builder that spends the budget: when it is
// exhausted the write fails, and text/template stops executing.
type budgetWriter struct {
	strings.Builder
	budget *renderBudget
}

func (w *budgetWriter) Write(p []byte) (int, error) {
	if err := w.budget.spend(len(p)); err != nil {
		return 0, err
	}
	return w.Builder.Write(p)
}

func (w *budgetWriter) WriteString(s string) (int, error) {
	if err := w.budget.spend(len(s)); err != nil {
		return 0, err
	}
	return w.Builder.WriteString(s)
}

// fitted is the output, in memory of its size when the builder's, grown
// by doubling, is much larger: a template's output lives as long as the
// release's documents, which are parts of it, and a file of many MiB
// would otherwise keep up to as much again unused.
func (w *budgetWriter) fitted() string {
	if w.Len() < 64<<10 || w.Cap()-w.Len() < w.Len()/8 {
		return w.String()
	}
	return strings.Clone(w.String())
}

// executeWithBudget executes the templates in a goroutine and gives up
// when the time is up. Execution stops at its next write, include or tpl;
// a loop that does none of those (nested ranges over a bound list, with no
// output) runs on in the background until it ends, but the render
// returns.
func executeWithBudget(cache *templateCache, tpls map[string]renderable, opts RenderOptions) (map[string]string, map[string]impurity, error) {
	b := newRenderBudget(opts)
	type result struct {
		files  map[string]string
		impure map[string]impurity
		err    error
	}
	done := make(chan result, 1)
	go func() {
		files, impure, err := executeTemplates(cache, tpls, opts.Lookup, b)
		done <- result{files, impure, err}
	}()
	select {
	case r := <-done:
		return r.files, r.impure, r.err
	case <-b.started:
	}
	timer := time.NewTimer(b.timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.files, r.impure, r.err
	case <-timer.C:
		b.expired.Store(true)
		return nil, nil, &TemplateError{Template: *b.current.Load(), Message: b.timeoutError().Error(), Err: b.timeoutError()}
	}
}

// limitError is a function refusing to build a value beyond the budget.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return ErrRenderBudget }

func limitErrorf(format string, args ...any) error {
	return &limitError{msg: fmt.Sprintf(format, args...)}
}

// stepCount is the length of sprig's untilStep(start, stop, step), computed
// without building it (and without overflow).
func stepCount(start, stop, step int) uint64 {
	switch {
	case stop < start && step < 0:
		d, s := uint64(start)-uint64(stop), uint64(-step)
		return d/s + min(d%s, 1)
	case start < stop && step > 0:
		d, s := uint64(stop)-uint64(start), uint64(step)
		return d/s + min(d%s, 1)
	}
	return 0
}

// seqCount is the number of numbers sprig's seq prints.
func seqCount(params ...int) uint64 {
	switch len(params) {
	case 1:
		start, end, inc := 1, params[0], 1
		if end < start {
			inc = -1
		}
		return stepCount(start, end+inc, inc)
	case 2:
		start, end, step := params[0], params[1], 1
		if end < start {
			step = -1
		}
		return stepCount(start, end+step, step)
	case 3:
		start, step, end, inc := params[0], params[1], params[2], 1
		if end < start {
			inc = -1
			if step > 0 {
				return 0
			}
		}
		return stepCount(start, end+inc, step)
	}
	return 0
}

// limitFuncs wraps the sprig functions that build a large value from a
// small argument, so that the call fails instead of allocating gigabytes.
// Within the limits each calls sprig's function: the results are Helm's.
func limitFuncs(f template.FuncMap) {
	until := f["until"].(func(int) []int)
	f["until"] = func(count int) ([]int, error) {
		step := 1
		if count < 0 {
			step = -1
		}
		if n := stepCount(0, count, step); n > maxListLen {
			return nil, limitErrorf("until %d would build a list of %d numbers; the limit is %d", count, n, maxListLen)
		}
		return until(count), nil
	}
	untilStep := f["untilStep"].(func(int, int, int) []int)
	f["untilStep"] = func(start, stop, step int) ([]int, error) {
		if n := stepCount(start, stop, step); n > maxListLen {
			return nil, limitErrorf("untilStep %d %d %d would build a list of %d numbers; the limit is %d", start, stop, step, n, maxListLen)
		}
		return untilStep(start, stop, step), nil
	}
	seq := f["seq"].(func(...int) string)
	f["seq"] = func(params ...int) (string, error) {
		if n := seqCount(params...); n > maxListLen {
			return "", limitErrorf("seq would print %d numbers; the limit is %d", n, maxListLen)
		}
		return seq(params...), nil
	}
	repeat := f["repeat"].(func(int, string) string)
	f["repeat"] = func(count int, str string) (string, error) {
		if count > 0 && len(str) > 0 && count > maxFuncBytes/len(str) {
			return "", limitErrorf("repeat %d would build a string of more than %d bytes", count, maxFuncBytes)
		}
		return repeat(count, str), nil
	}
	for _, name := range []string{"indent", "nindent"} {
		indent := f[name].(func(int, string) string)
		f[name] = func(spaces int, v string) (string, error) {
			lines := strings.Count(v, "\n") + 1
			if spaces > 0 && (spaces > maxFuncBytes/lines || spaces*lines+len(v) > maxFuncBytes) {
				return "", limitErrorf("%s %d would build a string of more than %d bytes", name, spaces, maxFuncBytes)
			}
			return indent(spaces, v), nil
		}
	}
	for _, name := range []string{"randAlphaNum", "randAlpha", "randAscii", "randNumeric"} {
		random := f[name].(func(int) string)
		f[name] = func(count int) (string, error) {
			if count > maxFuncBytes {
				return "", limitErrorf("%s %d would build a string of more than %d bytes", name, count, maxFuncBytes)
			}
			return random(count), nil
		}
	}
	randBytes := f["randBytes"].(func(int) (string, error))
	f["randBytes"] = func(count int) (string, error) {
		if count > maxFuncBytes {
			return "", limitErrorf("randBytes %d would build more than %d bytes", count, maxFuncBytes)
		}
		return randBytes(count)
	}
}
