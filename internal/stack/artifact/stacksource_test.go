package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/testfiles"

	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testfiles.Write(t, dir, files)
}

// A monorepo layout: the stack names a chart outside its directory.
func monorepo(t *testing.T) (root, stackDir string) {
	root = t.TempDir()
	write(t, root, map[string]string{
		"stacks/shop/stack.hcl": `
release "api" {
  chart  = "../../charts/api"
  values = [file("values/api.yaml")]
}
release "web" {
  chart = "./charts/web"
}
`,
		"stacks/shop/values/api.yaml":       "replicas: 2\n",
		"stacks/shop/convoy.lock.hcl":       "# lock\n",
		"stacks/shop/charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"stacks/shop/.git/config":           "not packed\n",
		"charts/api/Chart.yaml":             "apiVersion: v2\nname: api\nversion: 1.0.0\n",
		"charts/api/templates/cm.yaml":      "kind: ConfigMap\n",
		"charts/unrelated/Chart.yaml":       "not packed\n",
	})
	return root, filepath.Join(root, "stacks", "shop")
}

func TestPushFetchRoundTrip(t *testing.T) {
	ctx := context.Background()
	reg := sourcetest.StartRegistry(t, "", "")
	_, dir := monorepo(t)
	ref := "oci://" + reg.Host + "/stacks/shop:v1"
	p, err := Push(ctx, Registry{}, dir, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Digest, "sha256:") || p.Ref.String() != ref+"@"+p.Digest {
		t.Fatalf("pushed %+v", p)
	}
	again, err := Push(ctx, Registry{}, dir, "oci://"+reg.Host+"/stacks/shop:v1-again")
	if err != nil {
		t.Fatal(err)
	}
	if again.Digest != p.Digest {
		t.Fatalf("the same files pushed twice: %s then %s", p.Digest, again.Digest)
	}

	cache := t.TempDir()
	f, err := Fetch(ctx, Registry{}, cache, ref)
	if err != nil {
		t.Fatal(err)
	}
	if f.Digest != p.Digest {
		t.Fatalf("fetched %s, pushed %s", f.Digest, p.Digest)
	}
	for name, want := range map[string]string{
		"values/api.yaml":                    "replicas: 2\n",
		"convoy.lock.hcl":                    "# lock\n",
		"charts/web/Chart.yaml":              "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"../../charts/api/templates/cm.yaml": "kind: ConfigMap\n",
	} {
		got, err := os.ReadFile(filepath.Join(f.Dir, filepath.FromSlash(name)))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	for _, name := range []string{".git/config", "../../charts/unrelated/Chart.yaml"} {
		if _, err := os.Stat(filepath.Join(f.Dir, filepath.FromSlash(name))); err == nil {
			t.Errorf("%s was packed", name)
		}
	}

	// A new push moves the tag; the digest names the old content still.
	write(t, dir, map[string]string{"values/api.yaml": "replicas: 3\n"})
	p2, err := Push(ctx, Registry{}, dir, ref)
	if err != nil {
		t.Fatal(err)
	}
	if p2.Digest == p.Digest {
		t.Fatal("changed files, same digest")
	}
	f2, err := Fetch(ctx, Registry{}, cache, ref)
	if err != nil || f2.Digest != p2.Digest {
		t.Fatalf("fetch after the new push: %+v, %v", f2, err)
	}
	// A digest in the cache needs no registry.
	offline := "oci://127.0.0.1:1/stacks/shop@" + p.Digest
	f3, err := Fetch(ctx, Registry{}, cache, offline)
	if err != nil || f3.Dir != f.Dir {
		t.Fatalf("cached fetch: %+v, %v", f3, err)
	}
	if _, err := Fetch(ctx, Registry{}, t.TempDir(), offline); err == nil {
		t.Fatal("an uncached digest was fetched from a registry that is not there")
	}
}

func TestPushRefuses(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	write(t, outside, map[string]string{"secret.txt": "s3cret"})
	for _, tc := range []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, dir string)
		ref   string
		want  string
	}{
		{name: "absolute chart", files: map[string]string{"stack.hcl": "release \"a\" {\n  chart = \"/srv/charts/a\"\n}\n"},
			want: "stack.hcl:2,11-26: Chart path cannot be pushed"},
		{name: "symlink outside", files: map[string]string{"stack.hcl": ""},
			setup: func(t *testing.T, dir string) {
				if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "values.yaml")); err != nil {
					t.Fatal(err)
				}
			}, want: "which is outside"},
		{name: "no tag", files: map[string]string{"stack.hcl": ""}, ref: "oci://127.0.0.1:1/s", want: "give a tag"},
		{name: "not oci", files: map[string]string{"stack.hcl": ""}, ref: "https://x/s:v1", want: "is not an OCI reference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, tc.files)
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			ref := tc.ref
			if ref == "" {
				ref = "oci://127.0.0.1:1/s:v1"
			}
			_, err := Push(ctx, Registry{}, dir, ref)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatal("the error shows a file's content")
			}
		})
	}
}

type entry struct {
	name     string
	typ      byte
	body     string
	linkname string
}

func archive(t *testing.T, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Size: int64(len(e.body)), Linkname: e.linkname}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// pushRaw pushes an artifact as a hostile registry might serve it.
func pushRaw(t *testing.T, host, tag, artifactType, stackPath string, layer []byte) {
	t.Helper()
	ctx := context.Background()
	ref, err := ParseRef("oci://" + host + "/hostile:" + tag)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := Registry{}.repository(ref)
	if err != nil {
		t.Fatal(err)
	}
	ld := content.NewDescriptorFromBytes(LayerMediaType, layer)
	if err := pushBlob(ctx, repo, ld, layer); err != nil {
		t.Fatal(err)
	}
	if err := pushBlob(ctx, repo, ocispec.DescriptorEmptyJSON, ocispec.DescriptorEmptyJSON.Data); err != nil {
		t.Fatal(err)
	}
	m := ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, ArtifactType: artifactType, Config: ocispec.DescriptorEmptyJSON,
		Layers: []ocispec.Descriptor{ld}, Annotations: map[string]string{AnnotationStackPath: stackPath}}
	m.SchemaVersion = 2
	mb, _ := json.Marshal(m)
	md := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, mb)
	if err := repo.PushReference(ctx, md, bytes.NewReader(mb), tag); err != nil {
		t.Fatal(err)
	}
}

func TestFetchRefusesHostileArtifacts(t *testing.T) {
	ctx := context.Background()
	reg := sourcetest.StartRegistry(t, "", "")
	ok := entry{name: "stack.hcl", typ: tar.TypeReg, body: ""}
	big := strings.Repeat("x", 2<<10)
	for _, tc := range []struct {
		name, artifactType, stackPath string
		entries                       []entry
		limits                        Limits
		want                          string
	}{
		{name: "dotdot", entries: []entry{ok, {name: "../escape", typ: tar.TypeReg, body: "x"}}, want: "leaves the directory"},
		{name: "nested dotdot", entries: []entry{ok, {name: "a/../../escape", typ: tar.TypeReg, body: "x"}}, want: "not clean"},
		{name: "absolute", entries: []entry{ok, {name: "/tmp/escape", typ: tar.TypeReg, body: "x"}}, want: "absolute name"},
		{name: "symlink", entries: []entry{ok, {name: "link", typ: tar.TypeSymlink, linkname: "/etc/passwd"}}, want: "is a symlink"},
		{name: "hard link", entries: []entry{ok, {name: "link", typ: tar.TypeLink, linkname: "stack.hcl"}}, want: "is a hard link"},
		{name: "device", entries: []entry{ok, {name: "dev", typ: tar.TypeChar}}, want: "is a device"},
		{name: "duplicate", entries: []entry{ok, ok}, want: "file exists"},
		{name: "too large", entries: []entry{ok, {name: "big", typ: tar.TypeReg, body: big}}, limits: Limits{Unpacked: 1 << 10}, want: "unpacks to more than 1024 bytes"},
		{name: "too many", entries: []entry{ok, {name: "a", typ: tar.TypeReg}, {name: "b", typ: tar.TypeReg}}, limits: Limits{Files: 2}, want: "more than 2 entries"},
		{name: "layer too large", entries: []entry{ok, {name: "big", typ: tar.TypeReg, body: big}}, limits: Limits{Layer: 10}, want: "more than the limit of 10"},
		{name: "stack path escapes", stackPath: "../x", entries: []entry{ok}, want: "leaves the directory"},
		{name: "no stack dir", stackPath: "missing", entries: []entry{ok}, want: "no stack directory missing"},
		{name: "not a stack", artifactType: "application/vnd.cncf.helm.config.v1+json", entries: []entry{ok}, want: "is not a convoy stack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tag := strings.ReplaceAll(tc.name, " ", "-")
			at := tc.artifactType
			if at == "" {
				at = ArtifactType
			}
			sp := tc.stackPath
			if sp == "" {
				sp = "."
			}
			pushRaw(t, reg.Host, tag, at, sp, archive(t, tc.entries))
			parent := t.TempDir()
			cache := filepath.Join(parent, "cache")
			_, err := Fetch(ctx, Registry{Limits: tc.limits}, cache, "oci://"+reg.Host+"/hostile:"+tag)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(parent, "escape")); err == nil {
				t.Fatal("a file was written outside the cache")
			}
			if entries, _ := os.ReadDir(cache); len(entries) != 0 {
				t.Fatalf("the cache keeps %d entries of a refused artifact", len(entries))
			}
		})
	}
}
