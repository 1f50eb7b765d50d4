package chart

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/internal/chart/common"
)

// ReleaseAction says which operation a render is for; it sets
// .Release.IsInstall or .Release.IsUpgrade.
type ReleaseAction int

// Release actions.
const (
	ActionInstall ReleaseAction = iota
	ActionUpgrade
)

// RenderOptions is everything a render depends on besides the chart.
type RenderOptions struct {
	ReleaseName string
	Namespace   string
	// Revision is .Release.Revision; 0 means 1, as `helm template`.
	Revision int
	Action   ReleaseAction
	// KubeVersion overrides the default Kubernetes version (v1.37.0), as
	// --kube-version. Ignored when Capabilities is set.
	KubeVersion string
	// APIVersions are added to the default API versions, as --api-versions.
	// Ignored when Capabilities is set.
	APIVersions []string
	// Capabilities, when set, replaces the offline defaults entirely (a
	// cluster-backed render).
	Capabilities *Capabilities
	// UserValues are the merged user values (see UserValues). Not modified.
	UserValues map[string]any
	// Lookup backs the lookup function; nil means offline (empty results).
	Lookup LookupFunc
	// MaxOutputBytes bounds the bytes templates write (include and tpl
	// results count where they are built and where they are inserted);
	// 0 means DefaultMaxOutputBytes.
	MaxOutputBytes int64
	// Timeout bounds the time templates execute; 0 means
	// DefaultRenderTimeout. A render over either limit fails with an
	// error wrapping ErrRenderBudget that names the template.
	Timeout time.Duration
	// KeepDocuments keeps the JSON of the rendering's documents, which the
	// sorter reads their heads from, for the parse into objects that
	// follows in a plan or an apply (package yamldoc): each document is
	// converted from YAML once. `convoy render` does not parse them.
	KeepDocuments bool
}

// Rendered is the result of rendering one release.
type Rendered struct {
	// Manifests are the release resources in Helm's install order.
	Manifests []Manifest
	// Hooks are the hook documents, in Helm's kind order.
	Hooks []*Hook
	// Notes is the top chart's rendered NOTES.txt.
	Notes string
	// CRDs are the files under crds/ of the chart and its enabled
	// subcharts, named by their path in the chart tree, kept as-is.
	CRDs []*File
	// Values are the final values templates saw (.Values of the top chart).
	Values map[string]any
	// Chart is the chart as Helm records it in a release: the loaded chart
	// after dependency processing (disabled subcharts dropped, aliases
	// applied, import-values merged into Values, dependency entries
	// normalised). Marshalled with encoding/json it matches the "chart"
	// object of Helm's release JSON.
	Chart *Chart
	// Warnings are the non-fatal messages Helm logs (coalescing conflicts,
	// non-bool conditions, missing import tables), in a stable order.
	Warnings []string
	// Impure: a template whose output is a release resource or a hook an
	// install, upgrade, rollback or uninstall runs called lookup, read the
	// clock or drew random numbers, so that a rendering from the same
	// inputs may differ. Test hooks (convoy test) do not count.
	Impure bool `json:",omitempty"`
	// Volatile: such a template read the clock or drew random numbers
	// (Impure without Volatile: it called lookup only, so that a rendering
	// from the same inputs and the same answers to its lookups is the
	// same).
	Volatile bool `json:",omitempty"`
}

// impureOutput says whether a template impure in a way of mask (by name)
// produced a resource or a hook other than a test hook.
func impureOutput(impure map[string]impurity, mask impurity, r *Rendered) bool {
	if len(impure) == 0 {
		return false
	}
	for _, m := range r.Manifests {
		if impure[m.Path]&mask != 0 {
			return true
		}
	}
	for _, h := range r.Hooks {
		if impure[h.Path]&mask != 0 && slices.ContainsFunc(h.Events, func(e HookEvent) bool { return e != HookTest }) {
			return true
		}
	}
	return false
}

// Manifest returns the release manifest as Helm stores it in a release
// record: every resource as "---\n# Source: PATH\nCONTENT\n", optionally
// preceded by the CRDs.
func (r *Rendered) Manifest(includeCRDs bool) string {
	// Sized first and written without fmt: a release's manifest may be
	// many MiB, and a growing builder would copy it over and over.
	const head = "---\n# Source: "
	n := 0
	if includeCRDs {
		for _, c := range r.CRDs {
			n += len(head) + len(c.Name) + 1 + len(c.Data) + 1
		}
	}
	for _, m := range r.Manifests {
		n += len(head) + len(m.Path) + 1 + len(m.Content) + 1
	}
	var b strings.Builder
	b.Grow(n)
	if includeCRDs {
		for _, c := range r.CRDs {
			b.WriteString(head)
			b.WriteString(c.Name)
			b.WriteByte('\n')
			b.Write(c.Data)
			b.WriteByte('\n')
		}
	}
	for _, m := range r.Manifests {
		b.WriteString(head)
		b.WriteString(m.Path)
		b.WriteByte('\n')
		b.WriteString(m.Content) // m.Document(), without its copy
		b.WriteByte('\n')
	}
	return b.String()
}

// JoinManifests is Manifest(false), after which each manifest's Content is
// the part of the joined string it was written to: a large release's
// manifests are not held twice, as rendered and as recorded. Not while
// others read r.
func (r *Rendered) JoinManifests() string {
	s := r.Manifest(false)
	const head = "---\n# Source: "
	off := 0
	for i := range r.Manifests {
		m := &r.Manifests[i]
		off += len(head) + len(m.Path) + 1
		m.Content = s[off : off+len(m.Content)]
		off += len(m.Content) + 1
	}
	return s
}

// TemplateOutput is exactly what `helm template` prints on stdout.
func (r *Rendered) TemplateOutput(includeCRDs bool) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(r.Manifest(includeCRDs)))
	b.WriteByte('\n')
	for _, h := range r.Hooks {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	return b.String()
}

// NotInstallableError is returned for library (or other non-application) charts.
type NotInstallableError struct{ Type string }

func (e *NotInstallableError) Error() string {
	return fmt.Sprintf("%s charts are not installable", e.Type)
}

// KubeVersionError is returned when the chart's kubeVersion constraint
// excludes the target Kubernetes version.
type KubeVersionError struct {
	Constraint, Version string
}

func (e *KubeVersionError) Error() string {
	return fmt.Sprintf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", e.Constraint, e.Version)
}

// DependencyError wraps a failure of dependency processing.
type DependencyError struct{ Err error }

func (e *DependencyError) Error() string {
	return "chart dependencies processing failed: " + e.Err.Error()
}
func (e *DependencyError) Unwrap() error { return e.Err }

// HelmTemplateMessage is the text `helm template` prints after "Error: "
// for an error returned by Render: errors raised after Helm has created its
// in-memory release (template, manifest and kubeVersion errors) carry a
// hint about --debug.
func HelmTemplateMessage(err error) string {
	var te *TemplateError
	var me *ManifestError
	var ke *KubeVersionError
	if errors.As(err, &te) || errors.As(err, &me) || errors.As(err, &ke) {
		return err.Error() + "\n\nUse --debug flag to render out invalid YAML"
	}
	return err.Error()
}

// Render renders a release of ch. It does not modify ch or opts and may
// run concurrently with other renders of the same chart.
func Render(ch *Chart, opts RenderOptions) (*Rendered, error) {
	if ch == nil || ch.Metadata == nil {
		return nil, errors.New("no chart")
	}
	if ch.factsOnly {
		return nil, fmt.Errorf("chart %s: only its facts are at hand, not its files", ch.Metadata.Name)
	}
	switch ch.Metadata.Type {
	case "", "application":
	default:
		return nil, &NotInstallableError{Type: ch.Metadata.Type}
	}
	if err := checkDependencies(ch); err != nil {
		return nil, err
	}
	caps, err := capabilitiesFor(opts)
	if err != nil {
		return nil, err
	}
	out := &Rendered{}
	warn := func(format string, args ...any) {
		out.Warnings = append(out.Warnings, fmt.Sprintf(format, args...))
	}
	tree := newTree(ch)
	if err := processDependencies(warn, tree, opts.UserValues); err != nil {
		return nil, &DependencyError{Err: err}
	}
	values, err := coalesceNode(warn, tree, deepCopyMap(orEmpty(opts.UserValues)), "", false)
	if err != nil {
		return nil, err
	}
	if err := validateSchemas(tree, values); err != nil {
		return nil, err
	}
	out.Values = values

	if c := tree.meta.KubeVersion; c != "" && !isCompatibleRange(c, caps.KubeVersion.String()) {
		return nil, &KubeVersionError{Constraint: c, Version: caps.KubeVersion.Version}
	}
	revision := cmp.Or(opts.Revision, 1)
	top := map[string]any{
		"Capabilities": caps,
		"Release": map[string]any{
			"Name":      opts.ReleaseName,
			"Namespace": opts.Namespace,
			"IsUpgrade": opts.Action == ActionUpgrade,
			"IsInstall": opts.Action != ActionUpgrade,
			"Revision":  revision,
			"Service":   "Helm",
		},
		"Values": common.Values(values),
	}
	files, impure, err := executeWithBudget(ch.templates, collectTemplates(tree, top), opts)
	if err != nil {
		return nil, err
	}
	notesName := path.Join(ch.Name(), "templates", "NOTES.txt")
	for name, content := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			if name == notesName {
				out.Notes = content
			}
			delete(files, name)
		}
	}
	out.Hooks, out.Manifests, err = sortManifests(files, opts.KeepDocuments)
	if err != nil {
		return nil, err
	}
	out.Impure = impureOutput(impure, impureLookup|impureVolatile, out)
	out.Volatile = impureOutput(impure, impureVolatile, out)
	out.CRDs = treeCRDs(tree)
	out.Chart = tree.processedChart(nil)
	return out, nil
}

func capabilitiesFor(opts RenderOptions) (*Capabilities, error) {
	if opts.Capabilities != nil {
		c := *opts.Capabilities
		return &c, nil
	}
	caps := DefaultCapabilities()
	if opts.KubeVersion != "" {
		kv, err := ParseKubeVersion(opts.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("invalid kube version '%s': %w", opts.KubeVersion, err)
		}
		caps.KubeVersion = *kv
	}
	caps.APIVersions = append(caps.APIVersions, opts.APIVersions...)
	return caps, nil
}

func treeCRDs(n *node) []*File {
	var out []*File
	for _, f := range n.chart.Files {
		if strings.HasPrefix(f.Name, "crds/") && hasManifestExtension(f.Name) {
			out = append(out, &File{Name: path.Join(n.fullPath(), f.Name), Data: f.Data, ModTime: f.ModTime})
		}
	}
	for _, d := range n.deps {
		out = append(out, treeCRDs(d)...)
	}
	return out
}

// processedChart turns the working tree back into a Chart. Templates,
// files and raw data are shared with the loaded chart (never modified).
func (n *node) processedChart(parent *Chart) *Chart {
	src := n.chart
	c := &Chart{
		Raw:           src.Raw,
		Metadata:      n.meta,
		Lock:          src.Lock,
		Templates:     src.Templates,
		Values:        n.values,
		Schema:        src.Schema,
		SchemaModTime: src.SchemaModTime,
		Files:         src.Files,
		ModTime:       src.ModTime,
		RawValues:     src.RawValues,
		parent:        parent,
		schemaCache:   src.schemaCache,
		files:         src.files,
		templates:     src.templates,
	}
	for _, d := range n.deps {
		c.dependencies = append(c.dependencies, d.processedChart(c))
	}
	return c
}
