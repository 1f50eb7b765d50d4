package chart

import (
	"runtime"
	"slices"

	"github.com/convoy-sh/convoy/internal/chart/common"
)

// Template-visible types, defined in package common so their names match Helm's.
type (
	Capabilities = common.Capabilities
	KubeVersion  = common.KubeVersion
	VersionSet   = common.VersionSet
	BuildInfo    = common.BuildInfo
)

// ParseKubeVersion parses a --kube-version value.
func ParseKubeVersion(s string) (*KubeVersion, error) { return common.ParseKubeVersion(s) }

// Defaults of the oracle, helm v4.3.1 built against client-go v0.37.1: its
// offline Kubernetes version is v1.37.0.
const (
	defaultKubeVersion = "v1.37.0"
	helmVersion        = "v4.3" // what a `go install`ed helm reports
	kubeClientVersion  = "v1.37"
)

// DefaultCapabilities returns what `helm template` assumes offline.
func DefaultCapabilities() *Capabilities {
	kv, _ := common.ParseKubeVersion(defaultKubeVersion)
	return &Capabilities{
		KubeVersion: *kv,
		APIVersions: slices.Clone(defaultAPIVersions),
		HelmVersion: BuildInfo{
			Version:           helmVersion,
			GoVersion:         runtime.Version(),
			KubeClientVersion: kubeClientVersion,
		},
	}
}
