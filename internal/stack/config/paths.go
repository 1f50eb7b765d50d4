package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ExpandHome expands a leading "~" or "~/" to the user's home directory;
// other paths are returned as they are.
func ExpandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expand %s: %w", p, err)
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
}

// ResolvePath is the one resolver of paths written in a stack: "~/" is the
// home directory, absolute paths stay, and relative paths are relative to
// base (the stack directory). The result is absolute and clean.
func ResolvePath(base, p string) (string, error) {
	p, err := ExpandHome(p)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Abs(p)
}

// UsedClusters are the cluster blocks the stack's releases use, by name;
// "" is the default cluster, included when a release has no cluster block,
// or when the stack has no release (so that removing the last release
// still finds what the stack deployed).
func (s *Stack) UsedClusters() map[string]*ClusterSpec {
	m := map[string]*ClusterSpec{}
	for _, r := range s.Releases {
		if r.Cluster != nil {
			m[r.Cluster.Name] = r.Cluster
		} else {
			m[""] = nil
		}
	}
	if len(m) == 0 {
		m[""] = nil
	}
	return m
}
