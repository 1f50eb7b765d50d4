package release

import (
	"errors"
	"fmt"
	"slices"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/apimap"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// StoredAPI is a removed API version a stored revision names, whose
// objects were read as its successor's (EngineOptions.APIs).
type StoredAPI struct {
	// Revision is the stored revision that names it.
	Revision int
	From, To apimap.API
	// RemovedIn is the Kubernetes release that stopped serving From (zero
	// when the map does not say).
	RemovedIn apimap.Version
}

func (s StoredAPI) String() string {
	removed := "no longer served"
	if !s.RemovedIn.IsZero() {
		removed = "removed in " + s.RemovedIn.String()
	}
	return fmt.Sprintf("stored revision %d names %s, %s: compared as %s", s.Revision, s.From, removed, s.To.APIVersion)
}

// RemovedAPIError is an object whose API version the cluster no longer
// serves and the API map knows removed: a rendered one (the chart must
// change), or a stored one without a successor the cluster serves.
type RemovedAPIError struct {
	Ref   kube.Ref
	Entry apimap.Entry
	// Stored: the object is in a stored revision (else the chart renders
	// it); Release names that release, for the way out.
	Stored  bool
	Release string
}

func (e *RemovedAPIError) Error() string {
	removed := "no longer served"
	if !e.Entry.RemovedIn.IsZero() {
		removed = "removed in " + e.Entry.RemovedIn.String()
	}
	if !e.Stored {
		if e.Entry.To == nil {
			return fmt.Sprintf("%s: %s, with no successor: the chart must stop rendering it", e.Ref, removed)
		}
		return fmt.Sprintf("%s: %s, use %s", e.Ref, removed, e.Entry.To.APIVersion)
	}
	why := "with no successor"
	if e.Entry.To != nil {
		why = fmt.Sprintf("and its successor %s is not served either", e.Entry.To.APIVersion)
	}
	return fmt.Sprintf("%s: %s %s, so the stored object cannot be compared: drop it from the stored revision with `convoy records migrate %s` (as helm-mapkubeapis does), "+
		"map it to a served API version with --api-map FILE or the stack's api_map, or let the release go with a removed block", e.Ref, removed, why, e.Release)
}

// APIs is the API map the engine reads stored revisions with.
func (e *Renderer) APIs() *apimap.Map {
	if e.apis == nil {
		return apimap.Kubernetes()
	}
	return e.apis
}

// servedAPIs answers whether the cluster serves an API, asking once per
// API: an unserved kind makes the mapper read discovery again.
func (e *Renderer) servedAPIs() func(apimap.API) bool {
	seen := map[apimap.API]bool{}
	return func(a apimap.API) bool {
		ok, asked := seen[a]
		if !asked {
			gv, err := schema.ParseGroupVersion(a.APIVersion)
			ok = err == nil && e.kube.Served(gv.WithKind(a.Kind))
			seen[a] = ok
		}
		return ok
	}
}

// parseStored parses a stored manifest of revision of release name. An
// object whose API version the cluster no longer serves and the API map
// knows removed is read as the successor the cluster serves (the
// StoredAPIs returned, once per API); one without such a successor is a
// *RemovedAPIError.
func (e *Renderer) parseStored(manifest, name, namespace string, revision int) ([]*unstructured.Unstructured, []StoredAPI, error) {
	return e.parseStoredAs(manifest, name, namespace, revision, false)
}

// StoredObjects are the objects of a stored revision as parseStored reads
// them, for the plan of its uninstall: an object whose API version has no
// served successor is left out, since the cluster can hold no such object.
func (e *Renderer) StoredObjects(rec *Release) ([]*unstructured.Unstructured, []StoredAPI, error) {
	return e.parseStoredAs(rec.Manifest, rec.Name, rec.Namespace, rec.Version, true)
}

// parseStoredAs is parseStored; gone: an object without a served
// successor is left out instead of refused.
func (e *Renderer) parseStoredAs(manifest, name, namespace string, revision int, gone bool) ([]*unstructured.Unstructured, []StoredAPI, error) {
	if manifest == "" {
		return nil, nil, nil
	}
	apis, served := e.APIs(), e.servedAPIs()
	var mapped []StoredAPI
	objs, err := e.kube.ParseWith(manifest, namespace, func(u *unstructured.Unstructured) error {
		from := apimap.API{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()}
		if e, known := apis.Lookup(from.APIVersion, from.Kind); !known || e.RemovedIn.IsZero() || served(from) {
			return nil // not known removed (a kind whose CRD comes later), or served
		}
		entry, to, _ := apis.Successor(from, served)
		if to == nil && gone {
			return kube.ErrSkipObject
		}
		if to == nil {
			ref := kube.RefOf(u)
			return &RemovedAPIError{Ref: ref, Entry: entry, Stored: true, Release: name}
		}
		u.SetAPIVersion(to.APIVersion)
		if !slices.ContainsFunc(mapped, func(s StoredAPI) bool { return s.From == from }) {
			mapped = append(mapped, StoredAPI{Revision: revision, From: from, To: *to, RemovedIn: entry.RemovedIn})
		}
		return nil
	})
	return objs, mapped, err
}

// refuseRemoved is the check of rendered objects: one whose API version
// the cluster does not serve and the API map knows removed is a
// *RemovedAPIError naming its successor, not a kind "not served yet".
func (e *Renderer) refuseRemoved(namespace string, served func(apimap.API) bool) func(*unstructured.Unstructured) error {
	apis := e.APIs()
	return func(u *unstructured.Unstructured) error {
		api := apimap.API{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()}
		entry, known := apis.Lookup(api.APIVersion, api.Kind)
		if !known || entry.RemovedIn.IsZero() || served(api) {
			return nil
		}
		ref := kube.RefOf(u)
		if ref.Namespace == "" && entry.To != nil {
			// Name it as the cluster would: its successor's scope.
			if gv, err := schema.ParseGroupVersion(entry.To.APIVersion); err == nil {
				if ns, err := e.kube.IsNamespaced(gv.WithKind(api.Kind)); err == nil && ns {
					ref.Namespace = namespace
				}
			}
		}
		return &RemovedAPIError{Ref: ref, Entry: entry}
	}
}

// IsRemovedAPI reports whether err is, or wraps, a *RemovedAPIError.
func IsRemovedAPI(err error) bool {
	var r *RemovedAPIError
	return errors.As(err, &r)
}

// refuseRemovedHooks fails for a hook that renders an API version the
// cluster does not serve and the API map knows removed, before anything
// runs. Hooks are parsed without the RESTMapper (a kind its CRD serves
// only later would make it read discovery again); other parse errors are
// left to the hook's run.
func (e *Renderer) refuseRemovedHooks(hooks []*chart.Hook, namespace string) error {
	if len(hooks) == 0 {
		return nil
	}
	refuse := e.refuseRemoved(namespace, e.servedAPIs())
	for _, h := range hooks {
		objs, err := kube.ParseUnmapped(h.Manifest)
		if err != nil {
			continue
		}
		for _, o := range objs {
			if err := refuse(o); err != nil {
				return fmt.Errorf("hook %s: %w", h.Path, err)
			}
		}
	}
	return nil
}

// NamesRemovedAPI reports whether one of objs (a record's
// ObjectsAnnotation) is of an API version the API map knows removed and
// the cluster no longer serves: the record's manifest then names it,
// which its metadata tells without decoding it. Discovery is asked only
// of the API versions the map knows removed.
func (e *Renderer) NamesRemovedAPI(objs []RecordObject) bool {
	apis, served := e.APIs(), e.servedAPIs()
	for _, o := range objs {
		api := apimap.API{APIVersion: o.Ref.APIVersion(), Kind: o.Ref.Kind}
		if entry, known := apis.Lookup(api.APIVersion, api.Kind); known && !entry.RemovedIn.IsZero() && !served(api) {
			return true
		}
	}
	return false
}
