package release

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// sources maps each object of a release to the template that rendered it.
type sources map[identity]string

func (s sources) of(ref kube.Ref) string { return s[idOf(ref)] }

// inTemplate prefixes an error about an object with its template file.
func (s sources) inTemplate(err error) error {
	var oe *kube.ObjectError
	if errors.As(err, &oe) {
		if path := s.of(oe.Ref); path != "" {
			return fmt.Errorf("template %s: %w", path, err)
		}
	}
	return err
}

// apply server-side applies objs in order, as the field manager helm uses
// (kube.DefaultFieldManager). convoy is declarative: the fields its objects
// set are taken over from whichever manager changed them (kubectl, a
// controller), except those the release's ignore_changes leaves to others
// (applied only when their object is created). Which objects may be
// applied is decided before (checkOwnership, take_ownership).
//
// The objects listed in replace are replaced when the API server refuses
// to change their immutable fields (kube.ApplyOptions.Replace); those in
// create are known absent and created without being read
// (kube.ApplyOptions.Create).
func (e *Engine) apply(ctx context.Context, objs []*unstructured.Unstructured, src sources, ignore kube.IgnoreRules, replace, create []kube.Ref) ([]kube.Result, error) {
	results, err := e.kube.Apply(ctx, objs, kube.ApplyOptions{Force: true, Ignore: ignore, Replace: replace, Create: create})
	return results, src.inTemplate(err)
}

// applyRollout applies a rollout's objects, those r.create lists
// create-only. One that exists by then (someone created it since it was
// found absent) is checked as checkOwnership checks objects before an
// apply: another owner's is refused, naming it; one the release may own is
// read and applied as any other.
func (e *Engine) applyRollout(ctx context.Context, rel *Release, r rollout) ([]kube.Result, error) {
	var results []kube.Result
	objs, create := r.objs, r.create
	for {
		if err := checkFence(ctx); err != nil {
			return results, err
		}
		got, err := e.apply(ctx, objs, r.src, r.ignore, r.replace, create)
		results = append(results, got...)
		if !errors.Is(err, kube.ErrExists) || len(got) >= len(objs) {
			if err == nil && len(r.expand) > 0 {
				// After the StatefulSets: a claim grows to what its
				// template now asks.
				err = e.kube.ResizeClaims(ctx, r.expand)
			}
			return results, err
		}
		obj := objs[len(got)]
		if !r.takeOwnership {
			if _, err := e.checkOwnership(ctx, []*unstructured.Unstructured{obj}, rel.Name, rel.Namespace, nil); err != nil {
				return results, err
			}
		}
		id := idOf(kube.RefOf(obj))
		create = slices.DeleteFunc(slices.Clone(create), func(r kube.Ref) bool { return idOf(r) == id })
		objs = objs[len(got):]
	}
}

// buildManifests parses rendered manifests, template by template, so that an
// invalid document is reported with its template file, and records which
// template each object came from.
func (e *Renderer) buildManifests(ms []chart.Manifest, namespace string) ([]*unstructured.Unstructured, sources, error) {
	var objs []*unstructured.Unstructured
	src := sources{}
	refuse := e.refuseRemoved(namespace, e.servedAPIs())
	for _, m := range ms {
		got, err := e.kube.ParseWith(m.Document(), namespace, refuse)
		if err != nil {
			return nil, nil, fmt.Errorf("template %s: %w", m.Path, err)
		}
		for _, o := range got {
			src[idOf(kube.RefOf(o))] = m.Path
		}
		objs = append(objs, got...)
	}
	return objs, src, nil
}
