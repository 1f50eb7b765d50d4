package config

import (
	"sort"

	"github.com/hashicorp/hcl/v2"
)

// Config is a decoded, unevaluated stack: every block with its expressions
// and source ranges. It is produced by LoadDir and consumed by Evaluate.
type Config struct {
	// Dir is the stack directory, as given to LoadDir.
	Dir string
	// Files maps file names (as used in ranges) to parsed files, for
	// rendering diagnostics with source snippets.
	Files map[string]*hcl.File

	Stack        *StackBlock // nil when the stack has no stack block
	Variables    map[string]*Variable
	Locals       map[string]*Local
	Clusters     map[string]*Cluster
	Repositories map[string]*Repository
	Releases     map[string]*Release
	// Environments are the `environment` blocks; one is chosen per run
	// (EvalOptions.Environment).
	Environments map[string]*Environment
	// Moved and Removed are the moved and removed blocks, in file order
	// (moved.go, removed.go).
	Moved   []*Moved
	Removed []*Removed
	// Policies are the `policy` blocks of the stack's files and of the
	// policy files given outside it (LoadPolicyPaths).
	Policies map[string]*Policy
	// PolicyFiles are the parsed policy files given outside the stack.
	PolicyFiles map[string]*hcl.File
}

// Environment is an `environment "name" { var_files, vars }` block: variable
// values applied when the environment is chosen, after *.auto.vars.hcl and
// before --var-file.
type Environment struct {
	Name string
	// VarFiles is a list of .vars.hcl paths relative to the stack directory;
	// nil when unset.
	VarFiles hcl.Expression
	// Vars is an object of variable values; nil when unset.
	Vars      hcl.Expression
	DeclRange hcl.Range
}

// StackBlock is the optional `stack "name" { ... }` block.
type StackBlock struct {
	Name             string
	DefaultNamespace hcl.Expression // nil when unset
	Atomic           hcl.Expression // nil when unset
	// APIMap is a map file of removed APIs (apimap) relative to the
	// stack directory; KubeVersion the Kubernetes release plans check
	// the objects' APIs against. Nil when unset.
	APIMap      hcl.Expression
	KubeVersion hcl.Expression
	// Storage is the storage block (nil when absent).
	Storage    *StorageBlock
	DeclRange  hcl.Range
	LabelRange hcl.Range // the name's
}

// Variable is a `variable "name" { ... }` block.
type Variable struct {
	Name        string
	Type        hcl.Expression // nil: any type
	Default     hcl.Expression // nil: the variable is required
	Description string
	Sensitive   bool
	Validations []*VariableValidation
	DeclRange   hcl.Range
}

// VariableValidation is a `validation { condition, error_message }` block.
type VariableValidation struct {
	Condition    hcl.Expression
	ErrorMessage hcl.Expression
	DeclRange    hcl.Range
}

// Local is one attribute of a `locals { ... }` block.
type Local struct {
	Name      string
	Expr      hcl.Expression
	DeclRange hcl.Range
}

// Cluster is a `cluster "name" { ... }` block: where releases go.
type Cluster struct {
	Name       string
	Kubeconfig hcl.Expression // nil: $KUBECONFIG or ~/.kube/config
	Context    hcl.Expression // nil: the kubeconfig's current context
	// QPS and Burst are the client-side rate limits of requests to this
	// cluster (nil: --kube-qps and --kube-burst).
	QPS, Burst hcl.Expression
	DeclRange  hcl.Range
}

// Repository is a `repository "name" { ... }` block: a chart repository.
type Repository struct {
	Name     string
	URL      hcl.Expression
	Username hcl.Expression // nil when unset
	Password hcl.Expression // nil when unset
	// BearerToken, CAFile, CertFile, KeyFile and InsecureSkipTLSVerify
	// are nil when unset.
	BearerToken           hcl.Expression
	CAFile                hcl.Expression
	CertFile              hcl.Expression
	KeyFile               hcl.Expression
	InsecureSkipTLSVerify hcl.Expression
	DeclRange             hcl.Range
}

// Release is a `release "name" { ... }` block, before expansion by count or
// for_each. Attributes that were not set are nil.
type Release struct {
	Name string

	Count   hcl.Expression
	ForEach hcl.Expression

	ReleaseName     hcl.Expression // the `name` attribute
	Chart           hcl.Expression
	Version         hcl.Expression
	Namespace       hcl.Expression
	CreateNamespace hcl.Expression
	Values          hcl.Expression
	Set             hcl.Expression
	SetSensitive    hcl.Expression
	Wait            hcl.Expression
	WaitForJobs     hcl.Expression
	Timeout         hcl.Expression
	Atomic          hcl.Expression
	CleanupOnFail   hcl.Expression
	HistoryMax      hcl.Expression
	DisableHooks    hcl.Expression
	TakeOwnership   hcl.Expression
	ExpandClaims    hcl.Expression
	IgnoreChanges   hcl.Expression
	AdoptFromStack  hcl.Expression
	Adopt           hcl.Expression
	Labels          hcl.Expression
	Cluster         hcl.Expression
	Patches         hcl.Expression
	PostRenderer    hcl.Expression
	// Manifests replaces Chart: YAML files deployed as the release.
	Manifests hcl.Expression
	// CRDs is what apply does with the chart's crds/ (crds).
	CRDs hcl.Expression
	// HealthChecks are the release's health_check blocks, in the order
	// written: CEL source, the same in every instance.
	HealthChecks []*HealthCheck

	// DependsOn are the explicit depends_on entries, already resolved.
	DependsOn []DependsOnEntry

	// DeclRange covers the block header, `release "name"`.
	DeclRange hcl.Range
}

// Addr is the release's address, release.<name>.
func (r *Release) Addr() ReleaseAddr { return ReleaseAddr{Name: r.Name} }

// DependsOnEntry is one element of depends_on.
type DependsOnEntry struct {
	Release ReleaseAddr
	Range   hcl.Range
}

// instanceExprs lists the expressions evaluated per instance, for reference
// analysis.
func (r *Release) instanceExprs() []hcl.Expression {
	all := []hcl.Expression{
		r.ReleaseName, r.Chart, r.Version, r.Namespace, r.CreateNamespace,
		r.Values, r.Set, r.SetSensitive, r.Wait, r.WaitForJobs, r.Timeout,
		r.Atomic, r.CleanupOnFail, r.HistoryMax, r.DisableHooks,
		r.TakeOwnership, r.ExpandClaims, r.IgnoreChanges, r.AdoptFromStack, r.Adopt, r.Labels, r.Cluster,
		r.Patches, r.PostRenderer, r.Manifests, r.CRDs,
	}
	out := all[:0]
	for _, e := range all {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

// SortedReleaseNames returns the release block names in order.
func (c *Config) SortedReleaseNames() []string { return sortedKeys(c.Releases) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
