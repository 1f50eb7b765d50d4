package imagebuild_test

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/hack/image/imagebuild"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// fakeBinaries writes a stand-in file per platform: the image's structure
// does not depend on what the binary is.
func fakeBinaries(t *testing.T, platforms ...string) []imagebuild.Binary {
	t.Helper()
	var bins []imagebuild.Binary
	for _, s := range platforms {
		p, err := imagebuild.ParsePlatform(s)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "convoy")
		if err := os.WriteFile(path, []byte("#!binary for "+s+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		bins = append(bins, imagebuild.Binary{Platform: p, Path: path})
	}
	return bins
}

func caBundle(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ca.crt")
	pem := "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	if err := os.WriteFile(p, []byte(pem), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var meta = imagebuild.Metadata{Version: "v1.2.3", Commit: "abc123", Source: "https://github.com/convoy-sh/convoy", Created: time.Unix(1700000000, 0).UTC()}

// The same binaries and metadata give the same index digest: nothing of
// the build machine or the build time goes into a layer or a config.
func TestAssembleIsReproducible(t *testing.T) {
	bins := fakeBinaries(t, "linux/amd64", "linux/arm64")
	ca := caBundle(t)
	a, err := imagebuild.Assemble(bins, ca, meta)
	if err != nil {
		t.Fatal(err)
	}
	// Other file times on disk, another moment: the same digest.
	for _, b := range bins {
		if err := os.Chtimes(b.Path, time.Now(), time.Now().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := imagebuild.Assemble(bins, ca, meta)
	if err != nil {
		t.Fatal(err)
	}
	da, err := a.Digest()
	if err != nil {
		t.Fatal(err)
	}
	db, err := b.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if da != db {
		t.Errorf("two assemblies of the same binaries: %s and %s", da, db)
	}
	// Another commit's metadata changes it.
	m2 := meta
	m2.Commit = "def456"
	c, err := imagebuild.Assemble(bins, ca, m2)
	if err != nil {
		t.Fatal(err)
	}
	if dc, _ := c.Digest(); dc == da {
		t.Error("another commit's image has the same digest")
	}
}

// The index lists one OCI image per platform, each run as 65532 from the
// binary at the entrypoint, with the OCI labels; the base has the users,
// the CA bundle and a sticky world-writable /tmp.
func TestAssembleLayout(t *testing.T) {
	bins := fakeBinaries(t, "linux/amd64", "linux/arm64")
	idx, err := imagebuild.Assemble(bins, caBundle(t), meta)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != types.OCIImageIndex {
		t.Errorf("index media type %s", im.MediaType)
	}
	if im.Annotations["org.opencontainers.image.revision"] != "abc123" {
		t.Errorf("index annotations %v", im.Annotations)
	}
	var got []string
	for _, d := range im.Manifests {
		got = append(got, d.Platform.String())
		if d.MediaType != types.OCIManifestSchema1 {
			t.Errorf("%s: media type %s", d.Platform, d.MediaType)
		}
	}
	if strings.Join(got, " ") != "linux/amd64 linux/arm64/v8" {
		t.Fatalf("platforms %v", got)
	}
	for i, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Architecture != d.Platform.Architecture || cfg.OS != "linux" {
			t.Errorf("%s: config says %s/%s", d.Platform, cfg.OS, cfg.Architecture)
		}
		c := cfg.Config
		if strings.Join(c.Entrypoint, " ") != imagebuild.Entrypoint || c.User != "65532:65532" {
			t.Errorf("%s: entrypoint %v user %q", d.Platform, c.Entrypoint, c.User)
		}
		for k, want := range map[string]string{
			"org.opencontainers.image.source":   meta.Source,
			"org.opencontainers.image.revision": meta.Commit,
			"org.opencontainers.image.version":  meta.Version,
		} {
			if c.Labels[k] != want {
				t.Errorf("%s: label %s = %q, want %q", d.Platform, k, c.Labels[k], want)
			}
		}
		files := filesOf(t, img)
		for path, want := range map[string]string{
			"tmp":                               "dir 1777 0:0",
			"home/nonroot":                      "dir 700 65532:65532",
			"etc/ssl/certs/ca-certificates.crt": "file 644 0:0",
			"usr/local/bin/convoy":              "file 755 0:0",
		} {
			if files[path].kind != want {
				t.Errorf("%s: %s is %q, want %q", d.Platform, path, files[path].kind, want)
			}
		}
		if !strings.Contains(files["etc/passwd"].data, "nonroot:x:65532:65532:") || !strings.Contains(files["etc/group"].data, "nonroot:x:65532:") {
			t.Errorf("%s: no user 65532:\n%s%s", d.Platform, files["etc/passwd"].data, files["etc/group"].data)
		}
		if files["usr/local/bin/convoy"].data != "#!binary for "+[]string{"linux/amd64", "linux/arm64"}[i]+"\n" {
			t.Errorf("%s: the entrypoint is another platform's binary", d.Platform)
		}
		for _, f := range files {
			if !f.mtime.Equal(meta.Created) {
				t.Errorf("%s: %s has mtime %s, want %s", d.Platform, f.name, f.mtime, meta.Created)
			}
		}
	}
}

func TestAssembleRefusesAnEmptyCABundle(t *testing.T) {
	p := filepath.Join(t.TempDir(), "empty.crt")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := imagebuild.Assemble(fakeBinaries(t, "linux/amd64"), p, meta)
	if err == nil || !strings.Contains(err.Error(), "holds no PEM certificate") {
		t.Fatalf("err = %v", err)
	}
}

func TestParsePlatform(t *testing.T) {
	for in, want := range map[string]string{"linux/amd64": "linux/amd64", "linux/arm64": "linux/arm64/v8", "linux/arm/v7": "linux/arm/v7"} {
		p, err := imagebuild.ParsePlatform(in)
		if err != nil || p.String() != want {
			t.Errorf("%s: %v %v", in, p, err)
		}
	}
	for _, bad := range []string{"linux", "/amd64", "linux/amd64/v1/x", ""} {
		if _, err := imagebuild.ParsePlatform(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

type file struct {
	name, kind, data string
	mtime            time.Time
}

// filesOf reads the image's flattened file system.
func filesOf(t *testing.T, img v1.Image) map[string]file {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	out := map[string]file{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		kind := "file"
		if h.Typeflag == tar.TypeDir {
			kind = "dir"
		}
		f := file{name: h.Name, mtime: h.ModTime, kind: kind + " " + strconvOct(h.Mode&0o7777) + " " + itoa(h.Uid) + ":" + itoa(h.Gid)}
		if kind == "file" && h.Size < 1<<20 {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			f.data = string(b)
		}
		out[strings.TrimSuffix(h.Name, "/")] = f
	}
}

func strconvOct(n int64) string { return strconv.FormatInt(n, 8) }
func itoa(n int) string         { return strconv.Itoa(n) }
