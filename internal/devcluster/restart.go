package devcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// RestartPolicy says what a cluster does when one of its components exits
// on its own.
type RestartPolicy int

const (
	// RestartNever leaves a component that exited down; Err reports it.
	// The other components run on, and the cluster's directory is kept
	// until Stop.
	RestartNever RestartPolicy = iota
	// RestartOnExit starts a component that exited again, with its flags,
	// ports and data (etcd's data, the certificates): after 1 s, doubling
	// up to 10 s while it exits within 10 s of its start; Err reports it
	// once it has done so 5 times in a row. bin/devcluster runs so.
	RestartOnExit
)

const (
	restartDelay    = time.Second
	restartMaxDelay = 10 * time.Second
	// A component that ran at least restartStable before it exited
	// starts its backoff anew; restartGiveUp quick exits in a row are a
	// crash loop, reported by Err.
	restartStable = 10 * time.Second
	restartGiveUp = 5
	// restartReady bounds the wait for a restarted component to serve:
	// Start's own bound, as a loaded machine may need it.
	restartReady = 2 * time.Minute
)

// component is what a cluster runs: how to start it, and the process
// that runs it now.
type component struct {
	name  string
	bin   string
	args  []string
	ready func(context.Context, *process) error // nil: none to wait for

	// op serialises Restart, the restarts of the supervisor and Stop.
	op sync.Mutex
	// Guarded by Cluster.mu:
	proc       *process
	restarting bool  // stopped by a restart, not started again yet
	quick      int   // exits within restartStable of the start, in a row
	failed     error // set once RestartOnExit gave up
}

// Components are the names Restart knows, in the order of start.
var Components = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

// componentName is the component a name or its short form (controller-manager,
// scheduler, apiserver) stands for.
func componentName(name string) (string, error) {
	if slices.Contains(Components, name) {
		return name, nil
	}
	if slices.Contains(Components, "kube-"+name) {
		return "kube-" + name, nil
	}
	return "", fmt.Errorf("no component %q (want one of %s)", name, strings.Join(Components, ", "))
}

func (c *Cluster) component(name string) (*component, error) {
	full, err := componentName(name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, comp := range c.comps {
		if comp.name == full {
			return comp, nil
		}
	}
	return nil, fmt.Errorf("component %s not started yet", full)
}

// Restart kills the component name (SIGKILL to its process group, as a
// crash would end it), keeps it down for down, starts it again with the
// same flags, ports and data, and returns once it serves (etcd's /health,
// the API server's /readyz; the others once started). Every other
// component runs on throughout. name is one of Components, or
// controller-manager, scheduler, apiserver.
func (c *Cluster) Restart(ctx context.Context, name string, down time.Duration) error {
	comp, err := c.component(name)
	if err != nil {
		return err
	}
	comp.op.Lock()
	defer comp.op.Unlock()
	c.mu.Lock()
	if c.stopping {
		c.mu.Unlock()
		return ErrNotRunning
	}
	p := comp.proc
	comp.restarting = true
	comp.quick, comp.failed = 0, nil
	c.mu.Unlock()
	p.expected.Store(true)
	_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
	<-p.exited
	if down > 0 {
		select {
		case <-time.After(down):
		case <-ctx.Done():
		case <-c.done:
		}
	}
	return c.startAgain(ctx, comp)
}

// startAgain starts comp's process anew and waits until it serves. The
// caller holds comp.op. A restart that did not start leaves the component
// down, to the supervisor under RestartOnExit, else to Err.
func (c *Cluster) startAgain(ctx context.Context, comp *component) error {
	c.mu.Lock()
	stopping := c.stopping
	c.mu.Unlock()
	if stopping {
		return ErrNotRunning
	}
	p, err := c.launcher.start(comp.name, comp.bin, comp.args, c.logPath(comp.name))
	c.mu.Lock()
	comp.restarting = false
	if err == nil {
		comp.proc = p
	}
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("devcluster: restart %s: %w", comp.name, err)
	}
	go c.watch(comp, p)
	if comp.ready == nil {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, restartReady)
	defer cancel()
	go func() { // Stop ends the wait

		select {
		case <-c.done:
			cancel()
		case <-rctx.Done():
		}
	}()
	if err := comp.ready(rctx, p); err != nil {
		select {
		case <-c.done:
			return ErrNotRunning
		default:
		}
		return fmt.Errorf("devcluster: restart %s: %w", comp.name, err)
	}
	return nil
}

// watch waits for p to exit. Under RestartOnExit, a process that exited on
// its own (not by Stop or Restart) is started again after a backoff.
func (c *Cluster) watch(comp *component, p *process) {
	<-p.exited
	if c.policy != RestartOnExit || p.expected.Load() {
		return
	}
	comp.op.Lock()
	defer comp.op.Unlock()
	c.mu.Lock()
	if c.stopping || comp.proc != p {
		c.mu.Unlock()
		return
	}
	if time.Since(p.started) < restartStable {
		comp.quick++
	} else {
		comp.quick = 0
	}
	quick := comp.quick
	if quick >= restartGiveUp {
		comp.failed = fmt.Errorf("%w, %d times in a row within %s of its start: not started again", p.exitError(), quick, restartStable)
		c.mu.Unlock()
		c.logf("%s exited %d times in a row within %s of its start: not started again", comp.name, quick, restartStable)
		return
	}
	comp.restarting = true
	c.mu.Unlock()
	delay := min(restartDelay<<max(quick-1, 0), restartMaxDelay)
	c.logf("%s exited (%s); starting it again in %s", comp.name, p.exitState(), delay)
	select {
	case <-time.After(delay):
	case <-c.done:
		return
	}
	if err := c.startAgain(context.Background(), comp); err != nil {
		if !errors.Is(err, ErrNotRunning) {
			c.logf("%v", err)
		}
		return
	}
	c.logf("%s started again (pid %d)", comp.name, c.Pids()[comp.name])
}

// ComponentLines are "name pid" lines, sorted by name, for the
// components file of bin/devcluster.
func (c *Cluster) ComponentLines() string {
	pids := c.Pids()
	names := make([]string, 0, len(pids))
	for name := range pids {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		fmt.Fprintf(&b, "%s %d\n", name, pids[name])
	}
	return b.String()
}
