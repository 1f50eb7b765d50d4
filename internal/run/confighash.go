package run

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/safefile"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

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
