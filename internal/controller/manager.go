package controller

import (
	"context"
	"errors"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/controller/notify"
	"github.com/convoy-sh/convoy/internal/controller/pipeline"
	"github.com/convoy-sh/convoy/internal/controller/stack"
	"github.com/convoy-sh/convoy/internal/controller/stackset"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crsource "sigs.k8s.io/controller-runtime/pkg/source"
)

// Run runs the controller until ctx ends.
func Run(ctx context.Context, o Options) error {
	if err := o.stackOptions().ValidateTenancy(); err != nil {
		return err
	}
	secret, err := o.webhookSecret()
	if err != nil {
		return err
	}
	cfg, err := ctl.RestConfig(o.Kubeconfig, o.Context)
	if err != nil {
		return err
	}
	// The controller's own client (Stacks and their status, plans,
	// events, leases) is shared by every reconcile: at client-go's
	// default of 5 queries per second, a status write of 8 workers
	// waited 1.2-1.8 s (the bench's 1,000 Stacks spent 7 of each
	// reconcile's 8.5 s there). It takes --kube-qps and --kube-burst.
	if o.QPS > 0 {
		cfg.QPS = o.QPS
	}
	if o.Burst > 0 {
		cfg.Burst = o.Burst
	}
	if o.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("no --cache-dir and no user cache directory: %w", err)
		}
		o.CacheDir = filepath.Join(dir, "convoy", "controller")
	}
	scheme, err := ctl.NewScheme()
	if err != nil {
		return err
	}
	sel, err := stack.ShardSelector(o.Shard)
	if err != nil {
		return fmt.Errorf("--shard %q: %w", o.Shard, err)
	}
	cacheOpts := cache.Options{ByObject: map[client.Object]cache.ByObject{
		&v1alpha1.Stack{}:    {Label: sel},
		&v1alpha1.Pipeline{}: {Label: sel},
		&v1alpha1.StackSet{}: {Label: sel},
		// Release records are Secrets too: their changes are no input.
		secretMeta(): {Label: notHelmRecords()},
	}}
	if o.Namespace != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{o.Namespace: {}}
	}
	dur := func(d, def time.Duration) *time.Duration {
		if d <= 0 {
			d = def
		}
		return &d
	}
	skip := true
	var lock resourcelock.Interface
	// fence is nil while this replica may write (always, without leader
	// election): fence.go.
	fence := func() error { return nil }
	if o.LeaderElect {
		if lock, err = leaseLock(cfg, o); err != nil {
			return err
		}
		lf := &leaderFence{Interface: lock, lease: *dur(o.LeaseDuration, 15*time.Second)}
		lock, fence = lf, lf.Check
	}
	mgr, err := manager.New(cfg, manager.Options{
		LeaderElectionResourceLockInterface: lock,
		Scheme:                              scheme,
		Logger:                              o.Logger,
		Metrics:                             metricsserver.Options{BindAddress: orDefault(o.MetricsAddress, ":8080")},
		HealthProbeBindAddress:              orDefault(o.HealthAddress, ":8081"),
		LeaderElection:                      o.LeaderElect,
		LeaderElectionID:                    LeaseName(o.Shard),
		LeaderElectionNamespace:             o.leaderElectionNamespace(),
		LeaderElectionReleaseOnCancel:       true,
		LeaseDuration:                       dur(o.LeaseDuration, 15*time.Second),
		RenewDeadline:                       dur(o.renewDeadline(), 0),
		RetryPeriod:                         dur(o.RetryPeriod, 2*time.Second),
		Cache:                               cacheOpts,
		// Secrets and ConfigMaps are read when needed, never cached with
		// their data (their metadata is watched):
		// caching them would hold every Secret of the cluster.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}}}},
		// The classic work queue, not the priority queue: in
		// controller-runtime v0.24 the priority queue can deadlock on
		// shutdown (kubernetes-sigs/controller-runtime#3538, fixed in
		// v0.25, which needs Kubernetes libraries v0.37), and a controller
		// that does not stop holds its shard's lease until it is killed.
		Controller: config.Controller{UsePriorityQueue: ptr.To(false)},
	})
	if err != nil {
		return err
	}
	res := &source.Resolver{Cache: source.Cache{Dir: filepath.Join(o.CacheDir, "charts")}, RegistryConfigs: o.RegistryConfigs}
	janitor := newCacheJanitor(filepath.Join(o.CacheDir, "stacks"), filepath.Join(o.CacheDir, "charts"), o.CacheMaxSize)
	// r, the Stack reconciler, is made once the receiver and the
	// notifier are.
	var r *stack.Reconciler
	if err := stack.IndexReferences(ctx, mgr); err != nil {
		return err
	}
	if err := pipeline.IndexStacks(ctx, mgr); err != nil {
		return err
	}
	if err := indexSourceRepositories(ctx, mgr); err != nil {
		return err
	}
	// Pushes the receiver hands to the controllers (nil: no receiver).
	var rcv *receiver
	stackPushes, pipelinePushes := make(chan event.GenericEvent, 256), make(chan event.GenericEvent, 64)
	if o.WebhookListen != "" {
		// Listening now: a taken address fails the start, not later.
		l, err := net.Listen("tcp", o.WebhookListen)
		if err != nil {
			return fmt.Errorf("--webhook-listen: %w", err)
		}
		rcv = &receiver{
			listener: l, secret: secret, meta: mgr.GetCache(), reader: mgr.GetAPIReader(), elected: mgr.Elected(),
			list: mgr.GetCache(), stackCh: stackPushes, pipelineCh: pipelinePushes, pushes: newPushes(),
			log: o.Logger.WithName("webhook"), receipts: func(res string) { r.WebhookReceipt(res) },
		}
		if err := mgr.Add(rcv); err != nil {
			l.Close()
			return err
		}
	}
	notifier := notify.New(mgr.GetAPIReader())
	notifier.Fence = fence
	notifier.NoCrossNamespaceRefs = o.stackOptions().RefusesCrossNamespaceRefs()
	if err := mgr.Add(notifier); err != nil {
		return err
	}
	// Pushes the receiver was told of, for the Stacks and the Pipelines.
	var sp stack.Pushes
	var pp pipeline.Pushes
	if rcv != nil {
		sp, pp = rcv.pushes, pipelinePushMarks{rcv.pushes}
	}
	// One recorder for the Stacks and the Pipelines.
	recorder := fencedEvents{EventRecorder: mgr.GetEventRecorder("convoy-controller"), check: fence}
	// The reconcilers' writes, fenced like their events and notifications.
	writer := fencedClient{Client: mgr.GetClient(), check: fence}
	r = stack.New(stack.Deps{
		Client: writer, Reader: mgr.GetAPIReader(), Config: cfg, Mapper: mgr.GetRESTMapper(),
		Scheme: scheme, Events: recorder, Notifier: notifier,
		Resolver: res, Cache: janitor, Pushes: sp, Options: o.stackOptions(),
		ClusterQPS: o.ClusterQPS, ClusterBurst: o.ClusterBurst,
	})
	janitor.onEvict = r.Evicted
	err = builder.ControllerManagedBy(mgr).
		Named("stack").
		// Annotations: convoy.dev/force-delete on a deleted Stack.
		For(&v1alpha1.Stack{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		// A deleted Stack's duplicates take over.
		Watches(&v1alpha1.Stack{}, handler.EnqueueRequestsFromMapFunc(r.SameIdentity), builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false }, UpdateFunc: func(event.UpdateEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		// A changed varsFrom object or kubeconfig Secret is a changed
		// input: watched as metadata only, never cached with its data.
		Watches(configMapMeta(), handler.EnqueueRequestsFromMapFunc(r.StacksReferencing("ConfigMap")), builder.OnlyMetadata).
		Watches(secretMeta(), handler.EnqueueRequestsFromMapFunc(r.StacksReferencing("Secret")), builder.OnlyMetadata).
		// A push of the Stack's repository (the receiver).
		WatchesRawSource(crsource.Channel(stackPushes, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: o.concurrency(), SkipNameValidation: &skip, RateLimiter: r.RateLimiter()}).
		Complete(r)
	if err != nil {
		return err
	}
	// Pipelines: same shard and leader, their own workers. A Stack's
	// changes (its readiness, its pin) and a StackSet's (its rollout)
	// are the Pipelines' inputs.
	// Their gates run in the background, until the controller stops.
	pr := pipeline.New(pipeline.Deps{
		Client: writer, Reader: mgr.GetAPIReader(), Events: recorder, Notifier: notifier,
		Stacks: r.PipelineStacks(), Pushes: pp, Options: o.pipelineOptions(),
	})
	err = builder.ControllerManagedBy(mgr).
		Named("pipeline").
		For(&v1alpha1.Pipeline{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1alpha1.Stack{}, handler.EnqueueRequestsFromMapFunc(pr.PipelinesOfStack)).
		// A stage's StackSet: its rollout's progress (status.rollout).
		Watches(&v1alpha1.StackSet{}, handler.EnqueueRequestsFromMapFunc(pr.PipelinesOfStackSet)).
		// A gate's run that ended.
		WatchesRawSource(crsource.Channel(pr.GateRuns(), &handler.EnqueueRequestForObject{})).
		// A push of the repository it follows (the receiver).
		WatchesRawSource(crsource.Channel(pipelinePushes, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: o.concurrency(), SkipNameValidation: &skip}).
		Complete(pr)
	if err != nil {
		return err
	}
	// StackSets: their Stacks and rollout Pipelines are owned; a
	// registration's change (a Secret's labels) may change any
	// StackSet's elements. They read the informers above (the Stacks,
	// the Pipelines, the Secrets' metadata), not the API server.
	ssr := stackset.New(stackset.Deps{
		Client: mgr.GetClient(), Cache: mgr.GetCache(), Reader: mgr.GetAPIReader(), Scheme: scheme, Events: recorder, Options: o.stackSetOptions(),
	})
	err = builder.ControllerManagedBy(mgr).
		Named("stackset").
		For(&v1alpha1.StackSet{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&v1alpha1.Stack{}).
		Owns(&v1alpha1.Pipeline{}).
		Watches(secretMeta(), handler.EnqueueRequestsFromMapFunc(ssr.StackSetsOfRegistration), builder.OnlyMetadata).
		WithOptions(controller.Options{MaxConcurrentReconciles: o.concurrency(), SkipNameValidation: &skip}).
		Complete(ssr)
	if err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("cache", func(req *http.Request) error {
		if !mgr.GetCache().WaitForCacheSync(req.Context()) {
			return fmt.Errorf("the Stack cache is not synced")
		}
		return nil
	}); err != nil {
		return err
	}
	// The shared informers stop with the manager.
	defer r.Close()
	err = mgr.Start(ctx)
	// The gates still running (their test runs hold stack locks) end
	// with the manager.
	pr.Stop(stacklock.DefaultGrace + 10*time.Second)
	// The manager cancelled the reconciles' context; on a lost
	// leadership it returned without waiting for them. The applies under
	// way stop writing, record what they can as failed (while they still
	// hold their stack lock) and release the lock: waited for, within
	// the time their writes and the lock's release may take.
	if n := r.Drain(2*stacklock.DefaultGrace + 10*time.Second); n > 0 {
		o.Logger.Info("exiting with applies still under way: their records stay pending and their stack locks held until the next run heals them", "applies", n)
	}
	return err
}

// indexSourceRepositories indexes the cached Stacks and Pipelines by the
// repository of their source, for the push receiver.
func indexSourceRepositories(ctx context.Context, mgr manager.Manager) error {
	err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.Stack{}, sourceRepositoryIndex, func(o client.Object) []string {
		if k := stackRepositoryKey(o.(*v1alpha1.Stack)); k != "" {
			return []string{k}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.Pipeline{}, sourceRepositoryIndex, func(o client.Object) []string {
		if k := pipelineRepositoryKey(o.(*v1alpha1.Pipeline)); k != "" {
			return []string{k}
		}
		return nil
	})
}

// webhookSecret is --webhook-token-secret, checked against
// --webhook-listen.
func (o Options) webhookSecret() (types.NamespacedName, error) {
	switch {
	case o.WebhookListen == "" && o.WebhookTokenSecret == "":
		return types.NamespacedName{}, nil
	case o.WebhookListen == "":
		return types.NamespacedName{}, errors.New("--webhook-token-secret needs --webhook-listen ADDR")
	case o.WebhookTokenSecret == "":
		return types.NamespacedName{}, errors.New("--webhook-listen needs --webhook-token-secret NAMESPACE/NAME: the receiver takes no unauthenticated notification")
	}
	ref, err := ctl.ParseSecretRef(o.WebhookTokenSecret)
	if err != nil {
		return types.NamespacedName{}, fmt.Errorf("--webhook-token-secret %w", err)
	}
	return ref, nil
}

func configMapMeta() *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
}

func secretMeta() *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}}
}

// notHelmRecords selects the objects that are not release records.
func notHelmRecords() labels.Selector {
	req, _ := labels.NewRequirement("owner", selection.NotEquals, []string{"helm"})
	return labels.NewSelector().Add(*req)
}

// leaseLock is the shard's leader election Lease, held under the
// process's identity (o.Identity, else host and pid), so that the Lease
// says which replica leads.
func leaseLock(cfg *rest.Config, o Options) (resourcelock.Interface, error) {
	id := o.Identity
	if id == "" {
		host, _ := os.Hostname()
		id = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = max(o.renewDeadline()/2, time.Second)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return resourcelock.New(resourcelock.LeasesResourceLock, o.leaderElectionNamespace(), LeaseName(o.Shard),
		cs.CoreV1(), cs.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
