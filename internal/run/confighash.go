package run

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/safefile"
)

// ConfigHash identifies a stack configuration: its files (by name
// relative to the stack directory and content), the content of the
// --var-file files, the --var values and the CONVOY_VAR_* environment. Files
// read by expressions (file("values.yaml")) are not included: a saved plan
// carries their effect in its rendered output. The chosen environment and
// its var_files (relative to the stack directory) are.
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
	for _, vf := range opts.VarFiles {
		b, err := os.ReadFile(vf)
		if err != nil {
			return "", fmt.Errorf("hash the configuration: %w", err)
		}
		write("var-file", string(b))
	}
	for _, vf := range opts.VarFileSources {
		write("var-file", string(vf.Src))
	}
	for _, k := range slices.Sorted(maps.Keys(opts.Vars)) {
		write("var", k, opts.Vars[k])
	}
	var env []string
	for _, kv := range opts.Env {
		if strings.HasPrefix(kv, config.EnvVarPrefix) {
			env = append(env, kv)
		}
	}
	slices.Sort(env)
	for _, kv := range env {
		write("env", kv)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
