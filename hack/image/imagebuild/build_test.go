package imagebuild_test

import (
	"archive/tar"
	"context"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/hack/image/imagebuild"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// The image `make image` pushes, pulled back from a real registry: an
// index of linux/amd64 and linux/arm64, whose amd64 entrypoint, extracted
// from its layers and run, prints the version it was built with, and
// whose arm64 entrypoint is an arm64 executable.
//
// It cross-compiles convoy twice (the go build cache makes later runs
// fast; a cold arm64 build takes minutes on two cores).
func TestImagePushedAndRun(t *testing.T) {
	reg := sourcetest.StartRegistry(t, "", "") // skips under -short
	moduleDir, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	const version, commit = "v0.0.0-imagetest", "0123456789abcdef"
	amd64, _ := imagebuild.ParsePlatform("linux/amd64")
	arm64, _ := imagebuild.ParsePlatform("linux/arm64")
	// Pushed to the registry's own loopback address: plain HTTP, as
	// convoy speaks to loopback registries.
	image := reg.Direct + "/convoy:test"
	res, err := imagebuild.Build(context.Background(), imagebuild.Options{
		Image:     image,
		Platforms: []v1.Platform{amd64, arm64},
		ModuleDir: moduleDir,
		LDFlags:   imagebuild.VersionLDFlags(version, commit) + " -s -w",
		CABundle:  "/etc/ssl/certs/ca-certificates.crt",
		Meta:      imagebuild.Metadata{Version: version, Commit: commit, Source: "https://github.com/convoy-sh/convoy", Created: time.Unix(1700000000, 0)},
		Log:       testLog{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pushed %s@%s; both go builds took %s", image, res.Digest, res.Compile.Round(time.Second))

	// Pull it back through the counting proxy, as a client would.
	ref, err := imagebuild.ParseReference(reg.Host + "/convoy:test")
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if d != res.Digest {
		t.Errorf("the registry's index is %s, the build pushed %s", d, res.Digest)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]v1.Image{}
	for _, m := range im.Manifests {
		img, err := idx.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		images[m.Platform.OS+"/"+m.Platform.Architecture] = img
	}
	if len(images) != 2 || images["linux/amd64"] == nil || images["linux/arm64"] == nil {
		t.Fatalf("the index lists %d manifests, want linux/amd64 and linux/arm64: %+v", len(im.Manifests), im.Manifests)
	}

	bin := extractEntrypoint(t, images["linux/amd64"])
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", bin, err, out)
	}
	if want := "convoy " + version + " (commit " + commit + ","; !strings.HasPrefix(string(out), want) {
		t.Errorf("the image's convoy version printed %q, want it to start with %q", out, want)
	}
	if !strings.Contains(string(out), "linux/amd64") {
		t.Errorf("the amd64 image's binary reports %q", out)
	}

	armBin := extractEntrypoint(t, images["linux/arm64"])
	f, err := elf.Open(armBin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 {
		t.Errorf("the arm64 image's entrypoint is built for %s", f.Machine)
	}
	// Static: no interpreter to load it.
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the arm64 binary is dynamically linked (PT_INTERP)")
		}
	}
}

// extractEntrypoint writes the file the image's entrypoint names, read
// from its layers, into a temporary directory.
func extractEntrypoint(t *testing.T, img v1.Image) string {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Config.Entrypoint) != 1 {
		t.Fatalf("entrypoint %v", cfg.Config.Entrypoint)
	}
	want := strings.TrimPrefix(cfg.Config.Entrypoint[0], "/")
	path := filepath.Join(t.TempDir(), "convoy")
	if !extractFile(t, img, want, path) {
		t.Fatalf("the image has no file %s (its entrypoint)", want)
	}
	return path
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// extractFile copies the regular file name of the image's flattened file
// system to dst (executable).
func extractFile(t *testing.T, img v1.Image, name, dst string) bool {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != name || h.Typeflag != tar.TypeReg {
			continue
		}
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, tr); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		return true
	}
}
