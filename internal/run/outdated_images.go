package run

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"go.yaml.in/yaml/v3"
)

// OutdatedImage is one image a release renders, and whether its registry
// has a newer version tag of the same major.
type OutdatedImage struct {
	Release config.ReleaseInstanceAddr
	// Object names what runs it: "apps/v1 Deployment ns/name".
	Object string
	// Image is as the manifest writes it; Ref its parts.
	Image string
	Ref   source.ImageRef
	// Newer is the newest tag of the same major newer than Ref.Tag ("":
	// none, or the tag is no version).
	Newer string
	// NotVersion: the tag is no MAJOR.MINOR.PATCH version (latest, a
	// branch, a digest only), so nothing is newer.
	NotVersion bool
	// Err is why the release could not be rendered or the registry not
	// read; the other images are reported all the same.
	Err error
}

// OutdatedImages renders every release offline (as convoy render) and
// reports each image its pods run with the newest newer tag of the same
// major its registry lists. Each image repository is asked once, several
// at once; a registry that does not answer is reported on its images.
func (s *Session) OutdatedImages(ctx context.Context, req OutdatedRequest) ([]OutdatedImage, error) {
	_, rendered, err := s.Render(ctx, RenderRequest{})
	if err != nil {
		return nil, err
	}
	var out []OutdatedImage
	for _, r := range rendered {
		if r.Err != nil {
			out = append(out, OutdatedImage{Release: r.Instance.Addr, Err: r.AddrErr()})
			continue
		}
		seen := map[string]bool{}
		for _, m := range r.Out.Manifests {
			for _, img := range manifestImages(m) {
				key := img + "\x00" + m.Kind + "/" + m.Name
				if seen[key] {
					continue
				}
				seen[key] = true
				o := OutdatedImage{Release: r.Instance.Addr, Image: img, Object: objectName(m, r.Instance.Namespace)}
				o.Ref, o.Err = source.ParseImage(img)
				if o.Err == nil && !isVersion(o.Ref.Tag) {
					o.NotVersion = true
				}
				out = append(out, o)
			}
		}
	}
	// One tag list per repository, for the images whose tag is a version.
	groups := map[string][]int{}
	for i, o := range out {
		if o.Err == nil && o.Image != "" && !o.NotVersion {
			groups[o.Ref.Name()] = append(groups[o.Ref.Name()], i)
		}
	}
	names := slices.Sorted(maps.Keys(groups))
	n := req.Concurrency
	if n <= 0 {
		n = 8
	}
	err = forEach(ctx, n, len(names), func(i int) {
		idx := groups[names[i]]
		tags, err := req.Resolver.ImageTags(ctx, out[idx[0]].Ref)
		for _, j := range idx {
			if err != nil {
				out[j].Err = err
				continue
			}
			out[j].Newer = source.NewerImageTag(out[j].Ref.Tag, tags)
		}
	})
	return out, err
}

func isVersion(tag string) bool {
	_, ok := source.Candidate(tag, true)
	return ok
}

func objectName(m chart.Manifest, ns string) string {
	if m.Namespace != "" {
		ns = m.Namespace
	}
	return fmt.Sprintf("%s %s %s/%s", m.APIVersion, m.Kind, ns, m.Name)
}

// manifestImages lists the images of every container list a manifest
// holds (containers, initContainers, ephemeralContainers, at any depth:
// Pods, workloads' templates, CronJobs' job templates, custom resources
// shaped alike), in document order.
func manifestImages(m chart.Manifest) []string {
	var doc any
	if err := yaml.Unmarshal([]byte(m.Content), &doc); err != nil {
		return nil
	}
	var imgs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range []string{"initContainers", "containers", "ephemeralContainers"} {
				list, _ := v[k].([]any)
				for _, c := range list {
					if cm, ok := c.(map[string]any); ok {
						if img, ok := cm["image"].(string); ok && strings.TrimSpace(img) != "" {
							imgs = append(imgs, img)
						}
					}
				}
			}
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k])
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	return imgs
}
