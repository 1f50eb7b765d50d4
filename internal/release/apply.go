package release

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// releaseToolManagers are the field managers of tools that act for a
// release as a whole. Helm 4 applies server-side as "helm" (its binary's
// name): when a release moves between helm and convoy, the fields helm owns
// on the release's own objects are the release's, and convoy takes them
// over instead of failing on the conflict.
var releaseToolManagers = []string{"helm"}

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

// apply server-side applies objs in order. A field conflict only with
// release tools (helm) on an object this release owns is resolved by
// forcing that object, and so is any conflict on an object being adopted
// (take_ownership); any other conflict fails unless opts.Force is set.
func (e *Engine) apply(ctx context.Context, ns, rel string, objs []*unstructured.Unstructured, src sources, adopt map[identity]bool, opts kube.ApplyOptions) ([]kube.Result, error) {
	var results []kube.Result
	for len(objs) > 0 {
		got, err := e.kube.Apply(ctx, objs, opts)
		results = append(results, got...)
		if err == nil {
			return results, nil
		}
		failed := len(got)
		if opts.Force || failed >= len(objs) || !apierrors.IsConflict(err) {
			return results, src.inTemplate(err)
		}
		ref := kube.RefOf(objs[failed])
		switch {
		case adopt[idOf(ref)]:
			e.logf(ns, rel, PhaseApplying, "adopting %s: taking over its fields (take_ownership)", ref)
		case OnlyReleaseToolConflicts(err):
			e.logf(ns, rel, PhaseApplying, "taking over fields of %s from field manager helm", ref)
		default:
			return results, src.inTemplate(err)
		}
		forced := opts
		forced.Force = true
		one, err := e.kube.Apply(ctx, objs[failed:failed+1], forced)
		results = append(results, one...)
		if err != nil {
			return results, src.inTemplate(err)
		}
		objs = objs[failed+1:]
	}
	return results, nil
}

// OnlyReleaseToolConflicts reports whether err is a server-side apply
// conflict whose every conflicting manager is a release tool (helm): a
// conflict the engine resolves by taking those fields over.
func OnlyReleaseToolConflicts(err error) bool {
	var se *apierrors.StatusError
	if !errors.As(err, &se) || !apierrors.IsConflict(err) || se.ErrStatus.Details == nil {
		return false
	}
	n := 0
	for _, c := range se.ErrStatus.Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		n++
		// "conflict with \"helm\"" or "conflict with \"helm\" using v1"
		_, rest, ok := strings.Cut(c.Message, `conflict with "`)
		if !ok {
			return false
		}
		manager, _, ok := strings.Cut(rest, `"`)
		if !ok || !slices.Contains(releaseToolManagers, manager) {
			return false
		}
	}
	return n > 0
}

// buildManifests parses rendered manifests, template by template, so that an
// invalid document is reported with its template file, and records which
// template each object came from.
func (e *Engine) buildManifests(ms []chart.Manifest, namespace string) ([]*unstructured.Unstructured, sources, error) {
	var objs []*unstructured.Unstructured
	src := sources{}
	for _, m := range ms {
		got, err := e.kube.Parse(m.Content, namespace)
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
