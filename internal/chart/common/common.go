// Package common holds the types templates see under .Values and
// .Capabilities. They live in a package named "common", as in Helm, because
// their names leak into template output and errors (typeOf .Values is
// "common.Values"); parity needs the same names.
package common

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Values is a values table, the type of .Values.
type Values map[string]any

// Capabilities is .Capabilities; field and method names are Helm's because
// templates reach them by name.
type Capabilities struct {
	KubeVersion KubeVersion
	APIVersions VersionSet
	HelmVersion BuildInfo
}

// KubeVersion is the Kubernetes version templates see.
type KubeVersion struct {
	Version    string // as given, with a leading "v"
	normalized string // "v" + numeric components, for constraint checks
	Major      string
	Minor      string
}

// String is the normalised version ("v1.30.2" for "v1.30.2-gke.1").
func (kv *KubeVersion) String() string {
	return cmp.Or(kv.normalized, kv.Version)
}

// GitVersion is the version as given.
func (kv *KubeVersion) GitVersion() string { return kv.Version }

// VersionSet is the list of API group versions the cluster serves.
type VersionSet []string

// Has reports whether apiVersion (e.g. "apps/v1" or "apps/v1/Deployment") is served.
func (v VersionSet) Has(apiVersion string) bool { return slices.Contains(v, apiVersion) }

// BuildInfo is .Capabilities.HelmVersion.
type BuildInfo struct {
	Version           string `json:"version,omitempty"`
	GitCommit         string `json:"git_commit,omitempty"`
	GitTreeState      string `json:"git_tree_state,omitempty"`
	GoVersion         string `json:"go_version,omitempty"`
	KubeClientVersion string `json:"kube_client_version"`
}

var genericVersionRE = regexp.MustCompile(`^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)*$`)

// ParseKubeVersion parses a Kubernetes version as `helm template
// --kube-version` does (k8s.io/apimachinery's generic version syntax).
func ParseKubeVersion(s string) (*KubeVersion, error) {
	parts := genericVersionRE.FindStringSubmatch(s)
	if parts == nil {
		return nil, fmt.Errorf("could not parse %q as version", s)
	}
	comps := strings.Split(parts[1], ".")
	if len(comps) < 2 {
		return nil, fmt.Errorf("illegal version string %q", s)
	}
	nums := make([]string, len(comps))
	for i, c := range comps {
		if i == 0 && strings.HasPrefix(c, "0") && c != "0" {
			return nil, fmt.Errorf("illegal zero-prefixed version component %q in %q", c, s)
		}
		n, err := strconv.ParseUint(c, 10, 0)
		if err != nil {
			return nil, fmt.Errorf("illegal non-numeric version component %q in %q: %v", c, s, err)
		}
		nums[i] = strconv.FormatUint(n, 10)
	}
	git := s
	if !strings.HasPrefix(s, "v") {
		git = "v" + s
	}
	return &KubeVersion{
		Version:    git,
		normalized: "v" + strings.Join(nums, "."),
		Major:      nums[0],
		Minor:      nums[1],
	}, nil
}
