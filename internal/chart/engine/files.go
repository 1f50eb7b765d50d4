// Package engine holds the type of .Files. It lives in a package named
// "engine", as in Helm, because its name leaks into template errors
// ("got engine.files"); parity needs the same name.
package engine

import (
	"encoding/base64"
	"path"
	"strings"

	"github.com/gobwas/glob"
	"sigs.k8s.io/yaml"
)

type files map[string][]byte

// NewFiles returns the .Files value for a chart's files (name → content).
// The map is used as is; callers must not modify it afterwards.
func NewFiles(m map[string][]byte) any { return files(m) }

// GetBytes returns a file's content, or an empty slice.
func (f files) GetBytes(name string) []byte {
	if v, ok := f[name]; ok {
		return v
	}
	return []byte{}
}

// Get returns a file's content as a string, or "".
func (f files) Get(name string) string { return string(f.GetBytes(name)) }

// Glob returns the files whose names match a gobwas/glob pattern.
func (f files) Glob(pattern string) files {
	g, err := glob.Compile(pattern, '/')
	if err != nil {
		g, _ = glob.Compile("**")
	}
	out := make(files)
	for name, data := range f {
		if g.Match(name) {
			out[name] = data
		}
	}
	return out
}

// AsConfig renders the files as ConfigMap data (YAML, keyed by base name).
func (f files) AsConfig() string {
	if f == nil {
		return ""
	}
	m := make(map[string]string, len(f))
	for k, v := range f {
		m[path.Base(k)] = string(v)
	}
	return toYAML(m)
}

// AsSecrets renders the files as Secret data (base64, keyed by base name).
func (f files) AsSecrets() string {
	if f == nil {
		return ""
	}
	m := make(map[string]string, len(f))
	for k, v := range f {
		m[path.Base(k)] = base64.StdEncoding.EncodeToString(v)
	}
	return toYAML(m)
}

// Lines splits a file into lines, without a trailing empty line.
func (f files) Lines(name string) []string {
	if f == nil || len(f[name]) == 0 {
		return []string{}
	}
	s := string(f[name])
	if s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return strings.Split(s, "\n")
}

func toYAML(v any) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}
