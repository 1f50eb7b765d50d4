package run

import (
	"context"
	"fmt"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// StorageMoveRequest says which releases' records `convoy records migrate
// --to` moves, from which driver to which.
type StorageMoveRequest struct {
	// To is the driver the records go to: secret, configmap or sql.
	To string
	// From is the driver they are in ("": the stack's, its storage
	// block's or --storage-driver).
	From string
	// Releases are addresses or Helm release names (none: every release
	// of the stack).
	Releases []string
	// Moved, when not nil, is told of each release's move once done, in
	// the stack's order.
	Moved func(StorageMove)
	// AfterWrite, when not nil, is told of each write (release.MoveRequest):
	// the tests' seam for a move killed halfway.
	AfterWrite func(write string) error
}

// StorageMove is what a move did of one release's records.
type StorageMove struct {
	Instance *config.ReleaseInstance
	From, To string
	// Outcome: moved, finished (an interrupted move finished), already
	// (the records are in To), nothing (no records in From).
	Outcome string
	// Revisions are the revisions moved, each verified.
	Revisions []MovedRevision
	// Resumed says what earlier, interrupted moves had left and what
	// this one did of it.
	Resumed []string
}

// MovedRevision is one revision moved: its number, status, the SHA-256 of
// its release JSON (the same in the source and the copy) and its size.
type MovedRevision struct {
	Version int
	Status  string
	SHA256  string
	Bytes   int
}

// MoveStorage moves the records of the stack's releases (or of the named
// ones) from one storage driver to another (release.Engine.MoveRecords),
// holding the stack lock: every revision copied as stored, verified by
// the checksum of its release JSON, then removed from where it was. A
// move a kill interrupted is finished (or, asked the other way, undone)
// by the next. It stops at the first release that fails; the moves done
// are returned with the error.
func (s *Session) MoveStorage(ctx context.Context, req StorageMoveRequest) (moves []StorageMove, err error) {
	ls, o, cl, err := s.connected(ctx)
	if err != nil {
		return nil, err
	}
	to, err := release.ParseStorageDriver(req.To)
	if err != nil || req.To == "" {
		return nil, fmt.Errorf("--to: want secret, configmap or sql, not %q", req.To)
	}
	current, conn, err := cl.opts.driver()
	if err != nil {
		return nil, err
	}
	from := current
	if req.From != "" {
		if from, err = release.ParseStorageDriver(req.From); err != nil {
			return nil, fmt.Errorf("--from: %w", err)
		}
	} else if from == to {
		return nil, fmt.Errorf("the stack keeps its records in %s already: name the driver they are in now with --from", to)
	}
	if from == to {
		return nil, fmt.Errorf("--from and --to are both %s", to)
	}
	insts := make([]*config.ReleaseInstance, 0, len(ls.Order))
	if len(req.Releases) == 0 {
		for _, a := range ls.Order {
			insts = append(insts, ls.Stack.Release(a))
		}
	} else {
		for _, n := range req.Releases {
			inst, err := ls.FindRelease(n)
			if err != nil {
				return nil, err
			}
			insts = append(insts, inst)
		}
	}
	var db *release.SQLRecords
	if from == release.DriverSQL || to == release.DriverSQL {
		if db, err = cl.database(ctx, conn); err != nil {
			return nil, err
		}
	}
	lock, err := lockStack(ctx, o, ls.Stack, cl, "convoy records migrate")
	if err != nil {
		return nil, err
	}
	defer func() { err = lock.finish(ctx, err) }()
	ctx, stopFence := lock.fence(ctx)
	defer stopFence()
	for _, inst := range insts {
		eng, err := cl.Engine(ctx, inst.Cluster)
		if err != nil {
			return moves, err
		}
		m, err := eng.MoveRecords(ctx, release.MoveRequest{Name: inst.Name, Namespace: inst.Namespace, From: from, To: to, SQL: db, Stack: ls.Stack.ID(), AfterWrite: req.AfterWrite})
		if err != nil {
			return moves, fmt.Errorf("%s: %w", inst.Addr, err)
		}
		sm := StorageMove{Instance: inst, From: from.String(), To: to.String(), Outcome: string(m.Outcome), Resumed: m.Resumed}
		for _, r := range m.Revisions {
			sm.Revisions = append(sm.Revisions, MovedRevision{Version: r.Version, Status: string(r.Status), SHA256: r.SHA256, Bytes: r.Bytes})
		}
		moves = append(moves, sm)
		if req.Moved != nil {
			req.Moved(sm)
		}
	}
	return moves, nil
}
