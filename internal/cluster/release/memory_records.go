package release

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// MemoryRecords are the release records of every namespace of a cluster
// held in memory, a Memory driver per namespace, as Helm's
// storage/driver.Memory keeps them: what a cluster held in memory
// (planner/plannertest) reads its records from. Each record keeps its labels
// and annotations as a Secret record would, so lists of their metadata
// (Meta) read as the API server's. Safe for concurrent use.
type MemoryRecords struct {
	mu          sync.Mutex
	byNamespace map[string]*Memory
}

// NewMemoryRecords returns a cluster without records.
func NewMemoryRecords() *MemoryRecords {
	return &MemoryRecords{byNamespace: map[string]*Memory{}}
}

// driver is the Memory of namespace, made when first asked.
func (m *MemoryRecords) driver(namespace string) *Memory {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.byNamespace[namespace]
	if !ok {
		d = NewMemory()
		m.byNamespace[namespace] = d
	}
	return d
}

// namespaces are the namespaces holding records, sorted.
func (m *MemoryRecords) namespaces() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.byNamespace))
}

// Storage is the records of namespace, to read and write.
func (m *MemoryRecords) Storage(namespace string) *Storage {
	return &Storage{Driver: m.driver(namespace)}
}

// Meta is the metadata of namespace's records (owner=helm), as
// Engine.ListRecordMeta lists it.
func (m *MemoryRecords) Meta(namespace string) []metav1.PartialObjectMetadata {
	d := m.driver(namespace)
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []metav1.PartialObjectMetadata
	for _, key := range slices.Sorted(maps.Keys(d.records)) {
		rec := d.records[key]
		if rec.labels["owner"] != "helm" {
			continue
		}
		out = append(out, metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: key, Namespace: namespace, Labels: maps.Clone(rec.labels), Annotations: maps.Clone(rec.annotations), ResourceVersion: rec.version,
				ManagedFields: recordWriters(rec.managedFields())},
		})
	}
	return out
}

// HistoriesOfMeta groups record metadata (Meta's) by release name, oldest
// first, every record partial, as Engine.HistoriesOfMeta does.
func (m *MemoryRecords) HistoriesOfMeta(namespace string, items []metav1.PartialObjectMetadata) (map[string][]*Release, error) {
	out := map[string][]*Release{}
	for i := range items {
		r, err := releaseOfMeta(&items[i])
		if err != nil {
			return nil, fmt.Errorf("release record %s/%s: %w", namespace, items[i].Name, err)
		}
		out[r.Name] = append(out[r.Name], r)
	}
	for _, h := range out {
		slices.SortFunc(h, func(a, b *Release) int { return a.Version - b.Version })
	}
	return out, nil
}

// Histories are namespace's records by release name, oldest first, every
// record whole (Engine.Histories decodes only the newest and the deployed
// one; a plan reads no more of the others than their metadata).
func (m *MemoryRecords) Histories(ctx context.Context, namespace string) (map[string][]*Release, error) {
	recs, err := m.driver(namespace).List(ctx, map[string]string{"owner": "helm"})
	if err != nil {
		return nil, err
	}
	out := map[string][]*Release{}
	for _, r := range recs {
		out[r.Name] = append(out[r.Name], r)
	}
	for _, h := range out {
		slices.SortFunc(h, func(a, b *Release) int { return a.Version - b.Version })
	}
	return out, nil
}

// Load reads the whole record of a partial release, as Engine.LoadRecord.
func (m *MemoryRecords) Load(ctx context.Context, r *Release) (*Release, error) {
	if !r.partial {
		return r, nil
	}
	full, err := m.driver(r.Namespace).Get(ctx, recordKey(r.Name, r.Version))
	if err != nil {
		return nil, fmt.Errorf("release %s revision %d in namespace %s: %w", r.Name, r.Version, r.Namespace, err)
	}
	return full, nil
}

// Deployed are namespace's deployed records, as Engine.ListDeployedRecords
// lists them.
func (m *MemoryRecords) Deployed(ctx context.Context, namespace string) (*DeployedRecords, error) {
	d := m.driver(namespace)
	recs, err := d.List(ctx, map[string]string{"owner": "helm", "status": string(StatusDeployed)})
	if err != nil {
		return nil, err
	}
	out := &DeployedRecords{byKey: make(map[string]func() (*Release, error), len(recs))}
	for _, r := range recs {
		out.byKey[recordKey(r.Name, r.Version)] = func() (*Release, error) { return r, nil }
	}
	return out, nil
}

// Labelled are the releases, in every namespace but except, with a record
// whose labels match selector, as Engine.Labelled finds them.
func (m *MemoryRecords) Labelled(ctx context.Context, selector map[string]string, except ...string) ([]RecordKey, error) {
	var out []RecordKey
	for _, ns := range m.namespaces() {
		if slices.Contains(except, ns) {
			continue
		}
		recs, err := m.driver(ns).List(ctx, selector)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			k := RecordKey{Namespace: ns, Name: r.Name}
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out, nil
}

// DeployedRecordOf is the record a successful apply of p leaves, the
// objects the apply returned being live (in p.Objects' order, nil for one
// absent): its status deployed, its fingerprint, its applied state and
// its objects annotation, as Execute writes them. For a cluster held in
// memory (planner/plannertest), which applies without an API server.
func (e *Engine) DeployedRecordOf(p *Prepared, live []*unstructured.Unstructured, now time.Time) *Release {
	rel := p.record(now)
	rel.Info.Status = StatusDeployed
	rel.Info.Description = "Install complete"
	if !p.IsInstall {
		rel.Info.Description = "Upgrade complete"
	}
	refs := make([]kube.Ref, len(p.Objects))
	for i, o := range p.Objects {
		refs[i] = kube.RefOf(o)
	}
	rel.Labels[AppliedLabel] = e.kube.AppliedState(refs, live)
	e.setRecordObjects(rel)
	return rel
}

// EditRecord changes revision of release name in namespace as an update by
// field manager would (kubectl edit as "kubectl-edit", helm-mapkubeapis
// run in place, convoy as RecordFieldManager): edit changes the decoded
// record; its labels, annotations and the rest are kept. The manager
// becomes the writer of the payload, and of the ObjectsAnnotation when
// edit changes it (Release.Rewritten).
func (m *MemoryRecords) EditRecord(namespace, name string, revision int, manager string, edit func(*Release)) error {
	d := m.driver(namespace)
	d.mu.Lock()
	defer d.mu.Unlock()
	key := recordKey(name, revision)
	rec, ok := d.records[key]
	if !ok {
		return fmt.Errorf("release %s revision %d in namespace %s: %w", name, revision, namespace, ErrReleaseNotFound)
	}
	r, err := d.decode(rec)
	if err != nil {
		return err
	}
	edit(r)
	payload, err := encode(r)
	if err != nil {
		return err
	}
	if payload != rec.payload {
		rec.payload, rec.payloadBy = payload, manager
	}
	if r.Annotations[ObjectsAnnotation] != rec.annotations[ObjectsAnnotation] {
		rec.annotations = maps.Clone(r.Annotations)
		rec.objectsBy = manager
	}
	d.version++
	rec.version = strconv.Itoa(d.version)
	d.records[key] = rec
	return nil
}
