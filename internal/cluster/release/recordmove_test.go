package release_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
)

// moveFixture is a release of three revisions written in one driver, and
// what each revision must read as wherever it is moved.
type moveFixture struct {
	name string
	// want are the revisions' release JSON and custom labels, by version.
	want map[int]string
}

var errKilled = errors.New("killed")

// writeThreeRevisions writes release name's revisions 1–3 (superseded,
// superseded, deployed) with convoy's labels and annotations to s.
func writeThreeRevisions(t *testing.T, s *release.Storage, ns, name string) *moveFixture {
	t.Helper()
	f := &moveFixture{name: name, want: map[int]string{}}
	for v := 1; v <= 3; v++ {
		st := release.StatusSuperseded
		if v == 3 {
			st = release.StatusDeployed
		}
		r := &release.Release{Name: name, Namespace: ns, Version: v, Manifest: fmt.Sprintf("kind: ConfigMap\nrev: %d\n", v),
			Config: map[string]any{"rev": v},
			Info:   &release.Info{Status: st, Description: fmt.Sprintf("Upgrade %d complete", v), LastDeployed: time.Unix(1700000000+int64(v), 0).UTC()},
			Labels: map[string]string{release.StackLabel: "shop", release.FingerprintLabel: fmt.Sprintf("fp%d", v)}, Annotations: map[string]string{release.ObjectsAnnotation: fmt.Sprintf(`["v1/ConfigMap/%d"]`, v)}}
		if err := s.Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		f.want[v] = recordText(r)
	}
	return f
}

// recordText is what a revision must read as: its release JSON, labels
// (but the times) and annotations.
func recordText(r *release.Release) string {
	b, _ := json.Marshal(r)
	l := maps.Clone(r.Labels)
	delete(l, "createdAt")
	delete(l, "modifiedAt")
	lb, _ := json.Marshal(l)
	ab, _ := json.Marshal(r.Annotations)
	return fmt.Sprintf("%s\nlabels %s\nannotations %s", b, lb, ab)
}

// holds fails unless s holds exactly f's revisions, unmarked.
func (f *moveFixture) holds(t *testing.T, s *release.Storage, where string) {
	t.Helper()
	f.holdsMarked(t, s, where, false)
}

// holdsMarked is holds, the labels of a move allowed when marked.
func (f *moveFixture) holdsMarked(t *testing.T, s *release.Storage, where string, marked bool) {
	t.Helper()
	h, err := s.History(context.Background(), f.name)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != len(f.want) {
		t.Fatalf("%s holds %d revisions of %s, want %d", where, len(h), f.name, len(f.want))
	}
	for _, r := range h {
		if marked {
			for _, l := range []string{release.MovingFromLabel, release.MovedToLabel, release.MoveCommittedLabel} {
				delete(r.Labels, l)
			}
		}
		if got := recordText(r); got != f.want[r.Version] {
			t.Fatalf("%s: revision %d reads\n%s\nwant\n%s", where, r.Version, got, f.want[r.Version])
		}
	}
}

func countRecords(t *testing.T, s *release.Storage, name string) int {
	t.Helper()
	h, err := s.History(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return len(h)
}

// TestMoveRecordsBetweenDrivers: three revisions move from Secrets to
// PostgreSQL, to ConfigMaps and back to Secrets; each move leaves the
// revisions as they were (release JSON, labels, annotations), unmarked,
// and nothing in the driver they left.
func TestMoveRecordsBetweenDrivers(t *testing.T) {
	ns := cluster.Namespace(t)
	pg := cluster.Postgres(t)
	_, conn := pg.CreateDatabase(t)
	ctx := context.Background()
	db, err := release.OpenSQL(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e, _ := newEngine(t)
	stores := map[release.StorageDriver]*release.Storage{
		release.DriverSecret:    {Driver: release.NewKubeDriver(cluster.Client(), release.DriverSecret, ns)},
		release.DriverConfigMap: {Driver: release.NewKubeDriver(cluster.Client(), release.DriverConfigMap, ns)},
		release.DriverSQL:       {Driver: db.Driver(ns)},
	}
	f := writeThreeRevisions(t, stores[release.DriverSecret], ns, "web")
	path := []release.StorageDriver{release.DriverSecret, release.DriverSQL, release.DriverConfigMap, release.DriverSecret}
	for i := 1; i < len(path); i++ {
		from, to := path[i-1], path[i]
		m, err := e.MoveRecords(ctx, release.MoveRequest{Name: "web", Namespace: ns, From: from, To: to, SQL: db})
		if err != nil {
			t.Fatalf("%s → %s: %v", from, to, err)
		}
		if m.Outcome != release.MoveDone || len(m.Revisions) != 3 || len(m.Revisions[0].SHA256) != 64 {
			t.Fatalf("%s → %s: %+v", from, to, m)
		}
		f.holds(t, stores[to], to.String())
		if n := countRecords(t, stores[from], "web"); n != 0 {
			t.Fatalf("%s → %s: %d records left in %s", from, to, n, from)
		}
	}
	// Once more: the records are where they are asked to go already.
	if m, err := e.MoveRecords(ctx, release.MoveRequest{Name: "web", Namespace: ns, From: release.DriverSQL, To: release.DriverSecret, SQL: db}); err != nil || m.Outcome != release.MoveAlready {
		t.Fatalf("a move to where the records are: %+v %v", m, err)
	}
}

// TestMoveRecordsKilledAtEveryWrite: a move from Secrets to PostgreSQL is
// killed after each of its writes in turn. At every point the release has
// one history that is whole (the Secrets' before the commit, the copies'
// after), an operation that would write a revision on either driver is
// refused while the move is unfinished, and the next move finishes it
// (or, the other way, undoes or finishes it): the records end in one
// driver, as they were, unmarked.
func TestMoveRecordsKilledAtEveryWrite(t *testing.T) {
	ns := cluster.Namespace(t)
	pg := cluster.Postgres(t)
	_, conn := pg.CreateDatabase(t)
	ctx := context.Background()
	db, err := release.OpenSQL(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e, _ := newEngine(t)
	secrets := &release.Storage{Driver: release.NewKubeDriver(cluster.Client(), release.DriverSecret, ns)}
	records := &release.Storage{Driver: db.Driver(ns)}
	stores := map[release.StorageDriver]*release.Storage{release.DriverSecret: secrets, release.DriverSQL: records}

	// The writes of an uninterrupted move.
	f := writeThreeRevisions(t, secrets, ns, "count")
	var writes []string
	if _, err := e.MoveRecords(ctx, release.MoveRequest{Name: "count", Namespace: ns, From: release.DriverSecret, To: release.DriverSQL, SQL: db,
		AfterWrite: func(w string) error { writes = append(writes, w); return nil }}); err != nil {
		t.Fatal(err)
	}
	f.holds(t, records, "sql")
	// 3 copies, the source marked, the commit, 3 deletions, 3 unmarks.
	if len(writes) != 11 {
		t.Fatalf("%d writes:\n%s", len(writes), strings.Join(writes, "\n"))
	}

	for k := 1; k <= len(writes); k++ {
		for _, back := range []bool{false, true} {
			name := fmt.Sprintf("k%d", k)
			if back {
				name += "-back"
			}
			t.Run(name, func(t *testing.T) {
				f := writeThreeRevisions(t, secrets, ns, name)
				n := 0
				_, err := e.MoveRecords(ctx, release.MoveRequest{Name: name, Namespace: ns, From: release.DriverSecret, To: release.DriverSQL, SQL: db,
					AfterWrite: func(string) error {
						if n++; n == k {
							return errKilled
						}
						return nil
					}})
				if k < len(writes) && !errors.Is(err, errKilled) {
					t.Fatalf("killed after write %d (%s): %v", k, writes[k-1], err)
				}
				committed := k >= 5 // the commit is the 5th write
				if k < len(writes) {
					// One whole history, and no revision written on either
					// driver while the move is unfinished.
					if !committed {
						f.holdsMarked(t, secrets, "the secrets before the commit", true)
					} else {
						f.holdsMarked(t, records, "the copies after the commit", true)
					}
					for d, s := range stores {
						if countRecords(t, s, name) == 0 {
							continue
						}
						eng := e.Rebind(release.EngineOptions{Driver: d, SQL: db})
						_, err := eng.Prepare(ctx, appRequest(t, ns, name, nil))
						if k > 3 || d == release.DriverSQL {
							if err == nil || !strings.Contains(err.Error(), "did not finish") {
								t.Fatalf("a revision prepared on %s during an unfinished move: %v", d, err)
							}
						}
					}
				}
				// The next run.
				from, to, final, empty := release.DriverSecret, release.DriverSQL, records, secrets
				if back {
					from, to, final, empty = release.DriverSQL, release.DriverSecret, secrets, records
				}
				m, err := e.MoveRecords(ctx, release.MoveRequest{Name: name, Namespace: ns, From: from, To: to, SQL: db})
				if err != nil {
					t.Fatalf("the next run: %v", err)
				}
				f.holds(t, final, to.String())
				if n := countRecords(t, empty, name); n != 0 {
					t.Fatalf("%d records left in %s", n, from)
				}
				t.Logf("killed after %q; the next run (%s → %s): %s %s", writes[k-1], from, to, m.Outcome, strings.Join(m.Resumed, "; "))
			})
		}
	}
}
