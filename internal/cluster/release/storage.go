package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Storage errors.
var (
	ErrReleaseNotFound = errors.New("release: not found")
	ErrReleaseExists   = errors.New("release: already exists")
	ErrNoDeployed      = errors.New("release: no deployed revision")
	// ErrRecordChanged is an update refused because the record changed
	// since it was read (its resourceVersion): another operation wrote it.
	ErrRecordChanged = errors.New("release: the record changed since it was read")
)

// systemLabels are the labels the storage owns on every record object.
var systemLabels = []string{"name", "owner", "status", "version", "createdAt", "modifiedAt"}

// Driver stores release records. Drivers do no interpretation: keys are
// record names and selectors are label equality matches.
type Driver interface {
	Name() string
	Get(ctx context.Context, key string) (*Release, error)
	// List returns the records whose labels carry every selector pair.
	List(ctx context.Context, selector map[string]string) ([]*Release, error)
	// Create writes a new record; ErrReleaseExists when it exists.
	Create(ctx context.Context, key string, r *Release) error
	// Update rewrites the record r was read as (or created as), on the
	// condition that nobody wrote it since: otherwise it fails with
	// ErrRecordChanged, naming the record. A successful write makes r
	// the record as written (the next update's condition).
	Update(ctx context.Context, key string, r *Release) error
	Delete(ctx context.Context, key string) error
}

// recordWrite is how a record object is written.
type recordWrite int

const (
	recordCreate recordWrite = iota // a new record: createdAt is now
	recordUpdate                    // a rewrite: createdAt kept, modifiedAt is now
)

// recordLabels computes the labels of a record object: the release's custom
// labels, then the system labels (which always win).
func recordLabels(r *Release, now time.Time, w recordWrite) map[string]string {
	l := make(map[string]string, len(r.Labels)+6)
	for k, v := range r.Labels {
		if !slices.Contains(systemLabels, k) {
			l[k] = v
		}
	}
	l["name"] = r.Name
	l["owner"] = "helm"
	l["status"] = string(r.Info.Status)
	l["version"] = strconv.Itoa(r.Version)
	ts := strconv.FormatInt(now.Unix(), 10)
	if w == recordUpdate {
		if r.createdAt != "" {
			l["createdAt"] = r.createdAt
		}
		l["modifiedAt"] = ts
	} else {
		l["createdAt"] = ts
	}
	return l
}

// fromObjectLabels fills the release's labels from its record object.
func (r *Release) fromObjectLabels(labels map[string]string) {
	r.Labels = map[string]string{}
	for k, v := range labels {
		if !slices.Contains(systemLabels, k) {
			r.Labels[k] = v
		}
	}
	r.createdAt = labels["createdAt"]
}

// Storage is the release history of one namespace (or of all namespaces,
// for listing) on top of a Driver.
type Storage struct {
	Driver Driver
}

// Get returns one revision.
func (s *Storage) Get(ctx context.Context, name string, revision int) (*Release, error) {
	r, err := s.Driver.Get(ctx, recordKey(name, revision))
	if errors.Is(err, ErrReleaseNotFound) {
		return nil, fmt.Errorf("release %s revision %d: %w", name, revision, ErrReleaseNotFound)
	}
	return r, err
}

// History returns every revision of a release, oldest first.
func (s *Storage) History(ctx context.Context, name string) ([]*Release, error) {
	rs, err := s.Driver.List(ctx, map[string]string{"name": name, "owner": "helm"})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(rs, func(a, b *Release) int { return a.Version - b.Version })
	return rs, nil
}

// settledHistory is the history of a release an operation may act on: it
// fails with ErrReleaseNotFound when there is none, and with a
// *PendingError when the newest revision is held by another operation.
func settledHistory(ctx context.Context, s *Storage, name, namespace string) ([]*Release, error) {
	h, err := s.History(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(h) == 0 {
		return nil, fmt.Errorf("release %s in namespace %s: %w", name, namespace, ErrReleaseNotFound)
	}
	if last := h[len(h)-1]; last.Info.Status.IsPending() {
		return nil, pendingError(last)
	}
	if err := movingError(h[len(h)-1]); err != nil {
		return nil, err
	}
	return h, nil
}

// Last returns the newest revision, whatever its status.
func (s *Storage) Last(ctx context.Context, name string) (*Release, error) {
	h, err := s.History(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(h) == 0 {
		return nil, fmt.Errorf("release %s: %w", name, ErrReleaseNotFound)
	}
	return h[len(h)-1], nil
}

// Deployed returns the newest deployed revision.
func (s *Storage) Deployed(ctx context.Context, name string) (*Release, error) {
	h, err := s.History(ctx, name)
	if err != nil {
		return nil, err
	}
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Info.Status == StatusDeployed {
			return h[i], nil
		}
	}
	return nil, fmt.Errorf("release %s: %w", name, ErrNoDeployed)
}

// Create writes a new revision; ErrReleaseExists if that revision exists
// (another process got there first).
func (s *Storage) Create(ctx context.Context, r *Release) error {
	if err := checkFence(ctx); err != nil {
		return err
	}
	return s.Driver.Create(ctx, recordKey(r.Name, r.Version), r)
}

// Update rewrites an existing revision (its status, description, hooks).
func (s *Storage) Update(ctx context.Context, r *Release) error {
	if err := checkFence(ctx); err != nil {
		return err
	}
	return s.Driver.Update(ctx, recordKey(r.Name, r.Version), r)
}

// Delete removes one revision's record.
func (s *Storage) Delete(ctx context.Context, name string, revision int) error {
	if err := checkFence(ctx); err != nil {
		return err
	}
	return s.Driver.Delete(ctx, recordKey(name, revision))
}

// Prune deletes the oldest revisions so at most max remain, never the
// newest deployed one (as Helm's --history-max). max <= 0 keeps everything.
func (s *Storage) Prune(ctx context.Context, name string, max int) error {
	if max <= 0 {
		return nil
	}
	h, err := s.History(ctx, name)
	if err != nil || len(h) <= max {
		return err
	}
	keep := -1
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Info.Status == StatusDeployed {
			keep = h[i].Version
			break
		}
	}
	excess := len(h) - max
	for _, r := range h {
		if excess == 0 {
			break
		}
		if r.Version == keep {
			continue
		}
		if err := s.Delete(ctx, name, r.Version); err != nil && !errors.Is(err, ErrReleaseNotFound) {
			return fmt.Errorf("prune release %s revision %d: %w", name, r.Version, err)
		}
		excess--
	}
	return nil
}

// Memory is an in-memory Driver for unit tests, safe for concurrent use.
type Memory struct {
	mu      sync.Mutex
	records map[string]memRecord
	// version is the last resourceVersion given a record.
	version int
}

type memRecord struct {
	payload     string
	labels      map[string]string
	annotations map[string]string
	version     string
	// payloadBy and objectsBy are the field managers that last wrote the
	// payload and the ObjectsAnnotation, as the API server's
	// managedFields say (managedFields).
	payloadBy, objectsBy string
}

// managedFields are the entries the API server would keep of who wrote
// the record's payload and its objects annotation.
func (rec memRecord) managedFields() []metav1.ManagedFieldsEntry {
	owned := map[string]map[string]any{}
	own := func(manager, key string, fields map[string]any) {
		if owned[manager] == nil {
			owned[manager] = map[string]any{}
		}
		owned[manager][key] = fields
	}
	own(rec.payloadBy, "f:data", map[string]any{"f:release": map[string]any{}})
	if _, ok := rec.annotations[ObjectsAnnotation]; ok {
		own(rec.objectsBy, "f:metadata", map[string]any{"f:annotations": map[string]any{"f:" + ObjectsAnnotation: map[string]any{}}})
	}
	var out []metav1.ManagedFieldsEntry
	for _, m := range slices.Sorted(maps.Keys(owned)) {
		raw, _ := json.Marshal(owned[m])
		out = append(out, metav1.ManagedFieldsEntry{Manager: m, Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}})
	}
	return out
}

// NewMemory returns an empty in-memory driver.
func NewMemory() *Memory { return &Memory{records: map[string]memRecord{}} }

// Name implements Driver.
func (m *Memory) Name() string { return "memory" }

func (m *Memory) decode(rec memRecord) (*Release, error) {
	r, err := decode(rec.payload)
	if err != nil {
		return nil, err
	}
	r.fromObjectLabels(rec.labels)
	r.Annotations = maps.Clone(rec.annotations)
	r.resourceVersion = rec.version
	r.rewritten = payloadRewritten(rec.managedFields())
	return r, nil
}

// Get implements Driver.
func (m *Memory) Get(_ context.Context, key string) (*Release, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec, ok := m.records[key]
	if !ok {
		return nil, ErrReleaseNotFound
	}
	return m.decode(rec)
}

// payload implements payloadReader.
func (m *Memory) payload(_ context.Context, key string) (string, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec, ok := m.records[key]
	if !ok {
		return "", "", ErrReleaseNotFound
	}
	return rec.payload, rec.version, nil
}

// List implements Driver.
func (m *Memory) List(_ context.Context, selector map[string]string) ([]*Release, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Release
	for _, key := range slices.Sorted(maps.Keys(m.records)) {
		rec := m.records[key]
		if !matches(rec.labels, selector) {
			continue
		}
		r, err := m.decode(rec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func matches(labels, selector map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func (m *Memory) put(key string, r *Release, w recordWrite) error {
	payload, err := r.encoded()
	if err != nil {
		return err
	}
	m.version++
	rec := memRecord{payload: payload, labels: recordLabels(r, time.Now(), w), annotations: maps.Clone(r.Annotations), version: strconv.Itoa(m.version),
		payloadBy: RecordFieldManager, objectsBy: RecordFieldManager}
	if old, ok := m.records[key]; ok && old.annotations[ObjectsAnnotation] == rec.annotations[ObjectsAnnotation] {
		rec.objectsBy = old.objectsBy // unchanged: its writer keeps it
	}
	m.records[key] = rec
	r.resourceVersion = rec.version
	return nil
}

// Create implements Driver.
func (m *Memory) Create(_ context.Context, key string, r *Release) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.records[key]; ok {
		return ErrReleaseExists
	}
	return m.put(key, r, recordCreate)
}

// Update implements Driver.
func (m *Memory) Update(_ context.Context, key string, r *Release) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec, ok := m.records[key]
	if !ok {
		return ErrReleaseNotFound
	}
	if r.resourceVersion != rec.version {
		return fmt.Errorf("record %s: %w (read at resourceVersion %q, now %s)", key, ErrRecordChanged, r.resourceVersion, rec.version)
	}
	return m.put(key, r, recordUpdate)
}

// Delete implements Driver.
func (m *Memory) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.records[key]; !ok {
		return ErrReleaseNotFound
	}
	delete(m.records, key)
	return nil
}
