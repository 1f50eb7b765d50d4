package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Moving a release's records from one driver to another (`convoy records
// migrate --to`), resumable after a kill at any point. The copies are
// marked until the move is over, and one write commits it:
//
//  1. copy: each revision is written to the destination as stored (the
//     payload's very bytes, its labels and annotations), marked
//     MovingFromLabel=<source driver>;
//  2. verify: each copy is read back and compared with its source: the
//     payload's SHA-256, the decoded release, the labels and annotations;
//  3. the source's newest record is marked MovedToLabel=<destination>,
//     so that no operation on the source driver writes the release again;
//  4. commit: the newest copy is marked MoveCommittedLabel. Before this
//     write the source holds the release; from it on, the copies do;
//  5. the source's records are deleted, oldest first, newest last;
//  6. the copies' marks are taken off, the committed one last.
//
// A move killed before its commit leaves the source whole: the next move
// the same way checks the copies there and goes on; a move the other way
// takes the uncommitted copies away (rolls it back). A move killed after
// its commit is finished by the next move either way: the source's
// remaining records deleted, the marks taken off. Releases whose newest
// record is marked (steps 1–6 not done) are refused by every operation
// that would write a revision (observeHistory, settledHistory), so the
// two copies never diverge.

// Labels of a move between drivers.
const (
	// MovingFromLabel marks a copy written by a move that is not over,
	// with the driver it was copied from (secret, configmap, sql).
	MovingFromLabel = "convoy.dev/moving-from"
	// MoveCommittedLabel marks the newest copy once every copy was
	// verified: the copies are then the release's records.
	MoveCommittedLabel = "convoy.dev/move-committed"
	// MovedToLabel marks the source's newest record once its copies were
	// verified, with the driver they are in.
	MovedToLabel = "convoy.dev/moved-to"
)

// MoveRequest says which release's records to move, from which driver to
// which.
type MoveRequest struct {
	Name, Namespace string
	From, To        StorageDriver
	// SQL is the database when From or To is DriverSQL.
	SQL *SQLRecords
	// Stack, when not "", is the stack moving them: a release whose
	// newest record another stack wrote is refused.
	Stack string
	// AfterWrite, when not nil, is told of each write of the move as it
	// is done; an error stops the move right there, as a kill would (no
	// step after it runs): the tests' seam for an interrupted move.
	AfterWrite func(write string) error
}

// MoveOutcome is what a move did.
type MoveOutcome string

// Outcomes of a move.
const (
	// MoveDone: the records were copied, verified, and the source's
	// removed.
	MoveDone MoveOutcome = "moved"
	// MoveFinished: a move interrupted after its commit was finished.
	MoveFinished MoveOutcome = "finished"
	// MoveAlready: the records are in the destination already.
	MoveAlready MoveOutcome = "already"
	// MoveNothing: the release has no records in the source.
	MoveNothing MoveOutcome = "nothing"
)

// Move is what MoveRecords did.
type Move struct {
	Name, Namespace string
	From, To        StorageDriver
	Outcome         MoveOutcome
	// Revisions are the revisions moved, each verified.
	Revisions []MovedRevision
	// Resumed says what earlier, interrupted moves had left and what
	// this one did of it, one sentence each.
	Resumed []string
}

// MovedRevision is one revision moved.
type MovedRevision struct {
	Version int
	Status  Status
	// SHA256 is the checksum of the release JSON the payload holds,
	// equal in the source and the copy.
	SHA256 string
	// Bytes is the payload's size.
	Bytes int
}

// storeOf is the records of namespace in driver d.
func (e *Engine) storeOf(d StorageDriver, db *SQLRecords, namespace string) (recordStore, error) {
	if d == DriverSQL {
		if db == nil {
			return nil, errors.New("sql storage: no database given")
		}
		return db.Driver(namespace).(recordStore), nil
	}
	return NewKubeDriver(e.client, d, namespace).(recordStore), nil
}

// mover runs one MoveRequest.
type mover struct {
	req      MoveRequest
	src, dst recordStore
	move     *Move
}

func (m *mover) wrote(ctx context.Context, what string) error {
	if m.req.AfterWrite != nil {
		return m.req.AfterWrite(what)
	}
	return ctx.Err()
}

// MoveRecords moves every revision of a release from req.From to req.To
// (see the top of this file), finishing or undoing first what an earlier,
// interrupted move of them left. Each write is fenced (WithFence): a move
// that lost the stack lock stops.
func (e *Engine) MoveRecords(ctx context.Context, req MoveRequest) (*Move, error) {
	if req.From == req.To {
		return nil, fmt.Errorf("release %s (namespace %s): its records are in %s already", req.Name, req.Namespace, req.To)
	}
	src, err := e.storeOf(req.From, req.SQL, req.Namespace)
	if err != nil {
		return nil, err
	}
	dst, err := e.storeOf(req.To, req.SQL, req.Namespace)
	if err != nil {
		return nil, err
	}
	m := &mover{req: req, src: src, dst: dst, move: &Move{Name: req.Name, Namespace: req.Namespace, From: req.From, To: req.To}}
	return m.move, m.run(ctx)
}

func (m *mover) run(ctx context.Context) error {
	name, from, to := m.req.Name, m.req.From.String(), m.req.To.String()
	hs, hd, err := m.read(ctx)
	if err != nil {
		return err
	}
	// A move the other way, interrupted, left copies in the source.
	if back := marked(hs, to); len(back) > 0 {
		if committed(back) {
			if err := m.finish(ctx, m.dst, hd, m.src, back); err != nil {
				return err
			}
			m.move.Resumed = append(m.move.Resumed, fmt.Sprintf("finished the move of its records from %s to %s, interrupted after its commit", to, from))
		} else {
			if err := m.rollBack(ctx, m.src, back, m.dst, hd); err != nil {
				return err
			}
			m.move.Resumed = append(m.move.Resumed, fmt.Sprintf("undid the move of its records from %s to %s, interrupted before its commit", to, from))
		}
		if hs, hd, err = m.read(ctx); err != nil {
			return err
		}
	}
	mine := marked(hd, from)
	if committed(mine) {
		if err := m.finish(ctx, m.src, hs, m.dst, mine); err != nil {
			return err
		}
		m.move.Outcome = MoveFinished
		m.move.Resumed = append(m.move.Resumed, fmt.Sprintf("finished the move of its records from %s to %s, interrupted after its commit", from, to))
		return nil
	}
	if others := unmarked(hd, mine); len(others) > 0 {
		if len(hs) == 0 {
			m.move.Outcome = MoveAlready
			return nil
		}
		return fmt.Errorf("release %s (namespace %s) has records in %s (revisions %s) and in %s (revisions %s): convoy moves records only to a driver that has none of the release; remove the stale ones (with helm, HELM_DRIVER=…) first",
			name, m.req.Namespace, from, revisions(hs), to, revisions(others))
	}
	if len(hs) == 0 {
		if len(mine) > 0 {
			// Copies of a source that is gone since: not the release's.
			if err := m.deleteAll(ctx, m.dst, mine); err != nil {
				return err
			}
			m.move.Resumed = append(m.move.Resumed, fmt.Sprintf("took away the copies in %s of records that are no longer in %s", to, from))
		}
		m.move.Outcome = MoveNothing
		return nil
	}
	if owner := hs[len(hs)-1].labels[StackLabel]; m.req.Stack != "" && owner != "" && owner != m.req.Stack {
		return fmt.Errorf("release %s (namespace %s) is owned by stack %q (revision %d): stack %q leaves its records alone", name, m.req.Namespace, owner, hs[len(hs)-1].revision(), m.req.Stack)
	}
	if last := hs[len(hs)-1]; Status(last.labels["status"]).IsPending() {
		return fmt.Errorf("release %s (namespace %s) revision %d is %s: an operation holds it; its records move once it ends", name, m.req.Namespace, last.revision(), last.labels["status"])
	}
	if len(mine) > 0 {
		m.move.Resumed = append(m.move.Resumed, fmt.Sprintf("went on with the move from %s to %s interrupted before its commit (%d of %d revisions copied)", from, to, len(mine), len(hs)))
	}
	return m.forward(ctx, hs, mine)
}

// read is the release's records in the source and in the destination.
func (m *mover) read(ctx context.Context) (hs, hd []*storedRecord, err error) {
	if hs, err = m.src.storedHistory(ctx, m.req.Name); err != nil {
		return nil, nil, err
	}
	if hd, err = m.dst.storedHistory(ctx, m.req.Name); err != nil {
		return nil, nil, err
	}
	return hs, hd, nil
}

// forward copies hs (mine: copies an interrupted move made of them),
// verifies, commits, deletes the source and unmarks the copies.
func (m *mover) forward(ctx context.Context, hs, mine []*storedRecord) error {
	from := m.req.From.String()
	have := map[string]*storedRecord{}
	for _, c := range mine {
		have[c.key] = c
	}
	for _, r := range hs {
		want := copyOf(r, from)
		if c, ok := have[r.key]; ok {
			delete(have, r.key)
			if sameRecord(c, want) == nil {
				continue
			}
			if err := m.delete(ctx, m.dst, c); err != nil {
				return err
			}
		}
		if err := checkFence(ctx); err != nil {
			return err
		}
		if err := m.dst.createStored(ctx, want); err != nil {
			if errors.Is(err, ErrReleaseExists) {
				return fmt.Errorf("release %s revision %d: a record %s appeared in %s during the move", m.req.Name, r.revision(), r.key, m.req.To)
			}
			return fmt.Errorf("copy release %s revision %d to %s: %w", m.req.Name, r.revision(), m.req.To, err)
		}
		if err := m.wrote(ctx, "copy "+r.key); err != nil {
			return err
		}
	}
	// Copies of revisions the source no longer has.
	for _, key := range slices.Sorted(maps.Keys(have)) {
		if err := m.delete(ctx, m.dst, have[key]); err != nil {
			return err
		}
	}

	// Verify every copy against its source, and that the source did not
	// change meanwhile.
	hs2, hd, err := m.read(ctx)
	if err != nil {
		return err
	}
	if !sameVersions(hs, hs2) {
		return fmt.Errorf("release %s (namespace %s): its records in %s changed during the move (another operation wrote them); nothing was removed: run the move again", m.req.Name, m.req.Namespace, m.req.From)
	}
	copies := map[string]*storedRecord{}
	for _, c := range hd {
		copies[c.key] = c
	}
	m.move.Revisions = nil
	for _, r := range hs {
		c, ok := copies[r.key]
		if !ok {
			return fmt.Errorf("release %s revision %d: its copy in %s is missing", m.req.Name, r.revision(), m.req.To)
		}
		if err := sameRecord(c, copyOf(r, from)); err != nil {
			return fmt.Errorf("release %s revision %d: its copy in %s differs from the record in %s (%w); nothing was removed", m.req.Name, r.revision(), m.req.To, m.req.From, err)
		}
		sum, err := checksum(r.payload)
		if err != nil {
			return fmt.Errorf("release %s revision %d: %w", m.req.Name, r.revision(), err)
		}
		m.move.Revisions = append(m.move.Revisions, MovedRevision{Version: r.revision(), Status: Status(r.labels["status"]), SHA256: sum, Bytes: len(r.payload)})
	}
	newestSrc, newestCopy := hs[len(hs)-1], copies[hs[len(hs)-1].key]

	// No write to the source from now on; then the commit.
	if newestSrc.labels[MovedToLabel] != m.req.To.String() {
		if err := m.relabel(ctx, m.src, newestSrc.key, map[string]*string{MovedToLabel: ptr(m.req.To.String())}); err != nil {
			return err
		}
	}
	if err := m.relabel(ctx, m.dst, newestCopy.key, map[string]*string{MoveCommittedLabel: ptr("true")}); err != nil {
		return err
	}
	newestCopy.labels = withLabel(newestCopy.labels, MoveCommittedLabel, "true")
	mine = marked(hd, from)
	if err := m.finish(ctx, m.src, hs, m.dst, mine); err != nil {
		return err
	}
	m.move.Outcome = MoveDone
	return nil
}

// finish ends a committed move: the source's records, of which copies
// are in copyStore, are deleted oldest first, then the copies' marks are
// taken off, the committed one last.
func (m *mover) finish(ctx context.Context, srcStore recordStore, srcRecs []*storedRecord, copyStore recordStore, copies []*storedRecord) error {
	copied := map[string]bool{}
	for _, c := range copies {
		copied[c.key] = true
	}
	var left []*storedRecord
	for _, r := range srcRecs {
		if !copied[r.key] {
			left = append(left, r)
			continue
		}
		if err := m.delete(ctx, srcStore, r); err != nil {
			return err
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("release %s (namespace %s): revisions %s were written in %s after its records were moved from there; they are left in place, and the move is not finished", m.req.Name, m.req.Namespace, revisions(left), srcStore.Name())
	}
	for _, c := range sortStored(slices.Clone(copies)) {
		if err := m.relabel(ctx, copyStore, c.key, map[string]*string{MovingFromLabel: nil, MoveCommittedLabel: nil}); err != nil {
			return err
		}
	}
	return nil
}

// rollBack undoes a move not committed: its copies are deleted and the
// source's newest record unmarked.
func (m *mover) rollBack(ctx context.Context, copyStore recordStore, copies []*storedRecord, srcStore recordStore, srcRecs []*storedRecord) error {
	if err := m.deleteAll(ctx, copyStore, copies); err != nil {
		return err
	}
	for _, r := range srcRecs {
		if _, ok := r.labels[MovedToLabel]; ok {
			if err := m.relabel(ctx, srcStore, r.key, map[string]*string{MovedToLabel: nil}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *mover) deleteAll(ctx context.Context, s recordStore, recs []*storedRecord) error {
	for _, r := range recs {
		if err := m.delete(ctx, s, r); err != nil {
			return err
		}
	}
	return nil
}

func (m *mover) delete(ctx context.Context, s recordStore, r *storedRecord) error {
	if err := checkFence(ctx); err != nil {
		return err
	}
	if err := s.Delete(ctx, r.key); err != nil && !errors.Is(err, ErrReleaseNotFound) {
		return fmt.Errorf("delete release %s revision %d from %s: %w", m.req.Name, r.revision(), s.Name(), err)
	}
	return m.wrote(ctx, "delete "+s.Name()+" "+r.key)
}

func (m *mover) relabel(ctx context.Context, s recordStore, key string, set map[string]*string) error {
	if err := checkFence(ctx); err != nil {
		return err
	}
	if err := s.relabelStored(ctx, key, set); err != nil {
		return fmt.Errorf("label the record %s in %s: %w", key, s.Name(), err)
	}
	var what []string
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if set[k] == nil {
			what = append(what, "-"+k)
		} else {
			what = append(what, k+"="+*set[k])
		}
	}
	return m.wrote(ctx, "label "+s.Name()+" "+key+" "+strings.Join(what, ","))
}

// copyOf is the copy of r a move from driver from writes: r as stored,
// marked. What convoy's labels and annotations said of a payload
// rewritten since by another writer may be false: the copy leaves them
// out, so that plans read it whole, as a record helm wrote.
func copyOf(r *storedRecord, from string) *storedRecord {
	l := maps.Clone(r.labels)
	delete(l, MovedToLabel)
	delete(l, MoveCommittedLabel)
	l[MovingFromLabel] = from
	a := maps.Clone(r.annotations)
	if r.rewritten {
		delete(l, FingerprintLabel)
		delete(l, AppliedLabel)
		a = nil
	}
	return &storedRecord{key: r.key, payload: r.payload, labels: l, annotations: a}
}

// sameRecord says how the copy c differs from want (nil: it does not):
// its payload's checksum, the release it decodes to, its labels (but the
// times a driver sets) and its annotations.
func sameRecord(c, want *storedRecord) error {
	a, err := checksum(c.payload)
	if err != nil {
		return fmt.Errorf("the copy: %w", err)
	}
	b, err := checksum(want.payload)
	if err != nil {
		return err
	}
	if a != b {
		return fmt.Errorf("release JSON checksum %s, want %s", short(a), short(b))
	}
	ra, err := decode(c.payload)
	if err != nil {
		return err
	}
	rb, err := decode(want.payload)
	if err != nil {
		return err
	}
	ja, _ := json.Marshal(ra)
	jb, _ := json.Marshal(rb)
	if !bytes.Equal(ja, jb) {
		return errors.New("the decoded releases differ")
	}
	for _, k := range slices.Sorted(maps.Keys(union(c.labels, want.labels))) {
		if k == "createdAt" || k == "modifiedAt" || k == MoveCommittedLabel {
			continue
		}
		if c.labels[k] != want.labels[k] {
			return fmt.Errorf("label %s is %q, want %q", k, c.labels[k], want.labels[k])
		}
	}
	if len(c.annotations) != len(want.annotations) || !maps.Equal(c.annotations, want.annotations) {
		return errors.New("the annotations differ")
	}
	return nil
}

// checksum is the SHA-256 of the release JSON a payload holds.
func checksum(payload string) (string, error) {
	b, err := payloadJSON(payload)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

func short(sum string) string { return sum[:min(12, len(sum))] }

func union(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

func withLabel(l map[string]string, k, v string) map[string]string {
	l = maps.Clone(l)
	if l == nil {
		l = map[string]string{}
	}
	l[k] = v
	return l
}

func ptr(s string) *string { return &s }

// marked are the records of rs copied from driver from by a move not over.
func marked(rs []*storedRecord, from string) []*storedRecord {
	var out []*storedRecord
	for _, r := range rs {
		if r.labels[MovingFromLabel] == from {
			out = append(out, r)
		}
	}
	return out
}

// unmarked are the records of rs not in mine.
func unmarked(rs, mine []*storedRecord) []*storedRecord {
	var out []*storedRecord
	for _, r := range rs {
		if !slices.Contains(mine, r) {
			out = append(out, r)
		}
	}
	return out
}

func committed(rs []*storedRecord) bool {
	return slices.ContainsFunc(rs, func(r *storedRecord) bool { return r.labels[MoveCommittedLabel] == "true" })
}

// sameVersions: b is a read of the records of a, none written since.
func sameVersions(a, b []*storedRecord) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].key != b[i].key || a[i].version != b[i].version {
			return false
		}
	}
	return true
}

func revisions(rs []*storedRecord) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprint(r.revision())
	}
	return strings.Join(s, ", ")
}

// movingError refuses to write a revision of a release whose records are
// being moved (its newest record marked by a move not over).
func movingError(r *Release) error {
	switch {
	case r.Labels[MovingFromLabel] != "":
		return fmt.Errorf("release %s (namespace %s): its records are being moved here from %s by a `convoy records migrate` that did not finish: run it again (convoy records migrate --to <this driver>) before changing the release", r.Name, r.Namespace, r.Labels[MovingFromLabel])
	case r.Labels[MovedToLabel] != "":
		return fmt.Errorf("release %s (namespace %s): its records are being moved to %s by a `convoy records migrate` that did not finish: run it again (convoy records migrate --to %s) before changing the release", r.Name, r.Namespace, r.Labels[MovedToLabel], r.Labels[MovedToLabel])
	}
	return nil
}
