package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// leaderFence fences what a replica elected leader writes and sends, as
// the stack lock fences the release writes: a replica writes (status,
// events, plan objects) and notifies only while its leader election Lease
// was renewed within the Lease's duration. Another replica takes the
// Lease over only once it has seen it unrenewed for that long, so a
// replica that was stopped (SIGSTOP, a frozen VM) and goes on writes
// nothing before it learns that it lost the lead and exits.
type leaderFence struct {
	resourcelock.Interface
	lease time.Duration

	mu sync.Mutex
	// renewed is when the last renewal that succeeded was sent
	// (monotonic: the time a stopped process slept counts).
	renewed time.Time
}

func (f *leaderFence) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	sent := time.Now()
	err := f.Interface.Create(ctx, ler)
	f.note(sent, ler, err)
	return err
}

func (f *leaderFence) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	sent := time.Now()
	err := f.Interface.Update(ctx, ler)
	f.note(sent, ler, err)
	return err
}

func (f *leaderFence) note(sent time.Time, ler resourcelock.LeaderElectionRecord, err error) {
	if err != nil || ler.HolderIdentity != f.Identity() {
		return
	}
	f.mu.Lock()
	f.renewed = sent
	f.mu.Unlock()
}

// Check is nil while this replica holds the lead: its Lease renewed
// within the Lease's duration.
func (f *leaderFence) Check() error {
	f.mu.Lock()
	renewed := f.renewed
	f.mu.Unlock()
	if renewed.IsZero() {
		return fmt.Errorf("%w: this replica (%s) has not been elected", ErrNotLeader, f.Identity())
	}
	if age := time.Since(renewed); age >= f.lease {
		return fmt.Errorf("%w: this replica (%s) last renewed its leader election Lease %s ago (it lasts %s); another may lead now",
			ErrNotLeader, f.Identity(), age.Round(time.Second), f.lease)
	}
	return nil
}

// ErrNotLeader is a write or a notification of a replica that may no
// longer lead: it is not made.
var ErrNotLeader = fmt.Errorf("not the leader")

// fencedClient is a client whose writes are made only while check is nil.
type fencedClient struct {
	client.Client
	check func() error
}

func (c fencedClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.check(); err != nil {
		return err
	}
	return c.Client.Create(ctx, obj, opts...)
}

func (c fencedClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if err := c.check(); err != nil {
		return err
	}
	return c.Client.Delete(ctx, obj, opts...)
}

func (c fencedClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := c.check(); err != nil {
		return err
	}
	return c.Client.Update(ctx, obj, opts...)
}

func (c fencedClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := c.check(); err != nil {
		return err
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c fencedClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	if err := c.check(); err != nil {
		return err
	}
	return c.Client.Apply(ctx, obj, opts...)
}

func (c fencedClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	if err := c.check(); err != nil {
		return err
	}
	return c.Client.DeleteAllOf(ctx, obj, opts...)
}

func (c fencedClient) Status() client.SubResourceWriter {
	return fencedSubResource{SubResourceWriter: c.Client.Status(), check: c.check}
}

func (c fencedClient) SubResource(name string) client.SubResourceClient {
	sc := c.Client.SubResource(name)
	return struct {
		client.SubResourceReader
		client.SubResourceWriter
	}{sc, fencedSubResource{SubResourceWriter: sc, check: c.check}}
}

type fencedSubResource struct {
	client.SubResourceWriter
	check func() error
}

func (w fencedSubResource) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	if err := w.check(); err != nil {
		return err
	}
	return w.SubResourceWriter.Create(ctx, obj, sub, opts...)
}

func (w fencedSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := w.check(); err != nil {
		return err
	}
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

func (w fencedSubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if err := w.check(); err != nil {
		return err
	}
	return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

func (w fencedSubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	if err := w.check(); err != nil {
		return err
	}
	return w.SubResourceWriter.Apply(ctx, obj, opts...)
}

// fencedEvents records events only while check is nil.
type fencedEvents struct {
	events.EventRecorder
	check func() error
}

func (e fencedEvents) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...interface{}) {
	if e.check() != nil {
		return
	}
	e.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
}
