package dag

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Node is one vertex of a walk: an ID and the IDs it depends on. IDs that
// are not nodes of the walk count as satisfied.
type Node[K comparable] struct {
	ID        K
	DependsOn []K
}

// Status is how a node ended.
type Status string

// Node outcomes.
const (
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
	Skipped   Status = "skipped"
	Cancelled Status = "cancelled"
)

// Outcome is one node's result.
type Outcome[K comparable] struct {
	ID       K
	Status   Status
	Err      error
	Reason   string // why a node was skipped
	Started  time.Time
	Duration time.Duration
	// Restored says the node's change was undone by an atomic walk's
	// restore; RestoreErr says that failed.
	Restored   bool
	RestoreErr error
}

// Executor runs nodes. Run is called at most once per node, concurrently
// for independent nodes. Restore undoes a node that ran (succeeded or
// failed) when the walk is atomic and some node failed; it is called
// sequentially, dependents before their dependencies. A Restore that has
// nothing to undo returns (false, nil).
type Executor[K comparable] interface {
	Run(ctx context.Context, id K) error
	Restore(ctx context.Context, id K) (restored bool, err error)
}

// DefaultParallelism bounds a walk whose options do not: the releases an
// apply has in flight, waiting ones included. Measured on two cores
// (hack/bench/plan.sh), 20 releases that each wait 3 s for their pods took
// 13.9 s at 5 and 5.2 s at 20: waits are the long part of an apply and cost
// no CPU. The CPU-heavy preparation is bounded apart (apply.DefaultRenders).
const DefaultParallelism = 20

// WalkOptions configure a walk.
type WalkOptions[K comparable] struct {
	// Parallelism bounds concurrently running nodes; 0 means
	// DefaultParallelism.
	Parallelism int
	// Atomic restores every node that ran when any node fails.
	Atomic bool
	// OnSkip is told about each skipped node (for progress); may be nil.
	OnSkip func(id K, reason string)
	// OnCancel is told about each node that was ready but not started
	// because ctx ended (for progress); may be nil.
	OnCancel func(id K, err error)
	// Halt is told each failed node's error, and returns what it stops
	// (nil: nothing): from then on a node for which stop returns an error
	// does not start, it ends Cancelled with that error; the nodes running
	// go on, and so do those stop lets start. Nil: no failure halts a node.
	Halt func(err error) (stop func(id K) error)
}

// Walk runs nodes (given in topological order) and returns an outcome for
// every node, in the order given. A node starts once everything it depends
// on succeeded; the dependents of a failed node are skipped while
// independent nodes go on; after ctx ends no node starts.
func Walk[K comparable](ctx context.Context, nodes []Node[K], exec Executor[K], opts WalkOptions[K]) []Outcome[K] {
	par := opts.Parallelism
	if par <= 0 {
		par = DefaultParallelism
	}
	index := make(map[K]int, len(nodes))
	for i, n := range nodes {
		index[n.ID] = i
	}
	out := make([]Outcome[K], len(nodes))
	for i, n := range nodes {
		out[i].ID = n.ID
	}
	var (
		mu       sync.Mutex
		finished = make([]bool, len(nodes))
		started  = make([]bool, len(nodes))
		running  = 0
		order    []int // completion order of nodes that ran
		wake     = make(chan struct{}, len(nodes))
		halts    []func(K) error // what failures stopped (opts.Halt)
	)
	// halted is why node i may not start (nil: it may).
	halted := func(i int) error {
		for _, stop := range halts {
			if err := stop(nodes[i].ID); err != nil {
				return err
			}
		}
		return nil
	}
	// ready reports whether node i can start, or a reason it never will.
	ready := func(i int) (bool, string) {
		for _, dep := range nodes[i].DependsOn {
			j, ok := index[dep]
			if !ok {
				continue
			}
			if !finished[j] {
				return false, ""
			}
			if out[j].Status != Succeeded {
				return false, fmt.Sprintf("dependency %v %s", dep, out[j].Status)
			}
		}
		return true, ""
	}
	var wg sync.WaitGroup
	for {
		mu.Lock()
		progressed := true
		for progressed {
			progressed = false
			for i := range nodes {
				if started[i] {
					continue
				}
				ok, reason := ready(i)
				var stop error
				if ok {
					stop = cmp.Or(halted(i), ctx.Err())
				}
				switch {
				case reason != "":
					started[i], finished[i] = true, true
					out[i].Status, out[i].Reason = Skipped, reason
					if opts.OnSkip != nil {
						opts.OnSkip(nodes[i].ID, reason)
					}
					progressed = true
				case stop != nil:
					started[i], finished[i] = true, true
					out[i].Status, out[i].Err = Cancelled, stop
					if opts.OnCancel != nil {
						opts.OnCancel(nodes[i].ID, out[i].Err)
					}
					progressed = true
				case ok && running < par:
					started[i] = true
					running++
					out[i].Started = time.Now()
					wg.Add(1)
					go func(i int) {
						defer wg.Done()
						err := exec.Run(ctx, nodes[i].ID)
						mu.Lock()
						out[i].Duration = time.Since(out[i].Started)
						out[i].Status, out[i].Err = Succeeded, err
						if err != nil {
							out[i].Status = Failed
							if opts.Halt != nil {
								if stop := opts.Halt(err); stop != nil {
									halts = append(halts, stop)
								}
							}
						}
						finished[i] = true
						running--
						order = append(order, i)
						mu.Unlock()
						wake <- struct{}{}
					}(i)
				}
			}
		}
		done := !slices.Contains(started, false) && running == 0
		mu.Unlock()
		if done {
			break
		}
		<-wake
	}
	wg.Wait()

	if !opts.Atomic || !slices.ContainsFunc(out, func(o Outcome[K]) bool { return o.Status == Failed || o.Status == Cancelled }) {
		return out
	}
	// Undo in reverse topological order: dependents before what they
	// depend on. Restoring needs a live context even after Ctrl-C.
	rctx := context.WithoutCancel(ctx)
	for i := len(nodes) - 1; i >= 0; i-- {
		if !slices.Contains(order, i) {
			continue
		}
		out[i].Restored, out[i].RestoreErr = exec.Restore(rctx, nodes[i].ID)
	}
	return out
}

// Reverse returns the nodes for walking the graph backwards (destroy):
// every edge flipped, order reversed.
func Reverse[K comparable](nodes []Node[K]) []Node[K] {
	dependents := map[K][]K{}
	for _, n := range nodes {
		for _, d := range n.DependsOn {
			dependents[d] = append(dependents[d], n.ID)
		}
	}
	out := make([]Node[K], 0, len(nodes))
	for i := len(nodes) - 1; i >= 0; i-- {
		id := nodes[i].ID
		out = append(out, Node[K]{ID: id, DependsOn: dependents[id]})
	}
	return out
}
