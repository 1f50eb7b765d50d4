package planner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// countingStore is a RecordStore over memory records that counts its
// requests and the namespaces Labelled was told to leave out.
type countingStore struct {
	*release.MemoryRecords
	meta, loads, deployed, labelled atomic.Int64
	mu                              sync.Mutex
	except                          []string
}

func (s *countingStore) RecordMeta(_ context.Context, namespace string) ([]metav1.PartialObjectMetadata, error) {
	s.meta.Add(1)
	return s.Meta(namespace), nil
}

func (s *countingStore) HistoriesOfMeta(_ context.Context, namespace string, items []metav1.PartialObjectMetadata) (map[string][]*release.Release, error) {
	return s.MemoryRecords.HistoriesOfMeta(namespace, items)
}

func (s *countingStore) LoadRecord(ctx context.Context, r *release.Release) (*release.Release, error) {
	s.loads.Add(1)
	return s.Load(ctx, r)
}

func (s *countingStore) DeployedRecords(ctx context.Context, namespace string) (*release.DeployedRecords, error) {
	s.deployed.Add(1)
	return s.Deployed(ctx, namespace)
}

func (s *countingStore) Labelled(ctx context.Context, selector map[string]string, except ...string) ([]release.RecordKey, error) {
	s.labelled.Add(1)
	s.mu.Lock()
	s.except = except
	s.mu.Unlock()
	return s.MemoryRecords.Labelled(ctx, selector, except...)
}

// storeOf holds a deployed revision of each release name in namespace ns,
// of stack "shop".
func storeOf(t *testing.T, ns string, names ...string) *countingStore {
	t.Helper()
	s := &countingStore{MemoryRecords: release.NewMemoryRecords()}
	for _, name := range names {
		r := &release.Release{Name: name, Namespace: ns, Version: 1, Info: &release.Info{Status: release.StatusDeployed},
			Labels: map[string]string{release.StackLabel: "shop"}}
		if err := s.Storage(ns).Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestRecordReadsReadEachNamespaceAndRecordOnce(t *testing.T) {
	s := storeOf(t, "shop", "a", "b")
	rr := NewRecordReads(s, Reads{}, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			recs, err := rr.Records(ctx, "shop")
			if err != nil {
				t.Error(err)
				return
			}
			for _, h := range recs {
				if _, err := rr.Whole(ctx, h[0]); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if s.meta.Load() != 1 || s.loads.Load() != 2 || s.deployed.Load() != 0 {
		t.Errorf("%d metadata lists, %d GETs, %d deployed lists; want 1, 2 (one per record) and 0 (none predicted)", s.meta.Load(), s.loads.Load(), s.deployed.Load())
	}
	recs, _ := rr.Records(ctx, "shop")
	if !recs["a"][0].Partial() {
		t.Errorf("records read as metadata are whole")
	}
}

func TestRecordReadsListTheDeployedRecordsWhenPredicted(t *testing.T) {
	for _, tt := range []struct {
		predicted         int
		gets, deployLists int64
	}{{0, 3, 0}, {1, 3, 0}, {2, 0, 1}, {3, 0, 1}} {
		t.Run(fmt.Sprint(tt.predicted), func(t *testing.T) {
			s := storeOf(t, "shop", "a", "b", "c")
			var asked atomic.Int64
			rr := NewRecordReads(s, Reads{WholeReads: func(_ context.Context, ns string) (int, error) {
				asked.Add(1)
				return tt.predicted, nil
			}}, nil)
			ctx := context.Background()
			recs, err := rr.Records(ctx, "shop")
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"a", "b", "c"} {
				full, err := rr.Whole(ctx, recs[name][0])
				if err != nil || full.Partial() || full.Name != name {
					t.Fatalf("%s read whole: %v, %v", name, full, err)
				}
			}
			if s.loads.Load() != tt.gets || s.deployed.Load() != tt.deployLists || asked.Load() != 1 {
				t.Errorf("%d GETs and %d deployed lists after predicting %d times; want %d and %d, predicted once", s.loads.Load(), s.deployed.Load(), asked.Load(), tt.gets, tt.deployLists)
			}
		})
	}
}

func TestRecordReadsFindTheStackInTheNamespacesReadAnyway(t *testing.T) {
	for _, tt := range []struct {
		name       string
		namespaces []string
		except     []string
		metaLists  int64
	}{
		{"none read anyway", nil, nil, 0},
		{"shop read anyway", []string{"shop", "shop"}, []string{"shop"}, 1},
		{"too many to leave out", manyNamespaces(maxListedNamespaces + 1), nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := storeOf(t, "shop", "a")
			if err := s.Storage("back").Create(context.Background(), &release.Release{Name: "api", Namespace: "back", Version: 1,
				Info: &release.Info{Status: release.StatusDeployed}, Labels: map[string]string{release.StackLabel: "shop"}}); err != nil {
				t.Fatal(err)
			}
			rr := NewRecordReads(s, Reads{Namespaces: func(context.Context) ([]string, error) { return tt.namespaces, nil }}, nil)
			got, err := rr.Stack(context.Background(), "shop")
			if err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(got, func(a, b release.RecordKey) int { return cmpKey(a, b) })
			if fmt.Sprint(got) != "[{back api} {shop a}]" {
				t.Errorf("stack's releases %v, want back/api and shop/a", got)
			}
			if _, err := rr.Stack(context.Background(), "shop"); err != nil {
				t.Fatal(err)
			}
			if s.labelled.Load() != 1 || !slices.Equal(s.except, tt.except) || s.meta.Load() != tt.metaLists {
				t.Errorf("%d label lists leaving out %v, %d metadata lists; want 1 leaving out %v, %d", s.labelled.Load(), s.except, s.meta.Load(), tt.except, tt.metaLists)
			}
		})
	}
}

func manyNamespaces(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("ns%03d", i)
	}
	return out
}

func cmpKey(a, b release.RecordKey) int {
	if a.Namespace != b.Namespace {
		if a.Namespace < b.Namespace {
			return -1
		}
		return 1
	}
	if a.Name < b.Name {
		return -1
	}
	if a.Name > b.Name {
		return 1
	}
	return 0
}

// The stack's releases are read with the label's one list and the records
// of each namespace it finds them in, each once: the records of every
// release with one of the stack's records, the newest saying whose it is
// now.
func TestRecordReadsStackReleasesReadEachNamespaceOnce(t *testing.T) {
	ctx := context.Background()
	s := storeOf(t, "shop", "a", "b")
	for _, r := range []*release.Release{
		// b's newest revision is another stack's; c is only the other's.
		{Name: "b", Namespace: "shop", Version: 2, Info: &release.Info{Status: release.StatusDeployed}, Labels: map[string]string{release.StackLabel: "other"}},
		{Name: "c", Namespace: "shop", Version: 1, Info: &release.Info{Status: release.StatusDeployed}, Labels: map[string]string{release.StackLabel: "other"}},
		{Name: "api", Namespace: "back", Version: 1, Info: &release.Info{Status: release.StatusUninstalled}, Labels: map[string]string{release.StackLabel: "shop"}},
	} {
		if err := s.Storage(r.Namespace).Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	rr := NewRecordReads(s, Reads{}, nil)
	got, err := rr.StackReleases(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	var newest []string
	for _, k := range slices.SortedFunc(maps.Keys(got), cmpKey) {
		h := got[k]
		last := h[len(h)-1]
		newest = append(newest, fmt.Sprintf("%s/%s:%d records, newest %d %s of %s", k.Namespace, k.Name, len(h), last.Version, last.Info.Status, last.Labels[release.StackLabel]))
	}
	want := []string{"back/api:1 records, newest 1 uninstalled of shop", "shop/a:1 records, newest 1 deployed of shop", "shop/b:2 records, newest 2 deployed of other"}
	if !slices.Equal(newest, want) {
		t.Errorf("stack's releases:\n%s\nwant:\n%s", strings.Join(newest, "\n"), strings.Join(want, "\n"))
	}
	if _, err := rr.StackReleases(ctx, "shop"); err != nil {
		t.Fatal(err)
	}
	if _, err := rr.Records(ctx, "shop"); err != nil {
		t.Fatal(err)
	}
	if s.labelled.Load() != 1 || s.meta.Load() != 2 || s.loads.Load() != 0 {
		t.Errorf("%d label lists, %d metadata lists, %d GETs; want 1, 2 (shop and back, once each), 0", s.labelled.Load(), s.meta.Load(), s.loads.Load())
	}
}
