package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/convoy-sh/convoy/internal/memo"

	"github.com/convoy-sh/convoy/internal/cluster/apimap"
	"github.com/convoy-sh/convoy/internal/safefile"
	"github.com/convoy-sh/convoy/internal/stack/dag"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// EvalOptions are the inputs of an evaluation besides the configuration.
// Evaluate reads neither the process environment nor files named outside
// the stack: the caller collects the variable values (RawValues).
type EvalOptions struct {
	// Variables are the variable values given: *.auto.vars.hcl files
	// (ReadAutoVarFiles), --var-file files, CONVOY_VAR_* and --var values,
	// the controller's. They apply by the precedence of their sources (see
	// ValueSource) and in order within a source.
	Variables RawValues
	// Environment names the environment block to use ("": the one named
	// "default", if the stack declares environments).
	Environment string
	// KeptNames are the Helm release names instances keep from the
	// address they had before count was added to their block or removed
	// from it (Stack.ImplicitMoves): the caller finds them in the stack's
	// release records. Only instances whose block sets no name take them.
	KeptNames map[ReleaseInstanceAddr]string
	// Root, when set, confines every path the stack names to this
	// directory (the controller's pulled artifact, which holds the stack
	// directory): file functions refuse absolute and ~/ paths, local
	// charts and repository files must lie inside Root (symlinks
	// followed), and post_renderer is refused (confine.go). "": the
	// CLI's rules.
	Root string
}

// evaluator holds everything evaluated before releases. After Evaluate it
// is never modified, so EvaluateRelease may be called concurrently.
type evaluator struct {
	cfg   *Config
	funcs map[string]function.Function
	// root confines paths (EvalOptions.Root; "": not confined).
	root string

	vars   map[string]cty.Value
	locals map[string]cty.Value
	// varOrigins say where each variable's value was given
	// (Stack.VariableOrigin).
	varOrigins map[string]VariableOrigin

	// envName is the chosen environment ("" when the stack declares
	// none); envFiles are its var_files, relative to the stack directory.
	envName  string
	envFiles []string
	// envFailed: no environment could be chosen; nothing that may refer to
	// environment.name is evaluated.
	envFailed bool

	stackName        string
	keptNames        map[ReleaseInstanceAddr]string
	defaultNamespace string
	atomic           bool
	apiMap           *apimap.Map
	kubeVersion      apimap.Version
	storage          *Storage

	clusters     map[string]*ClusterSpec
	clusterVals  map[string]cty.Value
	repositories map[string]*RepositorySpec

	// Per release block: its instance keys and each.value per key, its
	// checked references, and the release-level dependency graph.
	expansions map[string][]instanceKeyValue
	refs       map[string][]*Reference
	// badExprs are expressions with invalid references: reported once, then
	// never evaluated (which would only repeat the error).
	badExprs map[hcl.Expression]bool
	releases *dag.Graph[ReleaseAddr]
	// needs is what each release block reads of the resources of the
	// releases it refers to (ResourceNeeds).
	needs map[string]map[string]ResourceNeeds

	// static holds the attributes known before apply of every instance
	// evaluated so far (name, namespace, chart, version).
	static map[ReleaseInstanceAddr]staticAttrs
	// releaseValues are the release blocks' values before apply, each
	// built once (releaseValue); EvaluateRelease reads them concurrently.
	releaseValues memo.Map[string, releaseBase]
	// blockDeps are the release blocks each block references, from
	// releases, once per block.
	blockDeps memo.Map[string, []ReleaseAddr]
	// blockScopes are the scopes the instances of each block share before
	// apply (blockScope).
	blockScopes memo.Map[string, map[string]cty.Value]
}

type instanceKeyValue struct {
	key   InstanceKey
	value cty.Value // each.value; cty.NilVal for count and single instances
}

type staticAttrs struct {
	name, namespace, chart, version string
	ok                              bool // false when evaluating them failed
}

// Evaluate evaluates a loaded stack. It reports all errors at once; the
// returned Stack is nil when there are errors.
func Evaluate(ctx context.Context, cfg *Config, opts EvalOptions) (*Stack, hcl.Diagnostics) {
	evaluations.Add(1)
	e := &evaluator{
		cfg:          cfg,
		funcs:        functions(cfg.Dir, opts.Root),
		root:         opts.Root,
		vars:         map[string]cty.Value{},
		locals:       map[string]cty.Value{},
		varOrigins:   map[string]VariableOrigin{},
		clusters:     map[string]*ClusterSpec{},
		clusterVals:  map[string]cty.Value{},
		repositories: map[string]*RepositorySpec{},
		expansions:   map[string][]instanceKeyValue{},
		refs:         map[string][]*Reference{},
		badExprs:     map[hcl.Expression]bool{},
		static:       map[ReleaseInstanceAddr]staticAttrs{},
	}
	e.keptNames = opts.KeptNames
	diags := e.evalVariables(opts)
	if e.envFailed {
		return nil, diags
	}
	diags = append(diags, e.evalLocals()...)
	diags = append(diags, e.evalStackBlock()...)
	diags = append(diags, e.evalClusters()...)
	diags = append(diags, e.evalRepositories()...)
	if err := ctx.Err(); err != nil {
		return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Evaluation canceled", Detail: err.Error()})
	}

	order, d := e.releaseOrder()
	diags = append(diags, d...)
	if d.HasErrors() {
		return nil, diags
	}
	stack := &Stack{
		Name:             e.stackName,
		Environment:      e.envName,
		EnvironmentFiles: e.envFiles,
		Dir:              cfg.Dir,
		DefaultNamespace: e.defaultNamespace,
		Atomic:           e.atomic,
		APIMap:           e.apiMap,
		KubeVersion:      e.kubeVersion,
		Storage:          e.storage,
		Clusters:         e.clusters,
		Repositories:     e.repositories,
		ev:               e,
	}
	for _, name := range order {
		if err := ctx.Err(); err != nil {
			return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Evaluation canceled", Detail: err.Error()})
		}
		rel := e.cfg.Releases[name]
		diags = append(diags, e.expand(rel)...)
		diags = append(diags, e.evalBlock(rel, stack)...)
	}
	sortInstances(stack.Releases)
	diags = append(diags, checkUniqueNames(stack.Releases)...)
	diags = append(diags, stack.checkMoveBlocks(cfg)...)
	if diags.HasErrors() {
		return nil, diags
	}
	return stack, diags
}

// evalBlock evaluates the instances of a release block, on every core
// (they never refer to each other; the blocks they refer to are
// evaluated), and records what dependents may refer to of them. Their
// order and their diagnostics' are the instances'.
func (e *evaluator) evalBlock(rel *Release, stack *Stack) hcl.Diagnostics {
	kvs := e.expansions[rel.Name]
	type result struct {
		ri     *ReleaseInstance
		static staticAttrs
		diags  hcl.Diagnostics
	}
	results := make([]result, len(kvs))
	eval := func(i int) {
		r := &results[i]
		r.ri, r.diags = e.evalInstance(rel, kvs[i], nil, &r.static)
	}
	if workers := min(runtime.GOMAXPROCS(0), len(kvs)/evalChunk); workers > 1 {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					end := int(next.Add(evalChunk))
					for i := end - evalChunk; i < min(end, len(kvs)); i++ {
						eval(i)
					}
					if end >= len(kvs) {
						return
					}
				}
			})
		}
		wg.Wait()
	} else {
		for i := range kvs {
			eval(i)
		}
	}
	var diags hcl.Diagnostics
	for i, r := range results {
		diags = append(diags, r.diags...)
		e.static[rel.Addr().Instance(kvs[i].key)] = r.static
		if r.ri != nil {
			stack.Releases = append(stack.Releases, r.ri)
		}
	}
	return diags
}

// evalChunk is how many instances of a block an evaluating goroutine
// takes at once; blocks of fewer than two chunks are evaluated in turn.
const evalChunk = 64

// EvaluateRelease re-evaluates one release instance with the attributes its
// dependencies got when they were applied (revision, status, resources).
// Attributes of dependencies missing from applied stay unknown.
func (s *Stack) EvaluateRelease(addr ReleaseInstanceAddr, applied map[ReleaseInstanceAddr]AppliedRelease) (*ReleaseInstance, hcl.Diagnostics) {
	e := s.ev
	rel, ok := e.cfg.Releases[addr.Release.Name]
	if !ok {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unknown release", Detail: fmt.Sprintf("The stack has no %s.", addr)}}
	}
	for _, kv := range e.expansions[rel.Name] {
		if kv.key == addr.Key {
			return e.evalInstance(rel, kv, applied, nil)
		}
	}
	return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unknown release instance", Detail: fmt.Sprintf("The stack has no %s.", addr)}}
}

// scopeVariables builds the var and local objects for an expression with
// the given references. Only the referenced names are included: an
// expression can reach values only through its traversals, and building the
// full objects for every expression would cost quadratic time in large
// stacks.
func (e *evaluator) scopeVariables(refs []*Reference) map[string]cty.Value {
	vars, locals := map[string]cty.Value{}, map[string]cty.Value{}
	for _, ref := range refs {
		switch ref.Kind {
		case RefVar:
			vars[ref.Name] = e.vars[ref.Name]
		case RefLocal:
			locals[ref.Name] = e.locals[ref.Name]
		}
	}
	return map[string]cty.Value{
		"var":         objectOrEmpty(vars),
		"local":       objectOrEmpty(locals),
		"environment": e.environmentVal(),
	}
}

func objectOrEmpty(m map[string]cty.Value) cty.Value {
	if len(m) == 0 {
		return cty.EmptyObjectVal
	}
	return cty.ObjectVal(m)
}

// evalSimple evaluates an expression whose references are limited to var and
// local, after checking them. A nil expression gives a null value.
func (e *evaluator) evalSimple(expr hcl.Expression, what string) (cty.Value, hcl.Diagnostics) {
	if expr == nil {
		return cty.NullVal(cty.DynamicPseudoType), nil
	}
	refs, diags := e.cfg.references(expr, scope{what: what})
	if diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	val, d := expr.Value(&hcl.EvalContext{Variables: e.scopeVariables(refs), Functions: e.funcs})
	return val, append(diags, nameKeys(d)...)
}

// evalLocals evaluates locals in dependency order, reporting cycles.
func (e *evaluator) evalLocals() hcl.Diagnostics {
	var diags hcl.Diagnostics
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(name string) bool
	visit = func(name string) bool {
		switch state[name] {
		case done:
			return true
		case visiting:
			return false
		}
		state[name] = visiting
		path = append(path, name)
		defer func() { path = path[:len(path)-1] }()
		l := e.cfg.Locals[name]
		refs, d := e.cfg.references(l.Expr, scope{what: "a local value"})
		diags = append(diags, d...)
		if d.HasErrors() {
			e.locals[name] = cty.DynamicVal
			state[name] = done
			return true
		}
		for _, ref := range refs {
			if ref.Kind != RefLocal {
				continue
			}
			if state[ref.Name] == visiting {
				cycle := []string{}
				for i, n := range path {
					if n == ref.Name {
						cycle = append(cycle, path[i:]...)
						break
					}
				}
				cycle = append(cycle, ref.Name)
				for i := range cycle {
					cycle[i] = "local." + cycle[i]
				}
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Cycle in local values",
					Detail:   fmt.Sprintf("%s: a local value cannot depend on itself.", strings.Join(cycle, " → ")),
					Subject:  ref.Range.Ptr(),
				})
				e.locals[name] = cty.DynamicVal
				state[name] = done
				return false
			}
			if !visit(ref.Name) {
				e.locals[name] = cty.DynamicVal
				state[name] = done
				return false
			}
		}
		val, d := l.Expr.Value(&hcl.EvalContext{Variables: e.scopeVariables(refs), Functions: e.funcs})
		diags = append(diags, nameKeys(d)...)
		if d.HasErrors() {
			val = cty.DynamicVal
		}
		e.locals[name] = val
		state[name] = done
		return true
	}
	for _, name := range sortedKeys(e.cfg.Locals) {
		visit(name)
	}
	return diags
}

func (e *evaluator) evalStackBlock() hcl.Diagnostics {
	var diags hcl.Diagnostics
	e.defaultNamespace = DefaultNamespace
	sb := e.cfg.Stack
	e.stackName, diags = e.stackIdentity()
	if sb == nil {
		return diags
	}
	if sb.DefaultNamespace != nil {
		val, d := e.evalSimple(sb.DefaultNamespace, "the stack block")
		s, d2 := asString(val, sb.DefaultNamespace, "default_namespace")
		diags = append(diags, d...)
		if !d.HasErrors() {
			diags = append(diags, d2...)
			if s != "" {
				diags = append(diags, checkDNSLabel(s, "default_namespace", sb.DefaultNamespace)...)
				e.defaultNamespace = s
			}
		}
	}
	if sb.Atomic != nil {
		val, d := e.evalSimple(sb.Atomic, "the stack block")
		diags = append(diags, d...)
		if !d.HasErrors() {
			b, d := asBool(val, sb.Atomic, "atomic")
			diags = append(diags, d...)
			e.atomic = b
		}
	}
	diags = append(diags, e.evalAPISettings(sb)...)
	diags = append(diags, e.evalStorage(sb.Storage)...)
	return diags
}

func (e *evaluator) evalClusters() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range sortedKeys(e.cfg.Clusters) {
		c := e.cfg.Clusters[name]
		spec := &ClusterSpec{Name: name, DeclRange: c.DeclRange}
		// eval evaluates an attribute of the block that is set.
		eval := func(expr hcl.Expression) (cty.Value, bool) {
			if expr == nil {
				return cty.NilVal, false
			}
			val, d := e.evalSimple(expr, "a cluster block")
			diags = append(diags, d...)
			return val, !d.HasErrors()
		}
		for _, f := range []struct {
			expr hcl.Expression
			attr string
			dst  *string
		}{{c.Kubeconfig, "kubeconfig", &spec.Kubeconfig}, {c.Context, "context", &spec.Context}} {
			if val, ok := eval(f.expr); ok {
				s, d := asString(val, f.expr, f.attr)
				diags = append(diags, d...)
				*f.dst = s
			}
		}
		for _, f := range []struct {
			expr hcl.Expression
			attr string
			dst  *int
		}{{c.QPS, "qps", &spec.QPS}, {c.Burst, "burst", &spec.Burst}} {
			val, ok := eval(f.expr)
			if !ok {
				continue
			}
			n, d := asInt(val, f.expr, f.attr)
			diags = append(diags, d...)
			if !d.HasErrors() && n < 1 {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid " + f.attr,
					Detail: fmt.Sprintf("%s must be at least 1, not %d.", f.attr, n), Subject: f.expr.Range().Ptr()})
				continue
			}
			*f.dst = n
		}
		e.clusters[name] = spec
		e.clusterVals[name] = cty.ObjectVal(map[string]cty.Value{
			"name":       cty.StringVal(name),
			"kubeconfig": cty.StringVal(spec.Kubeconfig),
			"context":    cty.StringVal(spec.Context),
		})
	}
	return diags
}

func (e *evaluator) evalRepositories() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range sortedKeys(e.cfg.Repositories) {
		r := e.cfg.Repositories[name]
		spec := &RepositorySpec{Name: name, DeclRange: r.DeclRange, Password: cty.NullVal(cty.String), BearerToken: cty.NullVal(cty.String)}
		if r.URL != nil {
			val, d := e.evalSimple(r.URL, "a repository block")
			diags = append(diags, d...)
			if !d.HasErrors() {
				s, d := asString(val, r.URL, "url")
				diags = append(diags, d...)
				spec.URL = s
				spec.OCI = strings.HasPrefix(s, "oci://")
				if !d.HasErrors() && !spec.OCI && !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "http://") {
					diags = append(diags, &hcl.Diagnostic{
						Severity: hcl.DiagError,
						Summary:  "Invalid repository URL",
						Detail:   "A chart repository URL starts with https://, http:// or oci://.",
						Subject:  r.URL.Range().Ptr(),
					})
				}
			}
		}
		if r.Username != nil {
			val, d := e.evalSimple(r.Username, "a repository block")
			diags = append(diags, d...)
			if !d.HasErrors() {
				s, d := asString(val, r.Username, "username")
				diags = append(diags, d...)
				spec.Username = s
			}
		}
		if r.Password != nil {
			val, d := e.evalSimple(r.Password, "a repository block")
			diags = append(diags, d...)
			if !d.HasErrors() {
				pw, d := convertAttr(val, cty.String, r.Password, "password")
				diags = append(diags, d...)
				if !d.HasErrors() {
					spec.Password = pw.Mark(Sensitive)
				}
			}
		}
		diags = append(diags, e.evalRepositoryTLS(r, spec)...)
		e.repositories[name] = spec
	}
	return diags
}

// evalRepositoryTLS evaluates bearer_token and the TLS attributes of a
// repository block. File paths are relative to the stack directory.
func (e *evaluator) evalRepositoryTLS(r *Repository, spec *RepositorySpec) hcl.Diagnostics {
	var diags hcl.Diagnostics
	if r.BearerToken != nil {
		val, d := e.evalSimple(r.BearerToken, "a repository block")
		diags = append(diags, d...)
		if !d.HasErrors() {
			tok, d := convertAttr(val, cty.String, r.BearerToken, "bearer_token")
			diags = append(diags, d...)
			if !d.HasErrors() {
				spec.BearerToken = tok.Mark(Sensitive)
			}
		}
		if r.Username != nil || r.Password != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Conflicting repository credentials",
				Detail:   "A repository authenticates with username and password or with bearer_token, not both.",
				Subject:  r.BearerToken.Range().Ptr(),
			})
		}
	}
	for _, f := range []struct {
		expr hcl.Expression
		attr string
		dst  *string
	}{{r.CAFile, "ca_file", &spec.CAFile}, {r.CertFile, "cert_file", &spec.CertFile}, {r.KeyFile, "key_file", &spec.KeyFile}} {
		if f.expr == nil {
			continue
		}
		val, d := e.evalSimple(f.expr, "a repository block")
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		p, d := asString(val, f.expr, f.attr)
		diags = append(diags, d...)
		if d.HasErrors() || p == "" {
			continue
		}
		if e.root != "" {
			if err := insideRoot(e.root, e.cfg.Dir, p); err != nil {
				diags = append(diags, confinedDiag(f.attr, f.expr, err))
				continue
			}
		}
		// The file is read when the repository is used; refuse now what
		// file() would refuse. A missing file is reported at use.
		st, err := stackDir(e.cfg.Dir).Stat(p)
		if err == nil && !st.Mode().IsRegular() {
			err = &safefile.Error{Name: p, Err: safefile.ErrNotRegular, Mode: st.Mode()}
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid " + f.attr,
				Detail:   fileArgError(err, nil, e.root != "").Error() + ".",
				Subject:  f.expr.Range().Ptr(),
			})
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(e.cfg.Dir, p)
		}
		*f.dst = filepath.Clean(p)
	}
	if (r.CertFile == nil) != (r.KeyFile == nil) {
		subject := r.DeclRange
		if r.CertFile != nil {
			subject = r.CertFile.Range()
		} else {
			subject = r.KeyFile.Range()
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Incomplete client certificate",
			Detail:   "A client certificate needs both cert_file and key_file.",
			Subject:  subject.Ptr(),
		})
	}
	if r.InsecureSkipTLSVerify != nil {
		val, d := e.evalSimple(r.InsecureSkipTLSVerify, "a repository block")
		diags = append(diags, d...)
		if !d.HasErrors() {
			b, d := asBool(val, r.InsecureSkipTLSVerify, "insecure_skip_tls_verify")
			diags = append(diags, d...)
			spec.InsecureSkipTLSVerify = b
		}
	}
	return diags
}

// releaseOrder checks the references of every release block, builds the
// release-level graph and returns the release names in dependency order.
func (e *evaluator) releaseOrder() ([]string, hcl.Diagnostics) {
	a := e.cfg.analyzeReleases()
	e.refs, e.badExprs, e.releases, e.needs = a.refs, a.badExprs, a.graph, a.needs
	order, d := a.graph.TopologicalOrder()
	diags := append(a.diags, d...)
	names := make([]string, len(order))
	for i, addr := range order {
		names[i] = addr.Name
	}
	return names, diags
}

// ReleaseGraph is the release-level dependency graph of the source
// configuration, built from references and depends_on without evaluating
// anything: one vertex per release block, whatever its count or for_each.
// The diagnostics include invalid references and cycles.
func (c *Config) ReleaseGraph() (*dag.Graph[ReleaseAddr], hcl.Diagnostics) {
	a := c.analyzeReleases()
	return a.graph, append(a.diags, a.graph.Validate()...)
}

type releaseAnalysis struct {
	graph    *dag.Graph[ReleaseAddr]
	refs     map[string][]*Reference
	badExprs map[hcl.Expression]bool
	// needs is what each release block reads of the resources of the
	// releases it refers to (by block name, then by dependency name).
	needs map[string]map[string]ResourceNeeds
	diags hcl.Diagnostics
}

// analyzeReleases checks the references of every release block and builds
// the release-level graph.
func (c *Config) analyzeReleases() releaseAnalysis {
	a := releaseAnalysis{
		graph:    dag.New[ReleaseAddr](),
		refs:     map[string][]*Reference{},
		badExprs: map[hcl.Expression]bool{},
		needs:    map[string]map[string]ResourceNeeds{},
	}
	expanded := func(name string) bool {
		r := c.Releases[name]
		return r != nil && (r.Count != nil || r.ForEach != nil)
	}
	for _, name := range sortedKeys(c.Releases) {
		rel := c.Releases[name]
		a.graph.Add(rel.Addr())
		for _, expr := range []hcl.Expression{rel.Count, rel.ForEach} {
			if _, d := c.references(expr, scope{what: "count or for_each"}); d.HasErrors() {
				a.diags = append(a.diags, d...)
				a.badExprs[expr] = true
			}
		}
		sc := scope{
			what:     "a release block",
			each:     rel.ForEach != nil,
			count:    rel.Count != nil,
			clusters: true,
			releases: true,
			self:     rel.Name,
		}
		for _, expr := range rel.instanceExprs() {
			refs, d := c.references(expr, sc)
			a.diags = append(a.diags, d...)
			if d.HasErrors() {
				a.badExprs[expr] = true
			}
			a.refs[name] = append(a.refs[name], refs...)
			reads := false
			for _, ref := range refs {
				if ref.Kind == RefRelease {
					a.graph.Connect(rel.Addr(), ReleaseAddr{Name: ref.Name}, ref.Range)
					reads = true
				}
			}
			if reads {
				if a.needs[name] == nil {
					a.needs[name] = map[string]ResourceNeeds{}
				}
				resourceNeeds(expr, expanded, a.needs[name])
			}
		}
		for _, dep := range rel.DependsOn {
			if _, ok := c.Releases[dep.Release.Name]; !ok {
				detail := fmt.Sprintf("There is no release named %q. Declare it with a release %q block.", dep.Release.Name, dep.Release.Name)
				if s := suggestName(dep.Release.Name, c.Releases); s != "" {
					detail = fmt.Sprintf("There is no release named %q. Did you mean release.%s?", dep.Release.Name, s)
				}
				a.diags = append(a.diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Reference to undeclared release",
					Detail:   detail,
					Subject:  dep.Range.Ptr(),
				})
				continue
			}
			if dep.Release.Name == rel.Name {
				a.diags = append(a.diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Self-referential release",
					Detail:   fmt.Sprintf("release.%s cannot depend on itself.", rel.Name),
					Subject:  dep.Range.Ptr(),
				})
				continue
			}
			a.graph.Connect(rel.Addr(), dep.Release, dep.Range)
		}
	}
	return a
}
