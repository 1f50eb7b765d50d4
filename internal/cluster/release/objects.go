package release

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Helm's ownership metadata, set on every object a release applies so that
// helm (and convoy) recognise which release owns it.
const (
	annoReleaseName      = "meta.helm.sh/release-name"
	annoReleaseNamespace = "meta.helm.sh/release-namespace"
	labelManagedBy       = "app.kubernetes.io/managed-by"
	annoResourcePolicy   = "helm.sh/resource-policy"
)

// identity is an object's identity across API versions.
type identity struct{ group, kind, namespace, name string }

func idOf(r kube.Ref) identity { return identity{r.Group, r.Kind, r.Namespace, r.Name} }

// parseRecordManifest parses a stored manifest of release name (all
// documents), objects of removed API versions read as their successors'
// (parseStored).
func (e *Renderer) parseRecordManifest(manifest, name, namespace string) ([]*unstructured.Unstructured, error) {
	objs, _, err := e.parseStored(manifest, name, namespace, 0)
	return objs, err
}

// setOwnership marks objects as owned by the release, as helm does.
func setOwnership(objs []*unstructured.Unstructured, name, namespace string) {
	for _, o := range objs {
		l := o.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[labelManagedBy] = "Helm"
		o.SetLabels(l)
		a := o.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[annoReleaseName] = name
		a[annoReleaseNamespace] = namespace
		o.SetAnnotations(a)
	}
}

// OwnershipError reports an existing object that another owner (or nobody)
// manages; adopting it needs take_ownership.
type OwnershipError struct {
	Ref    kube.Ref
	Reason string
}

func (e *OwnershipError) Error() string {
	return fmt.Sprintf("%s exists and cannot be imported into the current release: %s (set take_ownership = true to adopt it)", e.Ref, e.Reason)
}

// checkOwnership fails for objects about to be created by this release that
// already exist and are not owned by it. skip lists identities the release
// already owned (from its previous revision) or knows absent. It returns
// the objects it found absent: their apply creates them without reading
// them again.
func (e *Engine) checkOwnership(ctx context.Context, objs []*unstructured.Unstructured, name, namespace string, skip map[identity]bool) ([]kube.Ref, error) {
	var absent []kube.Ref
	for _, o := range objs {
		ref := kube.RefOf(o)
		if skip[idOf(ref)] {
			continue
		}
		live, err := e.kube.Get(ctx, ref)
		if apierrors.IsNotFound(err) {
			absent = append(absent, ref)
			continue
		}
		if err != nil {
			return nil, err
		}
		a := live.GetAnnotations()
		switch {
		case a[annoReleaseName] != name:
			return nil, &OwnershipError{Ref: ref, Reason: fmt.Sprintf("annotation %s is %q, not %q", annoReleaseName, a[annoReleaseName], name)}
		case a[annoReleaseNamespace] != namespace:
			return nil, &OwnershipError{Ref: ref, Reason: fmt.Sprintf("annotation %s is %q, not %q", annoReleaseNamespace, a[annoReleaseNamespace], namespace)}
		}
	}
	return absent, nil
}

func identities(objs []*unstructured.Unstructured) map[identity]bool {
	m := make(map[identity]bool, len(objs))
	for _, o := range objs {
		m[idOf(kube.RefOf(o))] = true
	}
	return m
}

// removed lists the objects of old that are not in current and may be
// deleted (not annotated helm.sh/resource-policy: keep), in reverse order.
func removed(old, current []*unstructured.Unstructured) []kube.Ref {
	keep := identities(current)
	var out []kube.Ref
	for _, o := range slices.Backward(old) {
		ref := kube.RefOf(o)
		if keep[idOf(ref)] || o.GetAnnotations()[annoResourcePolicy] == "keep" {
			continue
		}
		out = append(out, ref)
	}
	return out
}

// deletable lists objs in reverse install order, without those annotated
// helm.sh/resource-policy: keep (uninstall).
func deletable(objs []*unstructured.Unstructured) (del []kube.Ref, kept []kube.Ref) {
	for _, o := range slices.Backward(objs) {
		if o.GetAnnotations()[annoResourcePolicy] == "keep" {
			kept = append(kept, kube.RefOf(o))
			continue
		}
		del = append(del, kube.RefOf(o))
	}
	return del, kept
}

func refs(objs []*unstructured.Unstructured) []kube.Ref {
	out := make([]kube.Ref, len(objs))
	for i, o := range objs {
		out[i] = kube.RefOf(o)
	}
	return out
}

// lives are the objects as the apply of results returned them.
func lives(results []kube.Result) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(results))
	for i, r := range results {
		out[i] = r.Live
	}
	return out
}

// RecordManifests splits a record's manifest ("---\n# Source: PATH\n
// CONTENT\n" per document, as Rendered.Manifest writes it) into its
// documents with the templates they came from.
func RecordManifests(manifest string) []chart.Manifest {
	var out []chart.Manifest
	for _, part := range strings.Split(manifest, "---\n# Source: ") {
		path, content, ok := strings.Cut(part, "\n")
		if !ok || strings.TrimSpace(content) == "" {
			continue
		}
		out = append(out, chart.Manifest{Path: path, Content: strings.TrimSuffix(content, "\n")})
	}
	return out
}

// RecordObjects parses the objects of a record, with the ownership
// metadata apply gives them, and the template each came from. An object
// of an API version the cluster no longer serves is read as its served
// successor, as an upgrade reads its previous revision (parseStored).
func (e *Renderer) RecordObjects(rec *Release) ([]*unstructured.Unstructured, []string, error) {
	objs, paths, _, err := e.RecordObjectsAPIs(rec)
	return objs, paths, err
}

// RecordObjectsAPIs is RecordObjects, and the removed API versions the
// record names that its objects were read as the successors of.
func (e *Renderer) RecordObjectsAPIs(rec *Release) ([]*unstructured.Unstructured, []string, []StoredAPI, error) {
	var objs []*unstructured.Unstructured
	var paths []string
	var apis []StoredAPI
	for _, m := range RecordManifests(rec.Manifest) {
		got, mapped, err := e.parseStored(m.Document(), rec.Name, rec.Namespace, rec.Version)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("revision %d of %s, template %s: %w", rec.Version, rec.Name, m.Path, err)
		}
		for range got {
			paths = append(paths, m.Path)
		}
		objs = append(objs, got...)
		for _, a := range mapped {
			if !slices.ContainsFunc(apis, func(s StoredAPI) bool { return s.From == a.From }) {
				apis = append(apis, a)
			}
		}
	}
	setOwnership(objs, rec.Name, rec.Namespace)
	return objs, paths, apis, nil
}
