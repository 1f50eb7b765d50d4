package pipeline

import (
	"context"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/notify"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/signing"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// Stacks is what a Pipeline needs of the Stack side: implemented by the
// Stack reconciler, so that a gate runs a Stack as the Stack's own
// reconciles do, and a listing of tags uses the credentials a Stack of
// the Pipeline's namespace would.
type Stacks interface {
	// Registry is the registry access of a Stack (its namespace and
	// spec.sourceSecretRef's credentials); drop removes what it wrote.
	Registry(ctx context.Context, st *v1alpha1.Stack) (reg artifact.Registry, drop func(), err error)
	// VerifyKeys are the public keys of spec.verify's Secret of
	// namespace ns. An error that is a ConfigError is the spec or the
	// Secret being wrong: the Pipeline stalls until it changes.
	VerifyKeys(ctx context.Context, ns string, v *v1alpha1.VerifySpec) ([]*signing.PublicKey, error)
	// Open fetches the Stack's source, reads its inputs and opens its
	// stack as its reconciles do. Its error's text says why (a gate's
	// output).
	Open(ctx context.Context, st *v1alpha1.Stack) (*StackRun, error)
	// ClientAs is a client impersonating user (the controller's own
	// client when the controller does not impersonate).
	ClientAs(user string) (client.Client, error)
	// StripCachePaths takes the controller's cache directories out of a
	// message.
	StripCachePaths(msg string) string
}

// StackRun is a Stack opened for a gate: its stack as its reconciles
// open it, and how its messages are masked.
type StackRun struct {
	// Session is the Stack's stack, opened as its reconciles open it
	// (its source, inputs and identity); the gates' runs announce
	// nothing on the Stack.
	Session *run.Session
	// Message is an error's text as the Stack's status would say it
	// (its secret inputs masked).
	Message func(error) string
	// Redact masks the Stack's secret inputs in a text.
	Redact func(string) string
	// Close closes the session and removes what Open wrote (the fetched
	// source's hold, the inputs' files).
	Close func()
}

// ConfigError is an error of the Pipeline's spec or of what it names
// (spec.verify's Secret): it stalls as Invalid.
type ConfigError interface {
	error
	ConfigError()
}

// Pushes are the pushes of Pipelines' repositories the push receiver was
// told of and no listing has seen yet.
type Pushes interface {
	// Pipeline says whether the Pipeline's repository was pushed to;
	// then saw, called after a listing (its tags, or nil when it follows
	// one tag, which resolved to digest), clears the mark if the listing
	// saw the push and no newer one came meanwhile.
	Pipeline(key types.NamespacedName) (saw func(follow string, tags []string, digest string), pushed bool)
}

// Options are the controller's settings a Pipeline's reconcile reads.
type Options struct {
	// MinInterval is the controller's --min-interval: a Pipeline lists
	// its tags at most this often, whatever its spec.interval.
	MinInterval time.Duration
	// DefaultServiceAccount is --default-service-account: the service
	// account of its namespace a Pipeline without
	// spec.serviceAccountName acts as ("": none).
	DefaultServiceAccount string
	// NoCrossNamespaceRefs: a stage may not name a Stack of another
	// namespace (--no-cross-namespace-refs, --tenancy strict).
	NoCrossNamespaceRefs bool
	// Strict is --tenancy strict: the Pipeline's service account reaches
	// the Stacks of its own namespace too.
	Strict bool
	// Timeout bounds one reconcile (0: pipelineReconcileTimeout).
	Timeout time.Duration
}

// Deps are what a Reconciler is made of.
type Deps struct {
	// Client reads Pipelines from the cache (its pipelineStacksIndex)
	// and writes; Reader reads uncached (the Pipeline, its Stacks).
	Client client.Client
	Reader client.Reader
	Events events.EventRecorder // nil: no events
	// Notifier sends the stages' notices (nil: not sent).
	Notifier *notify.Notifier
	Stacks   Stacks
	// Pushes (nil: no push receiver).
	Pushes  Pushes
	Options Options
}

// New is the Pipeline reconciler; its gates run in the background until
// Stop.
func New(d Deps) *Reconciler {
	return &Reconciler{
		client: d.Client, reader: d.Reader, events: d.Events, notifier: d.Notifier,
		stacks: d.Stacks, pushes: d.Pushes, opts: d.Options, gates: newGateRunner(),
	}
}

// GateRuns are the Pipelines whose gate's run ended: to enqueue.
func (r *Reconciler) GateRuns() <-chan event.GenericEvent { return r.gates.enqueue }

// Stop cancels the gates' runs, starts none any more, and waits for them
// to end, at most for wait.
func (r *Reconciler) Stop(wait time.Duration) { r.gates.stop(wait) }

// Interval is how often the Pipeline lists its tags: its spec.interval,
// at least MinInterval.
func (o Options) Interval(p *v1alpha1.Pipeline) time.Duration {
	return max(p.Spec.IntervalOrDefault(), o.MinInterval)
}

// pushed is the Pipeline's push mark (nil saw: none).
func (r *Reconciler) pushed(key types.NamespacedName) (saw func(string, []string, string), pushed bool) {
	if r.pushes == nil {
		return nil, false
	}
	return r.pushes.Pipeline(key)
}
