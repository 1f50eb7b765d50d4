// Package apimap holds Kubernetes' API removals: which API version of a
// kind the API server stopped serving, in which release, and what replaces
// it. The table is kept in the shape of helm-mapkubeapis' map file
// (kubernetes.yaml), so a user's own map file (--api-map, a stack's
// api_map) adds to it or overrides it entry by entry.
//
// The release engine reads stored revisions through it (an object of a
// removed version is read as its successor), the planner reports the
// rendered objects a target Kubernetes version deprecates or removes, and
// `convoy records migrate` rewrites stored manifests with it. It reads no
// cluster and imports nothing of convoy's.
package apimap

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"
)

//go:embed kubernetes.yaml
var kubernetesYAML []byte

// API is an API version and kind as a manifest names them.
type API struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

func (a API) String() string { return a.APIVersion + " " + a.Kind }

// Group is the API group ("" for the core group).
func (a API) Group() string {
	g, _, ok := strings.Cut(a.APIVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// Version is the API version without its group.
func (a API) Version() string {
	_, v, ok := strings.Cut(a.APIVersion, "/")
	if !ok {
		return a.APIVersion
	}
	return v
}

// Entry is one API version of a kind that Kubernetes deprecates or
// removes.
type Entry struct {
	// From is the deprecated or removed API version and kind.
	From API
	// To is what replaces it; nil: nothing does (PodSecurityPolicy).
	To *API
	// DeprecatedIn and RemovedIn are the Kubernetes releases that
	// deprecated it and stopped serving it; zero when unknown or not
	// (yet) removed.
	DeprecatedIn, RemovedIn Version
	// Source names where the entry comes from: "kubernetes" for the
	// built-in table, else the map file's name.
	Source string
}

// Replacement is To's API version, "" without a successor.
func (e Entry) Replacement() string {
	if e.To == nil {
		return ""
	}
	return e.To.APIVersion
}

// RemovedBy reports whether Kubernetes v no longer serves the entry's API.
func (e Entry) RemovedBy(v Version) bool { return !e.RemovedIn.IsZero() && !v.Less(e.RemovedIn) }

// DeprecatedBy reports whether Kubernetes v deprecates (or removed) the
// entry's API.
func (e Entry) DeprecatedBy(v Version) bool {
	return (!e.DeprecatedIn.IsZero() && !v.Less(e.DeprecatedIn)) || e.RemovedBy(v)
}

// Map is a table of entries by API version and kind. The zero value is
// empty; nil is too.
type Map struct {
	entries map[API]Entry
	// knownThrough is the newest Kubernetes release whose removals the
	// map is known to hold (the built-in table's knownThrough); zero for
	// a user's map file, which says nothing of Kubernetes' releases.
	knownThrough Version
}

// KnownThrough is the newest Kubernetes release whose removals the map is
// known to hold: a target past it may remove APIs the map does not list.
// Zero when the map does not say (a user's map file alone).
func (m *Map) KnownThrough() Version {
	if m == nil {
		return Version{}
	}
	return m.knownThrough
}

// Kubernetes is the built-in table: Kubernetes' removals from 1.16 to the
// current release (kubernetes.yaml). Maps are never changed once parsed,
// so every caller shares one.
func Kubernetes() *Map { return builtIn() }

var builtIn = sync.OnceValue(func() *Map {
	m, err := parseBuiltIn(kubernetesYAML)
	if err != nil {
		panic("apimap: the built-in table does not parse: " + err.Error())
	}
	return m
})

// parseBuiltIn reads the built-in table: a map file with knownThrough, the
// newest release whose removals it holds, beside its mappings. A user's
// map file has no such field (Parse refuses it): what Kubernetes removed
// is the table's to say.
func parseBuiltIn(data []byte) (*Map, error) {
	var head struct {
		KnownThrough string          `json:"knownThrough"`
		Mappings     json.RawMessage `json:"mappings"`
	}
	if err := yaml.UnmarshalStrict(data, &head); err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	known, err := ParseVersion(head.KnownThrough)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: knownThrough: %w", err)
	}
	m, err := Parse(append([]byte(`{"mappings":`), append(head.Mappings, '}')...), "kubernetes")
	if err != nil {
		return nil, err
	}
	for _, e := range m.entries {
		if known.Less(e.RemovedIn) || known.Less(e.DeprecatedIn) {
			return nil, fmt.Errorf("kubernetes: %s: removed in %s, after knownThrough %s", e.From, e.RemovedIn, known)
		}
	}
	m.knownThrough = known
	return m, nil
}

// Deprecated is the entry of api when Kubernetes target deprecates or
// removes it.
func (m *Map) Deprecated(api API, target Version) (Entry, bool) {
	e, ok := m.Lookup(api.APIVersion, api.Kind)
	if !ok || !e.DeprecatedBy(target) {
		return Entry{}, false
	}
	return e, true
}

// Lookup finds the entry of an API version and kind.
func (m *Map) Lookup(apiVersion, kind string) (Entry, bool) {
	if m == nil {
		return Entry{}, false
	}
	e, ok := m.entries[API{apiVersion, kind}]
	return e, ok
}

// Entries are the map's entries, by removal release, then API version and
// kind.
func (m *Map) Entries() []Entry {
	if m == nil {
		return nil
	}
	out := make([]Entry, 0, len(m.entries))
	for _, e := range m.entries {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if c := a.RemovedIn.Compare(b.RemovedIn); c != 0 {
			return c
		}
		return strings.Compare(a.From.String(), b.From.String())
	})
	return out
}

// With is m with over's entries added, replacing m's of the same API
// version and kind. Neither is changed.
func (m *Map) With(over *Map) *Map {
	out := &Map{entries: map[API]Entry{}, knownThrough: m.KnownThrough()}
	if k := over.KnownThrough(); out.knownThrough.Less(k) {
		out.knownThrough = k
	}
	for _, src := range []*Map{m, over} {
		if src == nil {
			continue
		}
		for k, e := range src.entries {
			out.entries[k] = e
		}
	}
	return out
}

// Successor follows the entry of api to the API that replaces it and that
// served accepts, through successors that were removed in turn. It returns
// the entry of api and the successor; ok is false when api has no entry
// (not known removed), and the successor nil when none is served.
func (m *Map) Successor(api API, served func(API) bool) (Entry, *API, bool) {
	first, ok := m.Lookup(api.APIVersion, api.Kind)
	if !ok {
		return Entry{}, nil, false
	}
	e, seen := first, map[API]bool{api: true}
	for e.To != nil && !seen[*e.To] {
		to := *e.To
		if served(to) {
			return first, &to, true
		}
		seen[to] = true
		next, ok := m.Lookup(to.APIVersion, to.Kind)
		if !ok {
			break
		}
		e = next
	}
	return first, nil, true
}

// fileMapping is one mapping of a helm-mapkubeapis map file.
type fileMapping struct {
	DeprecatedAPI       string `json:"deprecatedAPI"`
	NewAPI              string `json:"newAPI"`
	DeprecatedInVersion string `json:"deprecatedInVersion"`
	RemovedInVersion    string `json:"removedInVersion"`
}

// Parse reads a map file in helm-mapkubeapis' shape:
//
//	mappings:
//	  - deprecatedAPI: "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\n"
//	    newAPI: "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
//	    deprecatedInVersion: "v1.21"
//	    removedInVersion: "v1.25"
//
// newAPI may be left out (nothing replaces the kind) and must name the same
// kind: the object is the same, read under another version. name names the
// file in errors and in the entries' Source.
func Parse(data []byte, name string) (*Map, error) {
	var file struct {
		Mappings []fileMapping `json:"mappings"`
	}
	if err := yaml.UnmarshalStrict(data, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m := &Map{entries: map[API]Entry{}}
	for i, fm := range file.Mappings {
		e, err := fm.entry()
		if err != nil {
			return nil, fmt.Errorf("%s: mappings[%d]: %w", name, i, err)
		}
		if _, dup := m.entries[e.From]; dup {
			return nil, fmt.Errorf("%s: mappings[%d]: %s is mapped twice", name, i, e.From)
		}
		e.Source = name
		m.entries[e.From] = e
	}
	return m, nil
}

func (fm fileMapping) entry() (Entry, error) {
	from, err := parseAPI(fm.DeprecatedAPI)
	if err != nil {
		return Entry{}, fmt.Errorf("deprecatedAPI: %w", err)
	}
	e := Entry{From: from}
	if strings.TrimSpace(fm.NewAPI) != "" {
		to, err := parseAPI(fm.NewAPI)
		if err != nil {
			return Entry{}, fmt.Errorf("newAPI: %w", err)
		}
		if to.Kind != from.Kind {
			return Entry{}, fmt.Errorf("newAPI names kind %s, deprecatedAPI %s: a successor is the same kind under another API version", to.Kind, from.Kind)
		}
		if to == from {
			return Entry{}, fmt.Errorf("newAPI is deprecatedAPI (%s)", from)
		}
		e.To = &to
	}
	if fm.DeprecatedInVersion != "" {
		if e.DeprecatedIn, err = ParseVersion(fm.DeprecatedInVersion); err != nil {
			return Entry{}, fmt.Errorf("deprecatedInVersion: %w", err)
		}
	}
	if fm.RemovedInVersion != "" {
		if e.RemovedIn, err = ParseVersion(fm.RemovedInVersion); err != nil {
			return Entry{}, fmt.Errorf("removedInVersion: %w", err)
		}
	}
	if e.DeprecatedIn.IsZero() && e.RemovedIn.IsZero() {
		return Entry{}, errors.New("neither deprecatedInVersion nor removedInVersion is set")
	}
	return e, nil
}

// parseAPI reads "apiVersion: X\nkind: Y\n", the form map files name APIs
// in (a YAML mapping, the way a manifest starts).
func parseAPI(s string) (API, error) {
	var a API
	if err := yaml.UnmarshalStrict([]byte(s), &a); err != nil {
		return API{}, fmt.Errorf("%q: want \"apiVersion: GROUP/VERSION\\nkind: KIND\\n\": %w", s, err)
	}
	if a.APIVersion == "" || a.Kind == "" {
		return API{}, fmt.Errorf("%q: want \"apiVersion: GROUP/VERSION\\nkind: KIND\\n\"", s)
	}
	return a, nil
}

// Version is a Kubernetes release, major and minor ("v1.25").
type Version struct {
	Major, Minor int
}

// ParseVersion reads "v1.25", "1.25", "v1.36.3" or a server's GitVersion
// ("v1.36.3-gke.100"): the patch and anything after it are ignored.
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.SplitN(t, ".", 3)
	if len(parts) < 2 {
		return Version{}, fmt.Errorf("%q is not a Kubernetes version (want MAJOR.MINOR, as 1.25)", s)
	}
	minor := parts[1]
	if i := strings.IndexFunc(minor, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minor = minor[:i] // "1.25+" as some providers' servers report their minor
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil || ma < 1 || mi < 0 {
		return Version{}, fmt.Errorf("%q is not a Kubernetes version (want MAJOR.MINOR, as 1.25)", s)
	}
	return Version{Major: ma, Minor: mi}, nil
}

// IsZero reports whether v is unset.
func (v Version) IsZero() bool { return v == Version{} }

// Less reports whether v is an earlier release than w.
func (v Version) Less(w Version) bool { return v.Compare(w) < 0 }

// Compare orders releases; the zero Version sorts first.
func (v Version) Compare(w Version) int {
	if v.Major != w.Major {
		return v.Major - w.Major
	}
	return v.Minor - w.Minor
}

// String is "1.25" ("" for the zero Version).
func (v Version) String() string {
	if v.IsZero() {
		return ""
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}
