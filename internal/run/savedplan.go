package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planfile"
	"github.com/convoy-sh/convoy/internal/safefile"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// SavedPlan is a decoded plan file and the name it was read as (a path,
// or the controller's Secret), which messages use.
type SavedPlan struct {
	*planfile.File
	Name string
}

// EncodePlan returns the plan file of a computed plan: the plan, what it
// was made from (the stack directory, the variable values, the clusters'
// API servers) and a snapshot of the stack directory packed as convoy push
// packs it, so that it applies from anywhere, even once the directory is
// gone. A stack that cannot be packed (a chart named by an absolute path)
// is saved without its snapshot: applying it needs the directory.
func EncodePlan(pl *Planned) ([]byte, error) {
	return encodePlan(pl, nil)
}

// StackArtifact names the OCI artifact a stack directory was pulled from:
// its reference pinned to the digest (oci://REGISTRY/REPO@sha256:…), and
// the directory inside it.
type StackArtifact struct {
	Source, Digest, StackPath string
}

// EncodePlanOfArtifact is EncodePlan for a stack pulled from an OCI
// artifact (the controller's): the plan names the artifact by digest
// instead of embedding the snapshot, which the registry (or a cache of
// it) holds already. Applying it where the stack directory is gone needs
// the artifact pulled again, verified by digest.
func EncodePlanOfArtifact(pl *Planned, a StackArtifact) ([]byte, error) {
	if a.Source == "" || a.Digest == "" {
		return nil, errors.New("encode plan: the stack's artifact has no reference or digest")
	}
	return encodePlan(pl, &planfile.Snapshot{Source: a.Source, Digest: a.Digest, StackPath: a.StackPath})
}

func encodePlan(pl *Planned, byRef *planfile.Snapshot) ([]byte, error) {
	f, err := planFile(pl, byRef)
	if err != nil {
		return nil, err
	}
	return planfile.Encode(f)
}

// SavePlan writes pl to a plan file at path, as WritePlanFile writes
// EncodePlan's bytes, encoding it as it writes.
func SavePlan(path string, pl *Planned) error {
	f, err := planFile(pl, nil)
	if err != nil {
		return err
	}
	return writePlan(path, func(w io.Writer) error { return planfile.EncodeTo(w, f) })
}

// planFile is what a plan file of pl holds: the snapshot byRef names, or
// the stack directory's.
func planFile(pl *Planned, byRef *planfile.Snapshot) (*planfile.File, error) {
	origin, err := pl.Loaded.Origin()
	if err != nil {
		return nil, err
	}
	for _, c := range pl.clusters {
		for _, name := range c.Names {
			if origin.Clusters == nil {
				origin.Clusters = map[string]string{}
			}
			origin.Clusters[name] = string(c.ID)
		}
	}
	f := &planfile.File{Plan: pl.Plan, Origin: origin}
	if byRef != nil {
		f.Stack = byRef
		return f, nil
	}
	snap, err := artifact.Snap(origin.Dir)
	var de *artifact.DiagnosticsError
	switch {
	case err == nil:
		f.Stack = &planfile.Snapshot{Archive: snap.Archive, StackPath: snap.StackPath}
	case !errors.As(err, &de):
		return nil, fmt.Errorf("pack the stack into the plan: %w", err)
	}
	return f, nil
}

// DecodePlan reads a plan file's bytes; name is what they are called in
// messages.
func DecodePlan(b []byte, name string) (*SavedPlan, error) {
	f, err := planfile.Decode(b, name)
	if err != nil {
		return nil, err
	}
	return &SavedPlan{File: f, Name: name}, nil
}

// ReadPlanFile reads a plan file saved with WritePlanFile.
func ReadPlanFile(path string) (*SavedPlan, error) {
	fh, err := safefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	defer fh.Close()
	f, err := planfile.DecodeFrom(fh, path)
	if err != nil {
		return nil, err
	}
	return &SavedPlan{File: f, Name: path}, nil
}

// WritePlanFile writes a plan file readable only by its owner (mode 0600:
// it holds values unmasked, sensitive ones included), whole or not at all.
func WritePlanFile(path string, b []byte) error {
	return writePlan(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// writePlan writes a plan file as write makes it, mode 0600, whole or not
// at all.
func writePlan(path string, write func(io.Writer) error) error {
	if err := safefile.WriteAtomicWith(path, 0o600, write); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	return nil
}

// savedPlanSource is the source a saved plan is applied with: the one it
// was made from. What the command line gives as well must agree with it:
// -C names the same directory (Dir "" when not given), each --var and
// CONVOY_VAR_* value equals the plan's, --var-file files have the plan's
// contents. A plan saved without its origin takes the command line's.
//
// When the stack directory is gone, the plan's snapshot of it is unpacked
// into a temporary directory that cleanup removes.
func savedPlanSource(given Source, f *SavedPlan) (src Source, cleanup func(), err error) {
	cleanup = func() {}
	o := f.Origin
	if o == nil {
		given.Dir = cmp.Or(given.Dir, ".")
		return given, cleanup, nil
	}
	path := f.Name
	differs := func(what string) error {
		return fmt.Errorf("%s differs from what the plan in %s was made with; run convoy plan again, or apply the plan without it", what, path)
	}
	if given.Dir != "" {
		dir, err := filepath.Abs(given.Dir)
		if err != nil {
			return Source{}, cleanup, err
		}
		if !sameDir(dir, o.Dir) {
			return Source{}, cleanup, fmt.Errorf("the plan in %s was made for the stack in %s, not %s", path, o.Dir, dir)
		}
	}
	if what := variablesDiffer(given.Variables, o.Variables); what != "" {
		return Source{}, cleanup, differs(what)
	}
	// The plan's environment, which --env or CONVOY_ENV may only repeat.
	if given.Environment != "" {
		if err := verifyEnvironment(f.Plan, given.Environment); err != nil {
			return Source{}, cleanup, fmt.Errorf("the plan in %s: %w", path, err)
		}
	}
	src = Source{Dir: o.Dir, Environment: f.Plan.Environment, Variables: o.Variables, Root: given.Root}
	_, statErr := os.Stat(o.Dir)
	if errors.Is(statErr, fs.ErrNotExist) && f.Stack.ByReference() {
		return Source{}, cleanup, &SnapshotMissingError{Plan: path, Dir: o.Dir, Source: f.Stack.Source, Digest: f.Stack.Digest}
	}
	if errors.Is(statErr, fs.ErrNotExist) && f.Stack != nil {
		tmp, err := os.MkdirTemp("", "convoy-plan-stack-")
		if err != nil {
			return Source{}, cleanup, err
		}
		dir, err := artifact.Extract(tmp, &artifact.Snapshot{Archive: f.Stack.Archive, StackPath: f.Stack.StackPath})
		if err != nil {
			os.RemoveAll(tmp)
			return Source{}, cleanup, fmt.Errorf("the plan in %s: %w", path, err)
		}
		src.Dir = dir
		if src.Root != "" {
			src.Root = tmp // the snapshot is the artifact now
		}
		cleanup = func() { os.RemoveAll(tmp) }
	}
	return src, cleanup, nil
}

// sameDir reports whether two absolute paths name one directory, through
// symbolic links.
func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	ra, erra := filepath.EvalSymlinks(a)
	rb, errb := filepath.EvalSymlinks(b)
	return erra == nil && errb == nil && ra == rb
}

// verifyClusters refuses a saved plan when a cluster it observed is now
// reached at another API server (another --kubeconfig or --kube-context):
// the plan's observations say nothing about that cluster.
func verifyClusters(ctx context.Context, o *planfile.Origin, cl *Clusters, st *config.Stack, path string) error {
	if o == nil || len(o.Clusters) == 0 {
		return nil
	}
	clusters, err := cl.Stack(ctx, st)
	if err != nil {
		return err
	}
	for _, c := range clusters {
		for _, name := range c.Names {
			want, ok := o.Clusters[name]
			if ok && want != string(c.ID) {
				return fmt.Errorf("the plan in %s was made against %s at %s, but it is now reached at %s: give the --kubeconfig and --kube-context the plan was made with", path, c.Describe(), want, c.ID)
			}
		}
	}
	return nil
}

// verifyEnvironment refuses a plan made for another environment of the
// stack.
func verifyEnvironment(p *plan.Plan, environment string) error {
	if p.Environment == environment {
		return nil
	}
	name := func(e string) string {
		if e == "" {
			return "no environment"
		}
		return fmt.Sprintf("environment %q", e)
	}
	return fmt.Errorf("the plan is for %s, not %s: apply it with --env %s, or plan again", name(p.Environment), name(environment), cmp.Or(p.Environment, `""`))
}

// VerifyConfig refuses a plan computed from another stack configuration
// (hash from ConfigHash).
func VerifyConfig(p *plan.Plan, hash string) error {
	if p.ConfigHash != hash {
		return &StaleError{Changes: []string{fmt.Sprintf("the stack configuration (files or variable values) changed since the plan was made (%s, now %s)", short(p.ConfigHash), short(hash))}}
	}
	return nil
}

func short(h string) string {
	if len(h) > 19 {
		return h[:19]
	}
	return h
}

// verifyOn is Session.Verify of a loaded stack on the clusters cl
// connects.
func verifyOn(ctx context.Context, o Options, ls *Loaded, cl *Clusters, saved *SavedPlan) error {
	if err := ls.keepMovedNames(ctx, cl); err != nil {
		return err
	}
	_, err := verifySaved(ctx, o, ls, cl, saved, nil)
	// What policies deny is the plan's own result, not an observation
	// that moved: the plan still holds (apply refuses it regardless).
	var denied *plan.PolicyError
	if errors.As(err, &denied) {
		return nil
	}
	return err
}

// variablesDiffer names the first value given that disagrees with the
// values a plan was saved with ("" when none does): a --var (or caller's
// value) that is not the plan's last value of the variable, --var-files of
// other contents, a CONVOY_VAR_* the plan was not made with.
func variablesDiffer(given, saved config.RawValues) string {
	last := func(vals config.RawValues, src config.ValueSource) map[string]config.RawValue {
		out := map[string]config.RawValue{}
		for _, v := range vals {
			if v.Source == src && !v.IsFile() {
				out[v.Name] = v
			}
		}
		return out
	}
	for _, src := range []config.ValueSource{config.ValueFromCLIArg, config.ValueFromCaller} {
		g, s := last(given, src), last(saved, src)
		for _, name := range slices.Sorted(maps.Keys(g)) {
			if v, ok := s[name]; !ok || v.Text != g[name].Text {
				if src == config.ValueFromCLIArg {
					return "--var " + name
				}
				return fmt.Sprintf("%s (var.%s)", g[name].Where, name)
			}
		}
	}
	files := func(vals config.RawValues) []string {
		var out []string
		for _, v := range vals {
			if v.Source == config.ValueFromNamedFile {
				out = append(out, string(v.File))
			}
		}
		return out
	}
	if gf := files(given); len(gf) > 0 && !slices.Equal(gf, files(saved)) {
		return "--var-file"
	}
	var env []config.RawValue
	for _, v := range given {
		if v.Source == config.ValueFromEnvVar {
			env = append(env, v)
		}
	}
	slices.SortStableFunc(env, func(a, b config.RawValue) int { return cmp.Compare(a.Where+"="+a.Text, b.Where+"="+b.Text) })
	for _, v := range env {
		if !slices.ContainsFunc(saved, func(s config.RawValue) bool {
			return s.Source == v.Source && s.Name == v.Name && s.Text == v.Text
		}) {
			return "the environment variable " + v.Where
		}
	}
	return ""
}

// SnapshotMissingError: a saved plan names its stack by an artifact's
// digest, and the stack directory it was made from is gone.
type SnapshotMissingError struct {
	Plan, Dir      string
	Source, Digest string
}

func (e *SnapshotMissingError) Error() string {
	return fmt.Sprintf("the plan in %s names its stack by digest (%s) and the stack directory %s is gone: pull the artifact again (convoy controller does) or plan again", e.Plan, e.Source, e.Dir)
}
