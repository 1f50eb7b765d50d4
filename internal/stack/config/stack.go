package config

import (
	"slices"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/apimap"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Stack is an evaluated stack: the inert data that rendering, planning and
// applying work from. Create it with Evaluate.
type Stack struct {
	Name string
	// Environment is the chosen environment block ("" when the stack
	// declares none); EnvironmentFiles are its var_files, relative to Dir.
	Environment      string
	EnvironmentFiles []string
	// Dir is the stack directory; local chart paths are relative to it.
	Dir              string
	DefaultNamespace string
	// Atomic makes the whole apply atomic: a failure rolls back every release
	// changed in this run.
	Atomic bool
	// APIMap is the stack block's api_map, parsed (nil when unset): it
	// adds to and overrides convoy's table of removed APIs. KubeVersion
	// is its kube_version (zero when unset).
	APIMap      *apimap.Map
	KubeVersion apimap.Version
	// Storage is the stack block's storage block (nil when absent: the
	// run's driver, --storage-driver).
	Storage *Storage

	Clusters     map[string]*ClusterSpec
	Repositories map[string]*RepositorySpec
	// Releases are the expanded release instances in address order.
	Releases []*ReleaseInstance
	// Moves are the moved blocks, checked; Removed the removed blocks.
	Moves   Moves
	Removed []*Removed

	ev *evaluator // for EvaluateRelease
}

// ID is the stack's identity on a cluster: the owner label of its release
// records and the name of its lock. Each environment of a stack is its own
// deployment (Name.Environment), except "default", which keeps the stack's
// name so that adding environments to a stack does not orphan its releases.
func (s *Stack) ID() string {
	if s.Environment == "" || s.Environment == DefaultEnvironment {
		return s.Name
	}
	return s.Name + "." + s.Environment
}

// Release returns the instance with the given address, or nil.
func (s *Stack) Release(addr ReleaseInstanceAddr) *ReleaseInstance {
	// Releases are in address order: a search, not a scan per call (a
	// plan asks for each release and each dependency).
	i, _ := slices.BinarySearchFunc(s.Releases, addr, func(r *ReleaseInstance, a ReleaseInstanceAddr) int {
		switch {
		case r.Addr.Less(a):
			return -1
		case a.Less(r.Addr):
			return 1
		}
		return 0
	})
	if i < len(s.Releases) && s.Releases[i].Addr == addr {
		return s.Releases[i]
	}
	// A stack put together in another order (tests) is scanned.
	for _, r := range s.Releases {
		if r.Addr == addr {
			return r
		}
	}
	return nil
}

// LocalChartPath returns the absolute path of a local chart (a directory or
// .tgz): relative paths are resolved against the stack directory, ~/ against
// the home directory. It returns "" for charts that are not local.
func (s *Stack) LocalChartPath(ri *ReleaseInstance) (string, error) {
	if ri.ChartSource != ChartLocal {
		return "", nil
	}
	return ResolvePath(s.Dir, ri.Chart)
}

// ClusterSpec is an evaluated cluster block. Empty fields mean the default:
// $KUBECONFIG (or ~/.kube/config) and its current context.
type ClusterSpec struct {
	Name       string
	Kubeconfig string
	Context    string
	// QPS and Burst are the cluster's client rate limits (0: the run's).
	QPS, Burst int
	DeclRange  hcl.Range
}

// RepositorySpec is an evaluated chart repository.
type RepositorySpec struct {
	Name     string
	URL      string
	OCI      bool // URL starts with oci://
	Username string
	Password cty.Value // possibly sensitive; cty.NullVal(cty.String) when unset
	// BearerToken is sent as "Authorization: Bearer"; always marked
	// sensitive, cty.NullVal(cty.String) when unset.
	BearerToken cty.Value
	// CAFile, CertFile and KeyFile are absolute paths ("" when unset):
	// a CA bundle trusted besides the system roots, a client certificate
	// and its key.
	CAFile, CertFile, KeyFile string
	// InsecureSkipTLSVerify disables certificate verification (warned).
	InsecureSkipTLSVerify bool
	DeclRange             hcl.Range
}

// ChartSource says where a release's chart comes from.
type ChartSource uint8

const (
	ChartLocal     ChartSource = iota + 1 // a directory or .tgz, relative to the stack directory
	ChartRepo                             // "repo/name" from a repository block
	ChartOCI                              // "oci://registry/path/name"
	ChartManifests                        // manifests = [...]: YAML files as a chart (ReleaseInstance.Manifests)
)

func (c ChartSource) String() string {
	switch c {
	case ChartLocal:
		return "local"
	case ChartRepo:
		return "repository"
	case ChartOCI:
		return "oci"
	case ChartManifests:
		return "manifests"
	}
	return "unknown"
}

// ValuesLayerKind is how a values layer was written.
type ValuesLayerKind uint8

const (
	ValuesYAML   ValuesLayerKind = iota + 1 // a string: YAML text, e.g. file("values.yaml")
	ValuesObject                            // an HCL object
)

func (k ValuesLayerKind) String() string {
	if k == ValuesYAML {
		return "yaml"
	}
	return "object"
}

// ValuesLayer is one element of a release's values list. Layers are merged in
// order by the chart engine, later layers winning.
type ValuesLayer struct {
	Kind ValuesLayerKind
	// Value is a cty.String for ValuesYAML and an object or map for
	// ValuesObject. Marks (sensitive) are preserved; it may contain unknown
	// values that depend on other releases' apply results.
	Value cty.Value
	Range hcl.Range
	// File is the absolute path of the file a YAML layer written as
	// file(PATH) was read from, so that diagnostics about its keys can
	// point into it; "" otherwise.
	File string
}

// Dependency is an edge to another release instance, with the source range
// of the reference (or depends_on entry) that created it.
type Dependency struct {
	Addr  ReleaseInstanceAddr
	Range hcl.Range
}

// ReleaseInstance is one evaluated release: a release block without count
// or for_each, or one of its instances.
type ReleaseInstance struct {
	Addr            ReleaseInstanceAddr
	Name            string // Helm release name
	Namespace       string
	CreateNamespace bool

	// Chart is the chart as written: a path, "repo/name" or "oci://...".
	Chart       string
	ChartSource ChartSource
	// Repository is the repository a "repo/name" chart comes from, else nil.
	Repository *RepositorySpec
	// Version is a semver constraint ("" means latest / the local chart).
	Version string
	// Manifests are the YAML files of a ChartManifests release: paths
	// relative to the stack directory, in name order.
	Manifests []string

	Values []ValuesLayer
	// Set and SetSensitive map Helm --set paths to values. Every value in
	// SetSensitive is marked sensitive.
	Set          map[string]cty.Value
	SetSensitive map[string]cty.Value

	Wait        bool
	WaitForJobs bool
	// Timeout bounds each wait of the release's operations; 0 when the
	// release does not set one: the release engine's default
	// (release.DefaultTimeout, Helm's).
	Timeout       time.Duration
	Atomic        bool
	CleanupOnFail bool
	HistoryMax    int
	DisableHooks  bool
	TakeOwnership bool
	// ExpandClaims resizes the existing claims of the release's
	// StatefulSets to their volumeClaimTemplates' storage requests when
	// their StorageClass allows volume expansion (expand_claims).
	ExpandClaims bool
	// IgnoreChanges are the fields this release leaves to other field
	// managers (ignore_changes), in the order written.
	IgnoreChanges []IgnoreChange
	// AdoptFromStack names the stack this one takes the release over from:
	// a release whose newest record another stack wrote is otherwise left
	// alone.
	AdoptFromStack string
	// Adopt takes over a release whose newest record no stack wrote (a
	// helm install's) or that a stack let go (adopt): such a release is
	// otherwise left alone.
	Adopt  bool
	Labels map[string]string
	// Patches are applied to the rendered manifests, in order (patches).
	Patches []Patch
	// PostRenderer is Helm's exec post-renderer (post_renderer), run after
	// the patches; nil when unset.
	PostRenderer *PostRenderer

	// CRDs is what apply does with the chart's crds/ (crds; default
	// CRDsCreate, Helm's behaviour).
	CRDs CRDPolicy
	// HealthChecks judge the release's custom resources while it waits
	// (health_check blocks; internal/cluster/health compiles them).
	HealthChecks []*HealthCheck

	// Cluster is the cluster block this release targets, nil for the default.
	Cluster *ClusterSpec

	// DependsOn lists the instances this one depends on, from depends_on and
	// from references in its expressions, in address order without repeats.
	DependsOn []Dependency

	// Known is false when some value (values, set) depends on attributes of
	// other releases known only after apply. Re-evaluate with
	// Stack.EvaluateRelease once they are.
	Known bool

	DeclRange hcl.Range
}

// Defaults used when a release does not say.
const (
	DefaultHistoryMax = 10
	DefaultNamespace  = "default"
)

// AppliedRelease carries the attributes of an applied release instance that
// are only known after apply, for re-evaluating its dependents.
type AppliedRelease struct {
	Revision int
	Status   string
	// Resources is a list of objects describing what the release created
	// (shape chosen by the release engine); cty.NilVal leaves it unknown.
	Resources cty.Value
}
