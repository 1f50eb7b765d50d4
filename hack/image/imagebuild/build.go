package imagebuild

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Package is the Go package of the convoy binary.
const Package = "github.com/convoy-sh/convoy/cmd/convoy"

// VersionLDFlags are the linker flags that set the version and commit
// `convoy version` prints (the Makefile's LDFLAGS).
func VersionLDFlags(version, commit string) string {
	return fmt.Sprintf("-X github.com/convoy-sh/convoy/internal/version.version=%s -X github.com/convoy-sh/convoy/internal/version.commit=%s", version, commit)
}

// Compile builds a static convoy binary for a platform into out: no cgo,
// paths trimmed, no VCS stamp (the commit comes from ldflags), so that a
// commit's binary does not depend on where it was built.
func Compile(ctx context.Context, moduleDir, ldflags string, p v1.Platform, out string, log io.Writer) error {
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, Package}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	if p.Architecture == "arm" && p.Variant != "" {
		cmd.Env = append(cmd.Env, "GOARM="+p.Variant[1:])
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s: %w", p, err)
	}
	return nil
}

// isLoopback reports whether a registry host is this machine: it is
// spoken to over plain HTTP, as convoy's chart and stack sources do
// (internal/chart/source).
func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ParseReference parses REGISTRY/REPO:TAG, marking loopback registries
// as plain HTTP ones.
func ParseReference(s string) (name.Reference, error) {
	ref, err := name.ParseReference(s, name.StrictValidation)
	if err != nil {
		return nil, fmt.Errorf("image %q: %w", s, err)
	}
	if isLoopback(ref.Context().RegistryStr()) {
		return name.ParseReference(s, name.StrictValidation, name.Insecure)
	}
	return ref, nil
}

// Push pushes the index and its images to ref, with the credentials of
// Docker's config (~/.docker/config.json, $DOCKER_CONFIG), and returns
// the index's digest.
func Push(ctx context.Context, ref name.Reference, idx v1.ImageIndex) (v1.Hash, error) {
	if err := remote.WriteIndex(ref, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain), remote.WithUserAgent("convoy-hack-image")); err != nil {
		return v1.Hash{}, fmt.Errorf("push %s: %w", ref, err)
	}
	return idx.Digest()
}

// Options are one build: the binaries of Platforms, assembled and pushed
// to Image.
type Options struct {
	// Image is REGISTRY/REPO:TAG.
	Image     string
	Platforms []v1.Platform
	// ModuleDir is the convoy module's root ("": the working directory).
	ModuleDir string
	// LDFlags are the linker flags (VersionLDFlags and -s -w in the
	// Makefile).
	LDFlags string
	// CABundle is the PEM file of CA certificates the image carries.
	CABundle string
	Meta     Metadata
	// WorkDir receives the binaries ("": a temporary directory, removed).
	WorkDir string
	Log     io.Writer
}

// Result is what Build pushed.
type Result struct {
	Ref    name.Reference
	Digest v1.Hash
	// Compile is how long the go builds took, all platforms.
	Compile time.Duration
}

// Build compiles, assembles and pushes.
func Build(ctx context.Context, o Options) (Result, error) {
	ref, err := ParseReference(o.Image)
	if err != nil {
		return Result{}, err
	}
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	work := o.WorkDir
	if work == "" {
		work, err = os.MkdirTemp("", "convoy-image-")
		if err != nil {
			return Result{}, err
		}
		defer os.RemoveAll(work)
	}
	start := time.Now()
	var bins []Binary
	for _, p := range o.Platforms {
		out := filepath.Join(work, fmt.Sprintf("convoy-%s-%s%s", p.OS, p.Architecture, p.Variant))
		t0 := time.Now()
		if err := Compile(ctx, o.ModuleDir, o.LDFlags, p, out, log); err != nil {
			return Result{}, err
		}
		fmt.Fprintf(log, "built %s in %s\n", p, time.Since(t0).Round(time.Second))
		bins = append(bins, Binary{Platform: p, Path: out})
	}
	compile := time.Since(start)
	idx, err := Assemble(bins, o.CABundle, o.Meta)
	if err != nil {
		return Result{}, err
	}
	d, err := Push(ctx, ref, idx)
	if err != nil {
		return Result{}, err
	}
	return Result{Ref: ref, Digest: d, Compile: compile}, nil
}
