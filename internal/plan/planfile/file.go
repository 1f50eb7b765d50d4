// Package planfile saves a plan with everything apply needs, reads it
// back, and verifies that what the plan observed still holds (Verify,
// VerifyConfig), so that a stale plan is never applied.
package planfile

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/kube"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/convoy-sh/convoy/internal/safefile"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// fileKind marks a convoy plan file.
const fileKind = "convoy-plan"

// FileFormatVersion is the version of the plan file's layout, apart from
// the --json schema (plan.FormatVersion): it changes when a file written
// by one convoy cannot be applied by another.
const FileFormatVersion = 4

// planFile is the saved plan: JSON, mode 0600.
type planFile struct {
	Kind          string
	FormatVersion int
	// SensitiveValues says that the file holds sensitive values unmasked
	// (apply needs them): keep it as secret as the values themselves.
	SensitiveValues bool    `json:",omitempty"`
	Origin          *Origin `json:",omitempty"`
	Plan            *plan.Plan
}

// File is a saved plan and what it was made from.
type File struct {
	Plan *plan.Plan
	// Origin is nil in files saved without one (apply then needs the
	// stack's flags).
	Origin *Origin
}

// Origin is what a plan was made from, so that `convoy apply plan.cvp`
// works from any directory without repeating -C or --var: the stack
// directory and every variable value given. Values of sensitive variables
// are stored as given, like the sensitive values in the rendered output.
type Origin struct {
	// Dir is the absolute stack directory.
	Dir string
	// Variables are the variable values given, in order, with their source
	// and sensitivity (--var-file contents, CONVOY_VAR_*, --var, the
	// controller's); not the stack's *.auto.vars.hcl files, which apply
	// reads again (ConfigHash covers them).
	Variables config.RawValues `json:",omitempty"`
	// Clusters are the API servers the plan observed (kube.ClusterID), by
	// cluster block name ("" for the default cluster): apply refuses to
	// run the plan against other clusters.
	Clusters map[string]string `json:",omitempty"`
}

// Write saves the plan with everything apply needs (rendered output,
// values, requests, observations) to path, readable only by its owner
// (mode 0600): it holds values unmasked, sensitive ones included.
func Write(path string, p *plan.Plan) error { return Save(path, &File{Plan: p}) }

// Save is Write with the plan's origin.
func Save(path string, f *File) error {
	p := f.Plan
	sensitive := p.HasSensitive() || (f.Origin != nil && len(f.Origin.Variables) > 0)
	b, err := json.Marshal(planFile{Kind: fileKind, FormatVersion: FileFormatVersion, SensitiveValues: sensitive, Origin: f.Origin, Plan: p})
	if err != nil {
		return fmt.Errorf("encode plan: %w", err)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".convoy-plan-*")
	if err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write plan: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write plan: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	return nil
}

// Read reads the plan of a file saved by Write or Save. Numbers in values
// keep their exact form.
func Read(path string) (*plan.Plan, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	return f.Plan, nil
}

// Open reads a file saved by Write or Save, origin included.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	defer f.Close()
	return readPlan(f, path)
}

func readPlan(r io.Reader, name string) (*File, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var pf planFile
	if err := dec.Decode(&pf); err != nil {
		return nil, fmt.Errorf("%s is not a convoy plan file: %w", name, err)
	}
	if pf.Kind != fileKind || pf.Plan == nil {
		return nil, fmt.Errorf("%s is not a convoy plan file", name)
	}
	if pf.FormatVersion != FileFormatVersion || pf.Plan.FormatVersion != plan.FormatVersion {
		return nil, fmt.Errorf("%s is a plan file of format version %d; this convoy reads version %d: run convoy plan again", name, pf.FormatVersion, FileFormatVersion)
	}
	return &File{Plan: pf.Plan, Origin: pf.Origin}, nil
}

// ConfigHash identifies a stack configuration: its files (by name
// relative to the stack directory and content) and the variable values
// given (opts.Variables: the *.auto.vars.hcl files by name and content,
// --var-file contents, the CONVOY_VAR_*, --var and caller's values with
// their sensitivity). Files read by expressions (file("values.yaml")) are
// not included: a saved plan carries their effect in its rendered output.
// The chosen environment and its var_files (relative to the stack
// directory) are.
func ConfigHash(cfg *config.Config, opts config.EvalOptions, environment string, envFiles []string) (string, error) {
	h := sha256.New()
	write := func(parts ...string) {
		for _, p := range parts {
			fmt.Fprintf(h, "%d:%s", len(p), p)
		}
	}
	names := slices.Sorted(maps.Keys(cfg.Files))
	for _, name := range names {
		rel := name
		if r, err := filepath.Rel(cfg.Dir, name); err == nil && !strings.HasPrefix(r, "..") {
			rel = r
		}
		write("file", filepath.ToSlash(rel), string(cfg.Files[name].Bytes))
	}
	// The lock file pins the charts of repository releases: a plan made
	// before `convoy init --upgrade` is stale after it.
	switch lock, err := (safefile.Dir{Path: cfg.Dir, Desc: "the stack directory"}).Read(config.LockFileName, 16<<20); {
	case err == nil:
		write("lock", string(lock))
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("hash the configuration: %w", err)
	}
	write("environment", environment)
	for _, f := range envFiles {
		b, err := (safefile.Dir{Path: cfg.Dir, Desc: "the stack directory"}).Read(f, config.MaxFileSize)
		if err != nil {
			return "", fmt.Errorf("hash the configuration: %w", err)
		}
		write("environment-file", filepath.ToSlash(f), string(b))
	}
	// In order of precedence, as Evaluate applies them. The name of a
	// --var-file is not hashed: <(...) pipes are named anew on each run.
	vals := slices.Clone(opts.Variables)
	slices.SortStableFunc(vals, func(a, b config.RawValue) int { return cmp.Compare(a.Source, b.Source) })
	for _, v := range vals {
		switch {
		case v.Source == config.ValueFromAutoFile:
			write("auto-file", filepath.Base(v.Where), string(v.File))
		case v.IsFile():
			write("var-file", v.Source.String(), string(v.File))
		default:
			write("var", v.Source.String(), v.Name, v.Text)
		}
		if v.Sensitive {
			write("sensitive")
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// StaleError says why a saved plan may not be applied: what changed since
// it was computed.
type StaleError struct {
	Changes []string
}

func (e *StaleError) Error() string {
	return "the saved plan is stale, run convoy plan again:\n  - " + strings.Join(e.Changes, "\n  - ")
}

// VerifyEnvironment refuses a plan made for another environment of the
// stack.
func VerifyEnvironment(p *plan.Plan, environment string) error {
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

// Verify refuses a plan whose observations no longer hold: a release with a
// newer (or differently finished) revision, an affected object created,
// deleted or edited since. Status updates and fields apply does not set do
// not count: an object whose resourceVersion moved is compared on the fields
// the saved revision applies.
// It returns a *StaleError naming every change.
func Verify(ctx context.Context, p *plan.Plan, engineFor func(cluster string) (*release.Engine, error)) error {
	var stale []string
	histories := map[string]map[string][]*release.Release{}
	for _, r := range p.Releases {
		eng, err := engineFor(r.Cluster)
		if err != nil {
			return err
		}
		key := r.Cluster + "/" + r.Namespace
		hs, ok := histories[key]
		if !ok {
			if hs, err = eng.Histories(ctx, r.Namespace); err != nil {
				return fmt.Errorf("verify the plan: %w", err)
			}
			histories[key] = hs
		}
		if msg := revisionChange(r, hs[r.Name]); msg != "" {
			stale = append(stale, msg)
		}
		shapes := savedShapes(eng.Kube(), r)
		for _, ob := range r.Observed.Objects {
			msg, err := objectMoved(ctx, eng.Kube(), ob, shapes[ob.Ref])
			if err != nil {
				return fmt.Errorf("verify the plan: %w", err)
			}
			if msg != "" {
				stale = append(stale, msg)
			}
		}
	}
	if len(stale) > 0 {
		return &StaleError{Changes: stale}
	}
	return nil
}

func revisionChange(r *plan.ReleaseChange, hist []*release.Release) string {
	rev, status := 0, ""
	if len(hist) > 0 {
		last := hist[len(hist)-1]
		rev, status = last.Version, string(last.Info.Status)
	}
	if rev == r.Observed.LastRevision && status == r.Observed.LastStatus {
		return ""
	}
	what := fmt.Sprintf("release %s (namespace %s)", r.Name, r.Namespace)
	switch {
	case r.Observed.LastRevision == 0:
		return fmt.Sprintf("%s was installed since the plan (now revision %d, %s)", what, rev, status)
	case rev == 0:
		return fmt.Sprintf("%s was uninstalled since the plan (the plan saw revision %d, %s)", what, r.Observed.LastRevision, r.Observed.LastStatus)
	case rev != r.Observed.LastRevision:
		return fmt.Sprintf("%s has a new revision %d (%s) since the plan saw revision %d (%s)", what, rev, status, r.Observed.LastRevision, r.Observed.LastStatus)
	}
	return fmt.Sprintf("%s revision %d is now %s; the plan saw it %s", what, rev, status, r.Observed.LastStatus)
}

// savedShapes are the objects the saved rendering applies, by reference,
// with the ownership metadata apply adds and without the fields
// ignore_changes leaves to others (what shapeHash was computed against).
func savedShapes(kc *kube.Client, r *plan.ReleaseChange) map[kube.Ref]map[string]any {
	out := map[kube.Ref]map[string]any{}
	if r.Saved == nil || r.Saved.Rendered == nil {
		return out
	}
	for _, m := range r.Saved.Rendered.Manifests {
		objs, err := kc.Parse(m.Document(), r.Namespace)
		if err != nil {
			continue // kinds not served yet: compared by content
		}
		for _, o := range release.WithOwnership(objs, r.Name, r.Namespace) {
			out[kube.RefOf(o)] = r.Saved.Request.IgnoreChanges.Strip(o).Object
		}
	}
	return out
}

func objectMoved(ctx context.Context, kc *kube.Client, ob plan.ObservedObject, shape map[string]any) (string, error) {
	want := ob.ResourceVersion
	live, err := kc.Get(ctx, ob.Ref)
	switch {
	case apierrors.IsNotFound(err):
		if want == "" {
			return "", nil
		}
		return fmt.Sprintf("%s was deleted since the plan", ob.Ref), nil
	case err != nil:
		return "", err
	case want == "":
		return fmt.Sprintf("%s was created since the plan", ob.Ref), nil
	case live.GetResourceVersion() == want:
		return "", nil
	}
	if ob.Hash != "" {
		got := plan.ContentHash(live)
		if strings.HasPrefix(ob.Hash, plan.ShapePrefix) && shape != nil {
			got = plan.ShapeHash(live, shape)
		}
		if got == ob.Hash {
			return "", nil // nothing apply touches changed: status, bookkeeping, others' fields
		}
	}
	return fmt.Sprintf("%s was edited since the plan (resourceVersion %s, now %s)", ob.Ref, want, live.GetResourceVersion()), nil
}

// readPlanBytes is Read for tests.
func readPlanBytes(b []byte) (*plan.Plan, error) {
	f, err := readPlan(bytes.NewReader(b), "plan")
	if err != nil {
		return nil, err
	}
	return f.Plan, nil
}
