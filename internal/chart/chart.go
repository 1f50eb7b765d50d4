package chart

import (
	"path"
	"strings"
	"time"
)

// Chart API versions understood by the loader.
const (
	APIVersionV1 = "v1"
	APIVersionV2 = "v2"
)

// File is one file of a chart: a template, a CRD or any other file visible
// through .Files. Data is marshalled as base64 by encoding/json, which is
// what Helm's release records contain.
type File struct {
	Name    string    `json:"name"`
	Data    []byte    `json:"data"`
	ModTime time.Time `json:"modtime,omitzero"`
}

// Chart is a loaded chart. The JSON tags match Helm's pkg/chart/v2.Chart so
// that a release record can embed it directly. A Chart is never modified
// after Load returns.
type Chart struct {
	// Raw holds every file of the chart as loaded (not serialised).
	Raw []*File `json:"-"`
	// Metadata is the content of Chart.yaml (plus requirements.yaml for v1).
	Metadata *Metadata `json:"metadata"`
	// Lock is Chart.lock (or requirements.lock for v1), if present.
	Lock *Lock `json:"lock"`
	// Templates are the files under templates/.
	Templates []*File `json:"templates"`
	// Values are the parsed default values from values.yaml.
	Values map[string]any `json:"values"`
	// Schema is the raw values.schema.json, if present.
	Schema        []byte    `json:"schema"`
	SchemaModTime time.Time `json:"schemamodtime"`
	// Files are all other files (crds/, README, config files, ...).
	Files   []*File   `json:"files"`
	ModTime time.Time `json:"modtime,omitzero"`

	// RawValues is values.yaml as it was on disk.
	RawValues []byte `json:"-"`

	parent       *Chart
	dependencies []*Chart
	schemaCache  *compiledSchema
	files        map[string][]byte
	templates    *templateCache
	facts        *facts
	// factsOnly: the chart is Facts' (no files at hand).
	factsOnly bool
}

// filesMap is .Files' content, built once at load.
func (c *Chart) filesMap() map[string][]byte {
	if c.files != nil {
		return c.files
	}
	m := make(map[string][]byte, len(c.Files))
	for _, f := range c.Files {
		m[f.Name] = f.Data
	}
	return m
}

// Name is the chart's name from its metadata.
func (c *Chart) Name() string {
	if c.Metadata == nil {
		return ""
	}
	return c.Metadata.Name
}

// IsRoot reports whether c is a top-level chart.
func (c *Chart) IsRoot() bool { return c.parent == nil }

// Parent is the chart that holds c in its charts/ directory, or nil.
func (c *Chart) Parent() *Chart { return c.parent }

// Dependencies are the subcharts found in charts/, in load order.
func (c *Chart) Dependencies() []*Chart { return c.dependencies }

// IsLibrary reports whether the chart is of type library.
func (c *Chart) IsLibrary() bool {
	return c.Metadata != nil && strings.EqualFold(c.Metadata.Type, "library")
}

// FullPath is the chart's path as used in template names:
// "top/charts/sub/charts/subsub".
func (c *Chart) FullPath() string {
	if c.parent != nil {
		return c.parent.FullPath() + "/charts/" + c.Name()
	}
	return c.Name()
}

// CRDFiles are the manifests under crds/ of the chart and its subcharts
// (depth first), each named by its path in the chart tree as Helm prints it.
func (c *Chart) CRDFiles() []*File {
	var out []*File
	for _, f := range c.Files {
		if strings.HasPrefix(f.Name, "crds/") && hasManifestExtension(f.Name) {
			out = append(out, &File{Name: path.Join(c.FullPath(), f.Name), Data: f.Data, ModTime: f.ModTime})
		}
	}
	for _, d := range c.dependencies {
		out = append(out, d.CRDFiles()...)
	}
	return out
}

func hasManifestExtension(name string) bool {
	ext := path.Ext(name)
	return strings.EqualFold(ext, ".yaml") || strings.EqualFold(ext, ".yml") || strings.EqualFold(ext, ".json")
}

// Metadata is Chart.yaml, with Helm's JSON field names.
type Metadata struct {
	Name         string            `json:"name,omitempty"`
	Home         string            `json:"home,omitempty"`
	Sources      []string          `json:"sources,omitempty"`
	Version      string            `json:"version,omitempty"`
	Description  string            `json:"description,omitempty"`
	Keywords     []string          `json:"keywords,omitempty"`
	Maintainers  []*Maintainer     `json:"maintainers,omitempty"`
	Icon         string            `json:"icon,omitempty"`
	APIVersion   string            `json:"apiVersion,omitempty"`
	Condition    string            `json:"condition,omitempty"`
	Tags         string            `json:"tags,omitempty"`
	AppVersion   string            `json:"appVersion,omitempty"`
	Deprecated   bool              `json:"deprecated,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	KubeVersion  string            `json:"kubeVersion,omitempty"`
	Dependencies []*Dependency     `json:"dependencies,omitempty"`
	Type         string            `json:"type,omitempty"`
}

// Maintainer is one entry of Chart.yaml's maintainers.
type Maintainer struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

// Dependency is one entry of Chart.yaml's dependencies (or requirements.yaml).
type Dependency struct {
	Name         string   `json:"name" yaml:"name"`
	Version      string   `json:"version,omitempty" yaml:"version,omitempty"`
	Repository   string   `json:"repository" yaml:"repository"`
	Condition    string   `json:"condition,omitempty" yaml:"condition,omitempty"`
	Tags         []string `json:"tags,omitempty" yaml:"tags,omitempty"`
	Enabled      bool     `json:"enabled,omitempty" yaml:"enabled,omitempty"`
	ImportValues []any    `json:"import-values,omitempty" yaml:"import-values,omitempty"`
	Alias        string   `json:"alias,omitempty" yaml:"alias,omitempty"`
}

// Lock is Chart.lock.
type Lock struct {
	Generated    time.Time     `json:"generated"`
	Digest       string        `json:"digest"`
	Dependencies []*Dependency `json:"dependencies"`
}
