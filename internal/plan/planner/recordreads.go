package planner

import (
	"context"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/memo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RecordStore is how a cluster's release records are read, one request
// each: the release engine's reads (the real view) or records held in
// memory (planner/plannertest). RecordReads chooses which to make.
type RecordStore interface {
	// Histories are the records of a namespace by release name, oldest
	// first, the newest and the newest deployed record of each whole
	// (release.Engine.Histories): one list of the records whole.
	Histories(ctx context.Context, namespace string) (map[string][]*release.Release, error)
	// RecordMeta is the metadata of a namespace's records
	// (release.Engine.ListRecordMeta).
	RecordMeta(ctx context.Context, namespace string) ([]metav1.PartialObjectMetadata, error)
	// HistoriesOfMeta are Histories from the records' metadata, every
	// record partial (release.Engine.HistoriesOfMeta).
	HistoriesOfMeta(ctx context.Context, namespace string, items []metav1.PartialObjectMetadata) (map[string][]*release.Release, error)
	// LoadRecord reads a partial record whole (a GET).
	LoadRecord(ctx context.Context, r *release.Release) (*release.Release, error)
	// DeployedRecords are the deployed records of a namespace, read with
	// one list.
	DeployedRecords(ctx context.Context, namespace string) (*release.DeployedRecords, error)
	// Labelled are the releases, across namespaces but except, with a
	// record whose labels match selector (release.Engine.Labelled).
	Labelled(ctx context.Context, selector map[string]string, except ...string) ([]release.RecordKey, error)
}

// Reads is what a plan tells the view of a cluster about how it will read
// it (Input.View), so that the view chooses its requests.
type Reads struct {
	// WholeRecords: the plan reads every release's records whole (a full
	// refresh, a plan that observes content): one list of a namespace's
	// records whole beats a GET per release. Otherwise records are read
	// as their metadata tells them (release.Release.Partial), and whole
	// when the plan asks (ClusterView.Whole).
	WholeRecords bool
	// WholeReads predicts how many of the deployed records of a namespace
	// the plan will ask whole (records.go): a pure function of the stack,
	// the records' metadata and the plan's inputs. Nil: none predicted.
	WholeReads func(ctx context.Context, namespace string) (int, error)
	// AppliedLists: the plan reads what convoy applied of the objects of
	// the releases it proves unchanged (ClusterView.Applied), those of
	// the deployed records of Declared releases: the view may start
	// reading them as soon as their records are read.
	AppliedLists bool
	// Declared says whether the stack declares a release name in
	// namespace.
	Declared func(namespace, name string) bool
	// Namespaces are the namespaces of the cluster whose records the plan
	// reads (Records) whatever it finds: those the stack declares there
	// when the plan plans all its releases. Nil: none known.
	Namespaces func(ctx context.Context) ([]string, error)
	// Live says how releases planned in full read their live objects.
	Live LiveReads
	// Do runs a request holding one slot of the plan's pool (nil: at
	// once).
	Do func(ctx context.Context, f func() error) error
	// Stats count the plan's requests (nil: not counted).
	Stats *Stats
}

func (r *Reads) do(ctx context.Context, f func() error) error {
	if r.Do == nil {
		return f()
	}
	return r.Do(ctx, f)
}

// count adds one to the counter field names of the plan's stats.
func (r *Reads) count(field func(*Stats) *atomic.Int64) {
	if r.Stats != nil {
		r.Stats.add(field(r.Stats), 1)
	}
}

func recordLists(s *Stats) *atomic.Int64 { return &s.RecordLists }
func recordReads(s *Stats) *atomic.Int64 { return &s.RecordReads }

// RecordReads reads a cluster's release records for one plan, each once:
// the records of a namespace (RecordReads.Records), and records whole
// (RecordReads.Whole), from one list of a namespace's deployed records
// when the plan reads many of them (readByList), else with a GET each.
// The real view and planner/plannertest share it, so that what a plan
// requests is unit-tested.
type RecordReads struct {
	store RecordStore
	reads Reads
	// read, when not nil, is told each namespace's records once read.
	read func(ctx context.Context, namespace string, recs map[string][]*release.Release)

	histories memo.Map[string, map[string][]*release.Release] // by namespace
	records   memo.Map[revisionName, *release.Release]        // read whole
	// byList says per namespace whether its deployed records are read
	// with one list (listed) rather than a GET each.
	byList memo.Map[string, bool]
	listed memo.Map[string, *release.DeployedRecords]
	// stacks are the releases with a record of a stack, by stack.
	stacks memo.Map[string, []release.RecordKey]
}

// revisionName is a revision of a release of a namespace.
type revisionName struct {
	namespace, name string
	revision        int
}

// NewRecordReads reads store for a plan that reads as reads says; read,
// when not nil, is told each namespace's records once they are read.
func NewRecordReads(store RecordStore, reads Reads, read func(ctx context.Context, namespace string, recs map[string][]*release.Release)) *RecordReads {
	return &RecordReads{store: store, reads: reads, read: read}
}

// Records are the records of a namespace by release name, oldest first,
// read once per plan: with one list of them whole (Reads.WholeRecords),
// else partial from one list of their metadata.
func (rr *RecordReads) Records(ctx context.Context, namespace string) (map[string][]*release.Release, error) {
	return rr.histories.Get(namespace, func() (map[string][]*release.Release, error) {
		var recs map[string][]*release.Release
		err := rr.reads.do(ctx, func() error {
			if rr.reads.WholeRecords {
				var err error
				recs, err = rr.store.Histories(ctx, namespace)
				rr.reads.count(recordLists)
				return err
			}
			items, err := rr.store.RecordMeta(ctx, namespace)
			if err != nil {
				return err
			}
			rr.reads.count(recordLists)
			recs, err = rr.store.HistoriesOfMeta(ctx, namespace, items)
			return err
		})
		if err == nil && rr.read != nil {
			rr.read(ctx, namespace, recs)
		}
		return recs, err
	})
}

// Whole reads the whole record of a partial release (r itself when
// whole), once per plan: a deployed record from the list of its
// namespace's deployed records when the plan reads them by list, else
// with a GET.
func (rr *RecordReads) Whole(ctx context.Context, r *release.Release) (*release.Release, error) {
	if !r.Partial() {
		return r, nil
	}
	return rr.records.Get(revisionName{r.Namespace, r.Name, r.Version}, func() (*release.Release, error) {
		if r.Info.Status == release.StatusDeployed {
			if full, ok, err := rr.listedRecord(ctx, r); ok || err != nil {
				return full, err
			}
		}
		var full *release.Release
		err := rr.reads.do(ctx, func() error {
			var err error
			full, err = rr.store.LoadRecord(ctx, r)
			return err
		})
		if err == nil {
			rr.reads.count(recordReads)
		}
		return full, err
	})
}

// Records read by list (issue 26). A plan reads the deployed records of a
// namespace with one list (release.Engine.ListDeployedRecords) instead of
// a GET each when it predicts that it reads at least listRecordsMin of
// them whole, and at least 1/listRecordsShare of the namespace's deployed
// records. A list carries every deployed record of the namespace (each
// holds its chart), a GET one: measured on the devcluster with records of
// about 8 KB, a GET costs about 1.3 ms and a list about 1 ms plus 0.3 ms
// per record it carries, so a list pays once it replaces a quarter of the
// records it carries; one record needed is one GET whatever the
// namespace holds. The prediction (Reads.WholeReads) is a pure function
// of the stack, the records' metadata and the plan's inputs, so the
// choice does not depend on the order releases are planned in; a record
// it misses (of a release whose live objects drifted, say) is still read,
// from the list when its namespace was listed, else with a GET. What the
// plan holds does not depend on the choice: both read the same objects
// and decode them the same way. docs/performance.md has the measurement.
const (
	listRecordsMin   = 2
	listRecordsShare = 4
)

// readByList is the rule: list a namespace's deployed records when the
// plan reads needed of the deployed records it holds whole.
func readByList(needed, deployed int) bool {
	return needed >= listRecordsMin && needed*listRecordsShare >= deployed
}

// listedRecord is r's whole record from the list of its namespace's
// deployed records, when the plan reads that namespace's records by list
// (false otherwise, or when the list does not hold r).
func (rr *RecordReads) listedRecord(ctx context.Context, r *release.Release) (*release.Release, bool, error) {
	byList, err := rr.byList.Get(r.Namespace, func() (bool, error) {
		if rr.reads.WholeReads == nil {
			return false, nil
		}
		hists, err := rr.Records(ctx, r.Namespace)
		if err != nil {
			return false, err
		}
		deployed := 0
		for _, h := range hists {
			for _, r := range h {
				if r.Info.Status == release.StatusDeployed {
					deployed++
				}
			}
		}
		needed, err := rr.reads.WholeReads(ctx, r.Namespace)
		return readByList(needed, deployed), err
	})
	if err != nil || !byList {
		return nil, false, err
	}
	listed, err := rr.listed.Get(r.Namespace, func() (*release.DeployedRecords, error) {
		var l *release.DeployedRecords
		err := rr.reads.do(ctx, func() error {
			var err error
			l, err = rr.store.DeployedRecords(ctx, r.Namespace)
			return err
		})
		if err == nil {
			// A list that replaces GETs counts as a record list.
			rr.reads.count(recordLists)
		}
		return l, err
	})
	if err != nil {
		return nil, false, err
	}
	return listed.Load(r)
}

// Stack is the releases with a record of stack (release.StackLabel) on
// the cluster, read once per plan: from the records of the namespaces the
// plan reads anyway (Reads.Namespaces), and one list of the label's
// records' metadata for the other namespaces, so that a no-change plan
// does not read every record's metadata twice.
func (rr *RecordReads) Stack(ctx context.Context, stack string) ([]release.RecordKey, error) {
	return rr.stacks.Get(stack, func() ([]release.RecordKey, error) {
		var listed []string
		if rr.reads.Namespaces != nil {
			var err error
			if listed, err = rr.reads.Namespaces(ctx); err != nil {
				return nil, err
			}
			listed = slices.Compact(slices.Sorted(slices.Values(listed)))
			if len(listed) > maxListedNamespaces {
				listed = nil
			}
		}
		var recs []release.RecordKey
		err := rr.reads.do(ctx, func() error {
			var err error
			recs, err = rr.store.Labelled(ctx, map[string]string{"owner": "helm", release.StackLabel: stack}, listed...)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, ns := range listed {
			hists, err := rr.Records(ctx, ns)
			if err != nil {
				return nil, err
			}
			for _, name := range slices.Sorted(maps.Keys(hists)) {
				if slices.ContainsFunc(hists[name], func(r *release.Release) bool { return r.Labels[release.StackLabel] == stack }) {
					recs = append(recs, release.RecordKey{Namespace: ns, Name: name})
				}
			}
		}
		return recs, nil
	})
}

// StackReleases are the records of each release with a record of stack
// on the cluster (Stack), oldest first, as the records of its namespace
// hold them (Records: partial unless the plan reads records whole): the
// newest of each says whose the release is now, at which address, in
// which status. Each namespace is read once per plan, as Records reads
// it; a release gone since the label's list is left out.
func (rr *RecordReads) StackReleases(ctx context.Context, stack string) (map[release.RecordKey][]*release.Release, error) {
	keys, err := rr.Stack(ctx, stack)
	if err != nil {
		return nil, err
	}
	out := make(map[release.RecordKey][]*release.Release, len(keys))
	for _, k := range keys {
		hists, err := rr.Records(ctx, k.Namespace)
		if err != nil {
			return nil, err
		}
		if h := hists[k.Name]; len(h) > 0 {
			out[k] = h
		}
	}
	return out, nil
}

// maxListedNamespaces bounds the namespaces Stack leaves out of the
// label's list by field selector (about 40 bytes of URL each); a stack
// declaring more lists its label everywhere.
const maxListedNamespaces = 100
