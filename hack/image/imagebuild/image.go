package imagebuild

import (
	"fmt"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Metadata describes the build: it goes into the images' labels and the
// manifests' annotations.
type Metadata struct {
	// Version and Commit are convoy's (the binary prints them).
	Version, Commit string
	// Source is the repository's URL (org.opencontainers.image.source).
	Source string
	// Created is the time of every file and of the configs (the commit's
	// time, for reproducible digests).
	Created time.Time
}

// annotations are the OCI pre-defined annotation keys the image carries
// as labels (config) and annotations (manifests and index).
func (m Metadata) annotations() map[string]string {
	a := map[string]string{
		"org.opencontainers.image.title":       "convoy",
		"org.opencontainers.image.description": "convoy: plans and applies stacks of Helm releases; its controller reconciles Stack objects",
		"org.opencontainers.image.version":     m.Version,
		"org.opencontainers.image.revision":    m.Commit,
		"org.opencontainers.image.source":      m.Source,
		"org.opencontainers.image.created":     m.Created.UTC().Format(time.RFC3339),
	}
	for k, v := range a {
		if v == "" {
			delete(a, k)
		}
	}
	return a
}

// ParsePlatform parses "os/arch[/variant]" (linux/arm64 gets the variant
// v8, as Docker records it).
func ParsePlatform(s string) (v1.Platform, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return v1.Platform{}, fmt.Errorf("platform %q: want os/arch or os/arch/variant (linux/amd64)", s)
	}
	p := v1.Platform{OS: parts[0], Architecture: parts[1]}
	if len(parts) == 3 {
		p.Variant = parts[2]
	} else if p.Architecture == "arm64" {
		p.Variant = "v8"
	}
	return p, nil
}

// Binary is a convoy binary built for a platform.
type Binary struct {
	Platform v1.Platform
	Path     string
}

// Assemble makes the image index of one image per binary, in the order
// given: each image is the base layer (CA bundle from caBundle, users,
// /tmp) and a layer with the binary at Entrypoint, run as UID:GID.
func Assemble(bins []Binary, caBundle string, meta Metadata) (v1.ImageIndex, error) {
	if len(bins) == 0 {
		return nil, fmt.Errorf("no platforms to build")
	}
	ca, err := os.ReadFile(caBundle)
	if err != nil {
		return nil, fmt.Errorf("CA bundle: %w", err)
	}
	if !strings.Contains(string(ca), "-----BEGIN CERTIFICATE-----") {
		return nil, fmt.Errorf("CA bundle %s holds no PEM certificate", caBundle)
	}
	base, err := baseLayer(ca, meta.Created)
	if err != nil {
		return nil, err
	}
	anns := meta.annotations()
	var adds []mutate.IndexAddendum
	for _, b := range bins {
		img, err := platformImage(base, b, meta, anns)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Platform, err)
		}
		p := b.Platform
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	return mutate.Annotations(idx, anns).(v1.ImageIndex), nil
}

func platformImage(base v1.Layer, b Binary, meta Metadata, anns map[string]string) (v1.Image, error) {
	bin, err := binaryLayer(b.Path, meta.Created)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: meta.Created.UTC()}
	cfg := &v1.ConfigFile{
		Architecture: b.Platform.Architecture,
		OS:           b.Platform.OS,
		Variant:      b.Platform.Variant,
		Created:      created,
		Config: v1.Config{
			Entrypoint: []string{Entrypoint},
			User:       fmt.Sprintf("%d:%d", UID, GID),
			WorkingDir: "/",
			Env: []string{
				"PATH=/usr/local/bin:/usr/bin:/bin",
				"HOME=" + Home,
				"SSL_CERT_FILE=" + CABundlePath,
			},
			Labels: anns,
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, err
	}
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, History: v1.History{Created: created, CreatedBy: "convoy hack/image: CA bundle, users, /tmp", Comment: "base"}},
		mutate.Addendum{Layer: bin, History: v1.History{Created: created, CreatedBy: "convoy hack/image: " + Entrypoint, Comment: "convoy " + meta.Version}},
	)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, anns).(v1.Image), nil
}
