package release

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Records as metadata (issue 26): what a plan reads to prove a release
// unchanged is in a record's labels and annotations (name, version,
// status, the stack and address labels, FingerprintLabel, AppliedLabel,
// ObjectsAnnotation). Lists of record metadata are a fraction of the
// records (whose payload holds the chart), and nothing is decoded; the
// payload of a record is read (one GET) only for releases planned in full.

// ListRecordMeta lists the metadata of a namespace's release records
// (label owner=helm; Secrets of Helm's record type only) with the metadata
// client (protobuf where the server offers it), page by page.
//
// With the engine's Metadata (the controller's shared informers) the list
// is served from its cache when it can be; the items then share their
// labels and annotations with the cache, and are only read.
func (e *Engine) ListRecordMeta(ctx context.Context, namespace string) ([]metav1.PartialObjectMetadata, error) {
	return e.listRecordMeta(ctx, namespace, true)
}

// HistoriesNow are the histories of a namespace's releases as their
// records' metadata says (HistoriesOfMeta), read from the API server (or
// the database) now, never from the engine's cache: what a saved plan is
// verified against.
func (e *Engine) HistoriesNow(ctx context.Context, namespace string) (map[string][]*Release, error) {
	items, err := e.listRecordMeta(ctx, namespace, false)
	if err != nil {
		return nil, err
	}
	return e.HistoriesOfMeta(ctx, namespace, items)
}

// listRecordMeta is ListRecordMeta, from the engine's cache only when
// cached says it may.
func (e *Engine) listRecordMeta(ctx context.Context, namespace string, cached bool) ([]metav1.PartialObjectMetadata, error) {
	if e.sql != nil {
		return e.sqlRecordMeta(ctx, namespace)
	}
	gvr, fieldSelector := e.recordResource()
	if e.metadata != nil && cached {
		if items, ok := e.metadata.ListMetadata(ctx, gvr, namespace, metav1.ListOptions{LabelSelector: "owner=helm", FieldSelector: fieldSelector}); ok {
			out := make([]metav1.PartialObjectMetadata, len(items))
			for i, m := range items {
				out[i] = *m
			}
			return out, nil
		}
	}
	res := e.meta.Resource(gvr).Namespace(namespace)
	opts := metav1.ListOptions{LabelSelector: "owner=helm", FieldSelector: fieldSelector, Limit: e.pageSize()}
	var out []metav1.PartialObjectMetadata
	for {
		l, err := res.List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list release records in namespace %q: %w", namespace, kube.Forbidden(err))
		}
		for i := range l.Items {
			// Kept until the histories are built: drop what they never
			// read (the records' managedFields are most of their
			// metadata) but who wrote the payload (Rewritten).
			l.Items[i].ManagedFields = RecordWriters(&l.Items[i])
		}
		out = append(out, l.Items...)
		if l.Continue == "" {
			return out, nil
		}
		if len(l.Items) == 0 {
			return nil, fmt.Errorf("list release records in namespace %q: an empty page with a continue token", namespace)
		}
		opts.Continue = l.Continue
	}
}

func (e *Engine) pageSize() int64 {
	if e.listPageSize > 0 {
		return e.listPageSize
	}
	return kube.DefaultListPageSize
}

// HistoriesOfMeta groups a namespace's record metadata (ListRecordMeta's,
// or a cache's) by release name, oldest first, as Histories does, but
// decodes nothing: every record is a partial Release (Partial) holding its
// name, namespace, revision, status, labels and annotations. LoadRecord
// reads one whole. Records without Helm's name and version labels are read
// whole at once (one GET each), to know what they are.
func (e *Engine) HistoriesOfMeta(ctx context.Context, namespace string, items []metav1.PartialObjectMetadata) (map[string][]*Release, error) {
	out := map[string][]*Release{}
	for i := range items {
		m := &items[i]
		r, err := releaseOfMeta(m)
		if err != nil {
			// Not labelled as Helm labels records: read it to know.
			if r, err = e.records(namespace).Get(ctx, m.Name); err != nil {
				return nil, fmt.Errorf("release record %s/%s: %w", namespace, m.Name, err)
			}
		}
		out[r.Name] = append(out[r.Name], r)
	}
	for _, h := range out {
		slices.SortFunc(h, func(a, b *Release) int { return a.Version - b.Version })
	}
	return out, nil
}

// releaseOfMeta is the partial release of a record's metadata; an error
// when the record lacks Helm's name or version label.
func releaseOfMeta(m *metav1.PartialObjectMetadata) (*Release, error) {
	l := m.GetLabels()
	v, err := strconv.Atoi(l["version"])
	if err != nil || l["name"] == "" {
		return nil, fmt.Errorf("no name and version labels")
	}
	ns := m.Namespace
	r := &Release{Name: l["name"], Namespace: ns, Version: v, Info: &Info{Status: Status(l["status"])}, Annotations: m.GetAnnotations(), partial: true,
		rewritten: payloadRewritten(m.ManagedFields), objects: &recordObjectsMemo{}}
	r.fromObjectLabels(l)
	return r, nil
}

// Partial reports whether r holds only what its record's metadata says
// (HistoriesOfMeta): no chart, values, manifest, hooks or times.
func (r *Release) Partial() bool { return r.partial }

// LoadRecord reads the whole record of a partial release (one GET); a
// release that is not partial is returned as it is.
func (e *Engine) LoadRecord(ctx context.Context, r *Release) (*Release, error) {
	if !r.partial {
		return r, nil
	}
	full, err := e.records(r.Namespace).Get(ctx, recordKey(r.Name, r.Version))
	if err != nil {
		return nil, fmt.Errorf("release %s revision %d in namespace %s: %w", r.Name, r.Version, r.Namespace, err)
	}
	return full, nil
}
