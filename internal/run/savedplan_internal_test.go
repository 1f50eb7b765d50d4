package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planfile"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// stackDir writes a minimal stack directory.
func stackDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte("variable \"message\" {\n  type = string\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func savedFrom(dir string, snap *planfile.Snapshot) *SavedPlan {
	return &SavedPlan{Name: "p.cvp", File: &planfile.File{
		Plan: &plan.Plan{Stack: "shop", Environment: "staging"},
		Origin: &planfile.Origin{Dir: dir, Variables: config.RawValues{
			config.VariablesFile(config.ValueFromNamedFile, "a.vars.hcl", []byte("x = 1\n")),
			config.VariableValue(config.ValueFromEnvVar, "CONVOY_VAR_region", "region", "eu"),
			config.VariableValue(config.ValueFromCLIArg, "--var", "message", "hi"),
		}},
		Stack: snap,
	}}
}

func TestSavedPlanSourceAgreesWithTheCommandLine(t *testing.T) {
	dir := stackDir(t)
	cli := func(name, text string) config.RawValue {
		return config.VariableValue(config.ValueFromCLIArg, "--var", name, text)
	}
	file := func(content string) config.RawValue {
		return config.VariablesFile(config.ValueFromNamedFile, "/dev/fd/63", []byte(content))
	}
	env := func(name, text string) config.RawValue {
		return config.VariableValue(config.ValueFromEnvVar, "CONVOY_VAR_"+name, name, text)
	}
	for _, tc := range []struct {
		name  string
		given Source
		want  string // "" when accepted
	}{
		{"nothing given", Source{}, ""},
		{"the same values repeated", Source{Dir: dir, Variables: config.RawValues{cli("message", "hi"), env("region", "eu")}, Environment: "staging"}, ""},
		{"another --var", Source{Variables: config.RawValues{cli("message", "bye")}}, "--var message differs from what the plan in p.cvp was made with"},
		{"an extra --var", Source{Variables: config.RawValues{cli("other", "1")}}, "--var other differs"},
		{"another --var-file", Source{Variables: config.RawValues{file("x = 2\n")}}, "--var-file differs"},
		{"the same --var-file", Source{Variables: config.RawValues{file("x = 1\n")}}, ""},
		{"another CONVOY_VAR_", Source{Variables: config.RawValues{env("region", "us")}}, "the environment variable CONVOY_VAR_region differs"},
		{"another -C", Source{Dir: t.TempDir()}, "the plan in p.cvp was made for the stack in " + dir},
		{"another --env", Source{Environment: "production"}, `the plan is for environment "staging", not environment "production"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, cleanup, err := savedPlanSource(tc.given, savedFrom(dir, nil))
			defer cleanup()
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("got %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if src.Dir != dir || len(src.Variables) != 3 || src.Environment != "staging" {
				t.Fatalf("the plan's source was not used: %+v", src)
			}
		})
	}
}

// A plan whose stack directory is gone applies from its snapshot, unpacked
// into a temporary directory that cleanup removes.
func TestSavedPlanSourceUnpacksTheSnapshot(t *testing.T) {
	dir := stackDir(t)
	snap, err := artifact.Snap(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Dir(dir)); err != nil {
		t.Fatal(err)
	}
	src, cleanup, err := savedPlanSource(Source{}, savedFrom(dir, &planfile.Snapshot{Archive: snap.Archive, StackPath: snap.StackPath}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(src.Dir, "stack.hcl"))
	if err != nil || !strings.Contains(string(b), `variable "message"`) {
		t.Fatalf("the snapshot's stack.hcl: %q %v", b, err)
	}
	cleanup()
	if _, err := os.Stat(src.Dir); !os.IsNotExist(err) {
		t.Fatalf("cleanup left %s: %v", src.Dir, err)
	}

	// Without a snapshot the plan points at the directory, which loading
	// then reports missing.
	src, cleanup, err = savedPlanSource(Source{}, savedFrom(dir, nil))
	defer cleanup()
	if err != nil || src.Dir != dir {
		t.Fatalf("got %q, %v", src.Dir, err)
	}
}

// A plan that names its stack by an artifact's digest is applied from the
// directory it was made from while it exists; once it is gone, the error
// names the artifact to pull again.
func TestSavedPlanSourceOfAnArtifact(t *testing.T) {
	dir := stackDir(t)
	snap := &planfile.Snapshot{Source: "oci://registry.example/stacks/shop@sha256:aa", Digest: "sha256:aa", StackPath: "."}
	src, cleanup, err := savedPlanSource(Source{}, savedFrom(dir, snap))
	cleanup()
	if err != nil || src.Dir != dir {
		t.Fatalf("got %q, %v", src.Dir, err)
	}
	if err := os.RemoveAll(filepath.Dir(dir)); err != nil {
		t.Fatal(err)
	}
	_, cleanup, err = savedPlanSource(Source{}, savedFrom(dir, snap))
	cleanup()
	var me *SnapshotMissingError
	if !errors.As(err, &me) || me.Digest != "sha256:aa" || !strings.Contains(err.Error(), snap.Source) {
		t.Fatalf("got %v, want the artifact named", err)
	}
}
