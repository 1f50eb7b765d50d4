package artifact

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
)

// maxManifest bounds a manifest read from a registry.
const maxManifest = 4 << 20

// Fetched is a stack artifact unpacked in the cache.
type Fetched struct {
	// Dir is the stack directory.
	Dir string
	// Root is the artifact unpacked: Dir and the charts packed beside it
	// (../charts/api) are under it.
	Root string
	// Digest is the artifact's manifest digest.
	Digest string
	// Ref is the reference fetched, pinned to Digest.
	Ref Ref
}

// Fetch returns the stack of ref unpacked in the cache directory, pulling
// it unless the cache has its digest already. A reference with a digest
// that the cache holds needs no registry at all, unless reg.Recheck: then
// its manifest is fetched (and its digest checked) first.
func Fetch(ctx context.Context, reg Registry, cacheDir, refText string) (*Fetched, error) {
	ref, err := ParseRef(refText)
	if err != nil {
		return nil, err
	}
	if ref.Digest != "" && !reg.Recheck {
		if f, ok := cached(cacheDir, ref); ok {
			return f, nil
		}
	}
	repo, err := reg.repository(ref)
	if err != nil {
		return nil, err
	}
	mdesc, rc, err := repo.FetchReference(ctx, ref.reference())
	if err != nil {
		return nil, fmt.Errorf("%s: fetch the manifest: %w", ref, err)
	}
	mb, err := io.ReadAll(io.LimitReader(rc, maxManifest+1))
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: fetch the manifest: %w", ref, err)
	}
	if len(mb) > maxManifest {
		return nil, fmt.Errorf("%s: the manifest is larger than %d bytes", ref, maxManifest)
	}
	got := digest.FromBytes(mb)
	if mdesc.Digest != "" && got != mdesc.Digest {
		return nil, fmt.Errorf("%s: the manifest's digest is %s, the registry said %s", ref, got, mdesc.Digest)
	}
	if ref.Digest != "" && got.String() != ref.Digest {
		return nil, fmt.Errorf("%s: the registry served a manifest of digest %s", ref, got)
	}
	ref = ref.WithDigest(got.String())
	if f, ok := cached(cacheDir, ref); ok {
		return f, nil
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		return nil, fmt.Errorf("%s: the manifest: %w", ref, err)
	}
	if m.ArtifactType != ArtifactType {
		return nil, fmt.Errorf("%s is not a convoy stack (artifact type %q, want %q): push it with convoy push", ref, m.ArtifactType, ArtifactType)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != LayerMediaType {
		return nil, fmt.Errorf("%s: a stack artifact has one layer of media type %s", ref, LayerMediaType)
	}
	stackPath := m.Annotations[AnnotationStackPath]
	if err := checkName(stackPath, true); err != nil {
		return nil, fmt.Errorf("%s: annotation %s: %w", ref, AnnotationStackPath, err)
	}
	layer := m.Layers[0]
	limits := reg.Limits
	if layer.Size < 0 || layer.Size > limits.layer() {
		return nil, fmt.Errorf("%s: the stack layer is %d bytes, more than the limit of %d", ref, layer.Size, limits.layer())
	}
	blob, err := repo.Blobs().Fetch(ctx, layer)
	if err != nil {
		return nil, fmt.Errorf("%s: fetch the stack layer %s: %w", ref, layer.Digest, err)
	}
	vr := content.NewVerifyReader(blob, layer)
	data, err := io.ReadAll(vr)
	if err == nil {
		err = vr.Verify()
	}
	blob.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: the stack layer %s: %w", ref, layer.Digest, err)
	}
	return unpack(cacheDir, ref, stackPath, data, limits)
}

// entryDir is where an artifact is unpacked in the cache.
func entryDir(cacheDir string, d string) string {
	return filepath.Join(cacheDir, strings.ReplaceAll(d, ":", "-"))
}

// cached returns the unpacked artifact when the cache holds it.
func cached(cacheDir string, ref Ref) (*Fetched, bool) {
	if _, err := digest.Parse(ref.Digest); err != nil {
		return nil, false
	}
	dir := entryDir(cacheDir, ref.Digest)
	sp, err := os.ReadFile(filepath.Join(dir, "stack-path"))
	if err != nil || checkName(string(sp), true) != nil {
		return nil, false
	}
	tree := filepath.Join(dir, "tree")
	return &Fetched{Dir: filepath.Join(tree, filepath.FromSlash(string(sp))), Root: tree, Digest: ref.Digest, Ref: ref}, true
}

// unpack extracts the archive into a fresh directory of the cache and
// moves it into place whole: a cache entry is complete or absent.
func unpack(cacheDir string, ref Ref, stackPath string, archive []byte, limits Limits) (*Fetched, error) {
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(cacheDir, ".pull-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "tree")
	if err := os.Mkdir(tree, 0o755); err != nil {
		return nil, err
	}
	if err := extract(bytes.NewReader(archive), tree, limits); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	if fi, err := os.Stat(filepath.Join(tree, filepath.FromSlash(stackPath))); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s: the archive has no stack directory %s", ref, stackPath)
	}
	if err := os.WriteFile(filepath.Join(tmp, "stack-path"), []byte(stackPath), 0o644); err != nil {
		return nil, err
	}
	final := entryDir(cacheDir, ref.Digest)
	if err := os.Rename(tmp, final); err != nil {
		// Another pull of the same digest won the race: use its copy.
		if f, ok := cached(cacheDir, ref); ok {
			return f, nil
		}
		return nil, err
	}
	f, ok := cached(cacheDir, ref)
	if !ok {
		return nil, fmt.Errorf("%s: the cache entry %s is incomplete", ref, final)
	}
	return f, nil
}
