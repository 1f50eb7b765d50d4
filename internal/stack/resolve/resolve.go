// Package resolve turns an evaluated release instance (internal/stack/config) into
// what the chart engine and the release engine take: a loaded chart and the
// user-supplied values, built exactly as `helm template -f ... --set ...`
// would build them. Charts are loaded once per distinct source and shared.
package resolve

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/memo"
	"github.com/convoy-sh/convoy/internal/safefile"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/zclconf/go-cty/cty"
)

// Release is a release instance ready to render.
type Release struct {
	Instance *config.ReleaseInstance
	Chart    *chart.Chart
	// Values are the user-supplied values: layers merged in order, then the
	// set and set_sensitive paths.
	Values map[string]any
	// Sensitive reports whether any value came from a sensitive expression.
	Sensitive bool
}

// Charts loads each chart once and shares it; safe for concurrent use. A
// failed load is not retried.
type Charts struct {
	local  memo.Map[string, *chart.Chart]  // by chart path
	locked memo.Map[string, *chart.Chart]  // by locked digest
	deps   memo.Map[depsKey, *chart.Chart] // local charts with dependencies added
	locks  memo.Map[string, *source.Lock]  // by stack directory
	// cacheDir is the chart cache; "" when there is none.
	cacheDir string
	// pinned are charts given for release instances instead of their
	// source (WithPinned); never modified.
	pinned map[config.ReleaseInstanceAddr]*chart.Chart
}

// depsKey is a local chart with the dependencies a release locks for it.
type depsKey struct{ release, path string }

// NewCharts returns an empty set of charts. cacheDir is the chart cache
// that charts from repositories and registries, and the fetched
// dependencies of local charts, are read from; "" is fine for stacks of
// local charts whose charts/ holds all their dependencies.
func NewCharts(cacheDir string) *Charts {
	return &Charts{cacheDir: cacheDir}
}

// WithPinned returns charts that load, for each release instance pinned
// names, the chart given instead of the one its source and the lock file
// name (a chart promoted from another environment's record). pinned is
// not modified, and must not be afterwards.
func (c *Charts) WithPinned(pinned map[config.ReleaseInstanceAddr]*chart.Chart) *Charts {
	return &Charts{cacheDir: c.cacheDir, pinned: pinned}
}

// Load returns the chart of a release instance of a stack in dir. Charts
// from repositories and registries are read from the chart cache at the
// version the stack's lock file records (written by `convoy init`); Load
// never touches the network.
func (c *Charts) Load(dir string, r *config.ReleaseInstance) (*chart.Chart, error) {
	if ch, ok := c.pinned[r.Addr]; ok {
		return ch, nil
	}
	if r.ChartSource == config.ChartManifests {
		return manifestsChart(dir, r)
	}
	if r.ChartSource != config.ChartLocal {
		return c.loadLocked(dir, r)
	}
	path, err := config.ResolvePath(dir, r.Chart)
	if err != nil {
		return nil, instError(r, "chart %s: %w", r.Chart, err)
	}
	ch, err := c.local.Get(path, func() (*chart.Chart, error) { return chart.Load(path) })
	if err != nil {
		return nil, instError(r, "load chart %s: %w", r.Chart, err)
	}
	if source.HasMissingDependencies(ch) {
		return c.withLocalDependencies(dir, path, r, ch)
	}
	return ch, nil
}

// LoadUnkept is Load without keeping the chart for the releases loaded
// after: what applying a saved plan, which does not render, reads of a
// release's chart (mostly its facts, chart.Chart.Facts), without holding a
// large chart's files while the release is applied.
func (c *Charts) LoadUnkept(dir string, r *config.ReleaseInstance) (*chart.Chart, error) {
	once := &Charts{cacheDir: c.cacheDir, pinned: c.pinned}
	return once.Load(dir, r)
}

// manifestsChart builds the chart of a manifests release from its files,
// read like file() reads (inside the stack directory, regular, bounded).
func manifestsChart(dir string, r *config.ReleaseInstance) (*chart.Chart, error) {
	var files []*chart.File
	for _, name := range r.Manifests {
		b, err := (safefile.Dir{Path: dir, Desc: "the stack directory"}).Read(name, config.MaxFileSize)
		if err != nil {
			return nil, instError(r, "manifests: %w", err)
		}
		files = append(files, &chart.File{Name: name, Data: b})
	}
	ch, err := chart.FromManifests(r.Name, files)
	if err != nil {
		return nil, instError(r, "manifests: %w", err)
	}
	return ch, nil
}

// ErrUnknown is returned for a release whose values depend on attributes of
// other releases that are known only after they are applied.
var ErrUnknown = config.ErrUnknownValue

// Resolve loads the chart and builds the values of r.
func Resolve(charts *Charts, dir string, r *config.ReleaseInstance) (*Release, error) {
	ch, err := charts.Load(dir, r)
	if err != nil {
		return nil, err
	}
	values, sensitive, err := Values(r)
	if err != nil {
		return nil, err
	}
	return &Release{Instance: r, Chart: ch, Values: values, Sensitive: sensitive}, nil
}

// Values builds the user-supplied values of r: each values layer (YAML text
// parsed as Helm parses a -f file; HCL objects converted), merged in order,
// then set and set_sensitive applied with Helm's --set path syntax (sorted
// by path, so the result does not depend on map order).
func Values(r *config.ReleaseInstance) (map[string]any, bool, error) {
	var layers []map[string]any
	anySensitive := false
	for i, l := range r.Values {
		var (
			m         map[string]any
			sensitive bool
			err       error
		)
		if l.Kind == config.ValuesYAML {
			m, sensitive, err = yamlLayer(l.Value)
		} else {
			m, sensitive, err = l.Go()
		}
		if err != nil {
			if errors.Is(err, config.ErrUnknownValue) {
				return nil, false, instError(r, "values[%d]: %w", i, err)
			}
			return nil, false, instError(r, "values[%d] (%s): %w", i, l.Range, err)
		}
		anySensitive = anySensitive || sensitive
		layers = append(layers, m)
	}
	values, err := chart.UserValues(layers, nil)
	if err != nil {
		return nil, false, err
	}
	for _, set := range []map[string]cty.Value{r.Set, r.SetSensitive} {
		for _, path := range slices.Sorted(maps.Keys(set)) {
			sensitive, err := applySet(values, path, set[path])
			if err != nil {
				return nil, false, instError(r, "set %q: %w", path, err)
			}
			anySensitive = anySensitive || sensitive
		}
	}
	return values, anySensitive, nil
}

func yamlLayer(v cty.Value) (map[string]any, bool, error) {
	text, marks := v.Unmark()
	if !text.IsKnown() {
		return nil, false, config.ErrUnknownValue
	}
	if text.IsNull() {
		return map[string]any{}, false, nil
	}
	m, err := chart.ParseValues([]byte(text.AsString()))
	if err != nil {
		return nil, false, err
	}
	return m, len(marks) > 0, nil
}

// applySet sets one Helm --set path to a typed value: strings are set as
// --set-string would (never re-typed), numbers and booleans as --set.
func applySet(into map[string]any, path string, v cty.Value) (bool, error) {
	g, sensitive, err := config.GoValue(v)
	if err != nil {
		return sensitive, err
	}
	switch t := g.(type) {
	case nil:
		return sensitive, chart.ParseSet(path+"=null", into)
	case string:
		return sensitive, chart.ParseSetString(path+"="+escapeSetValue(t), into)
	case bool:
		return sensitive, chart.ParseSet(path+"="+strconv.FormatBool(t), into)
	case int64:
		return sensitive, chart.ParseSet(path+"="+strconv.FormatInt(t, 10), into)
	case float64:
		return sensitive, chart.ParseSet(path+"="+strconv.FormatFloat(t, 'f', -1, 64), into)
	default:
		return sensitive, fmt.Errorf("value is a %T; set takes strings, numbers, booleans or null (use values for structures)", g)
	}
}

// escapeSetValue protects the characters --set treats specially in a value.
func escapeSetValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, `,`, `\,`).Replace(s)
}

// CheckSet reports whether a set or set_sensitive value can be set at path
// (a scalar or null, at a path Helm's --set parses).
func CheckSet(path string, v cty.Value) error {
	_, err := applySet(map[string]any{}, path, v)
	return err
}

// Error is an error of one release instance; its message starts with the
// instance's address.
type Error struct {
	Addr config.ReleaseInstanceAddr
	Err  error
}

func (e *Error) Error() string { return e.Addr.String() + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func instError(r *config.ReleaseInstance, format string, args ...any) error {
	return &Error{Addr: r.Addr, Err: fmt.Errorf(format, args...)}
}

// WithAddr names addr in err, unless err is already an Error of addr (or
// wraps one): an error is printed with its release's address once.
func WithAddr(addr config.ReleaseInstanceAddr, err error) error {
	var re *Error
	if err == nil || errors.As(err, &re) && re.Addr == addr {
		return err
	}
	return &Error{Addr: addr, Err: err}
}
