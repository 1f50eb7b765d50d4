package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/deploy"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/duration"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

type controllerOptions struct {
	controller.Options
	Verbose      bool
	CacheMaxSize string
	MaxPlanSize  string
	Tenancy      string
}

func newControllerCmd(s streams) *cobra.Command {
	var o controllerOptions
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Reconcile Stack objects: plan, approve, apply and correct drift in the cluster",
		Long: `The controller reconciles Stack objects (stacks.convoy.dev): it pulls each
Stack's source artifact (convoy push), plans it on every change and at its
interval, saves the plan and publishes its text in a ConfigMap, and applies
exactly that plan: at once with approval auto, or once spec.approvedPlan names
its digest with approval manual (convoy approve). Drift is reported, and
restored with spec.driftCorrection.

Replicas elect a leader per shard on a Lease; --shard KEY reconciles only the
Stacks labelled convoy.dev/shard=KEY (without --shard: the Stacks without that
label). It runs in the cluster (convoy controller install --deployment) or
outside it against a kubeconfig. With --webhook-listen, a registry's push
notifications reconcile at once the Stacks and Pipelines of the pushed
repository. See docs/controller.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context(), s) },
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of the cluster the Stacks live in, also their default cluster (default $KUBECONFIG, ~/.kube/config, else in-cluster)")
	fs.StringVar(&o.Context, "kube-context", "", "kubeconfig context")
	fs.StringVar(&o.Shard, "shard", "", "reconcile only Stacks labelled "+v1alpha1.ShardLabel+"=KEY (default: those without the label)")
	fs.StringVarP(&o.Namespace, "namespace", "n", "", "reconcile only the Stacks of this namespace (default: all)")
	fs.IntVar(&o.Concurrency, "concurrency", 4, "Stacks reconciled at once")
	fs.IntVar(&o.Parallelism, "parallelism", 0, "releases one Stack plans or applies at once (default: as convoy apply)")
	fs.Float32Var(&o.QPS, "kube-qps", run.DefaultQPS, "per-cluster limit of queries per second of each Stack's run, and of the controller's own client (Stacks, plans, events)")
	fs.IntVar(&o.Burst, "kube-burst", run.DefaultBurst, "per-cluster burst of each Stack's run, and of the controller's own client")
	fs.Float32Var(&o.ClusterQPS, "cluster-qps", 0, "queries per second to each cluster shared by all the Stacks reconciled (default 0: no shared limit)")
	fs.IntVar(&o.ClusterBurst, "cluster-burst", 0, "burst of --cluster-qps (default: one second's worth)")
	fs.StringVar(&o.MetricsAddress, "metrics-address", ":8080", "listen address of the Prometheus metrics (/metrics); 0 disables")
	fs.StringVar(&o.HealthAddress, "health-address", ":8081", "listen address of /healthz and /readyz; 0 disables")
	fs.BoolVar(&o.LeaderElect, "leader-elect", false, "elect one active replica per shard on a Lease")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "convoy-system", "namespace of the leader election Leases")
	fs.DurationVar(&o.LeaseDuration, "lease-duration", 15*time.Second, "how long a leader that stopped renewing keeps the Lease")
	fs.DurationVar(&o.RenewDeadline, "renew-deadline", 10*time.Second, "how long the leader retries renewing before it steps down")
	fs.DurationVar(&o.RetryPeriod, "retry-period", 2*time.Second, "how often candidates try to take the Lease")
	fs.StringVar(&o.CacheDir, "cache-dir", "", "pulled stacks, charts and temporary plans (default: the user cache directory's convoy/controller)")
	fs.StringVar(&o.CacheMaxSize, "cache-max-size", "", "bound the pulled stacks and charts of --cache-dir (500Mi, 2Gi, …): the least recently used are removed, never one in use (default: unbounded)")
	fs.DurationVar(&o.MinInterval, "min-interval", controller.DefaultMinInterval, "the shortest interval a Stack or Pipeline is reconciled at, whatever its spec.interval (a shorter one is clamped, and its Stack says so)")
	fs.StringVar(&o.MaxPlanSize, "max-plan-size", "32Mi", "the largest saved plan stored for a Stack (compressed; one over 1 MiB is split across Secrets): a larger plan stalls its Stack (PlanTooLarge)")
	fs.StringVar(&o.DefaultServiceAccount, "default-service-account", "", "plan and apply the Stacks that name no spec.serviceAccountName as this service account of their own namespace (default: as the controller)")
	fs.BoolVar(&o.NoCrossNamespaceRefs, "no-cross-namespace-refs", false, "refuse Stacks whose varsFrom, clusters or notifications name an object of another namespace")
	fs.StringVar(&o.Tenancy, "tenancy", "", "strict: every Stack and Pipeline acts as a service account of its namespace (needs --default-service-account), no cross-namespace references; recommended when several teams share the controller. The cache of pulled stacks and charts stays shared in every mode, each served to a Stack only once its registry served it to the Stack's credentials (docs/tenancy.md)")
	fs.StringVar(&o.WebhookListen, "webhook-listen", "", "listen address of the push receiver: POST "+controller.WebhookPath+" takes a registry's notifications and reconciles at once the Stacks and Pipelines whose source names the pushed repository (needs --webhook-token-secret)")
	fs.StringVar(&o.WebhookTokenSecret, "webhook-token-secret", "", "NAMESPACE/NAME of the Secret whose key token the registry's notifications must bear (Authorization: Bearer TOKEN)")
	fs.BoolVarP(&o.Verbose, "verbose", "v", false, "log at debug level")
	cmd.AddCommand(newControllerInstallCmd(s))
	return cmd
}

func (o controllerOptions) Run(ctx context.Context, s streams) error {
	level := slog.LevelInfo
	if o.Verbose {
		level = slog.LevelDebug
	}
	logger := logr.FromSlogHandler(slog.NewTextHandler(s.Err, &slog.HandlerOptions{Level: level}))
	ctrllog.SetLogger(logger)
	opts := o.Options
	opts.Logger = logger
	opts.Warnings = s.Err
	opts.RegistryConfigs = registryConfigs(os.Getenv)
	t, err := controller.ParseTenancy(o.Tenancy)
	if err != nil {
		return err
	}
	opts.Tenancy = t
	if o.Concurrency < 1 {
		return fmt.Errorf("--concurrency must be at least 1")
	}
	if o.MinInterval < time.Second {
		return fmt.Errorf("--min-interval %s: give at least 1s", o.MinInterval)
	}
	if o.CacheMaxSize != "" {
		q, err := resource.ParseQuantity(o.CacheMaxSize)
		if err != nil || q.Sign() <= 0 {
			return fmt.Errorf("--cache-max-size %q: give a size in bytes, such as 500Mi or 2Gi", o.CacheMaxSize)
		}
		opts.CacheMaxSize = q.Value()
	}
	q, err := resource.ParseQuantity(o.MaxPlanSize)
	if err != nil || q.Sign() <= 0 || q.Value() > 1<<30 {
		return fmt.Errorf("--max-plan-size %q: give a size in bytes up to 1Gi, such as 32Mi", o.MaxPlanSize)
	}
	opts.MaxPlanSize = q.Value()
	return controller.Run(ctx, opts)
}

// registryConfigs are the registry credential files: Helm's, then
// Docker's.
func registryConfigs(getenv func(string) string) []string {
	var configs []string
	if p := getenv("HELM_REGISTRY_CONFIG"); p != "" {
		configs = append(configs, p)
	} else if cfg, err := os.UserConfigDir(); err == nil {
		configs = append(configs, filepath.Join(cfg, "helm", "registry", "config.json"))
	}
	if d := getenv("DOCKER_CONFIG"); d != "" {
		configs = append(configs, filepath.Join(d, "config.json"))
	} else if home, err := os.UserHomeDir(); err == nil {
		configs = append(configs, filepath.Join(home, ".docker", "config.json"))
	}
	return configs
}

// kubeFlags reach the cluster of the Stack commands.
type kubeFlags struct {
	Kubeconfig, Context string
}

func (f *kubeFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig (default $KUBECONFIG or ~/.kube/config)")
	cmd.Flags().StringVar(&f.Context, "kube-context", "", "kubeconfig context")
}

type controllerInstallOptions struct {
	kubeFlags
	Deployment         bool
	Image              string
	MinInterval        time.Duration
	WebhookTokenSecret string
}

func newControllerInstallCmd(s streams) *cobra.Command {
	var o controllerInstallOptions
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install the Stack, Pipeline and StackSet CRDs and the controller's RBAC (and with --deployment, the controller)",
		Long: `Install applies, with server-side apply, the CRDs stacks.convoy.dev (Stack),
pipelines.convoy.dev (Pipeline) and stacksets.convoy.dev (StackSet), waiting until each is established, the
convoy-system namespace with the controller's ServiceAccount and RBAC, the
ClusterRoles convoy-editor and convoy-approver, the admission policies that
make approving a permission (the verb approve on stacks.convoy.dev and
pipelines.convoy.dev), and with --deployment the controller's Deployment.
The same manifests are under deploy/ in the source.

The Deployment runs ` + deploy.ImageRepository + `:<this convoy's version>, or the
image of --image REF (which implies --deployment): build and push one with
make image IMAGE=REGISTRY/REPO:TAG. --webhook-token-secret NAMESPACE/NAME runs
its push receiver and installs the Service convoy-controller-webhook
(docs/pipelines.md, Push notifications). See docs/controller.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context(), s) },
	}
	o.add(cmd)
	cmd.Flags().BoolVar(&o.Deployment, "deployment", false, "install the controller's Deployment too")
	cmd.Flags().StringVar(&o.Image, "image", "", "the Deployment's image, REGISTRY/REPO:TAG (default "+deploy.ImageRepository+":<version>; implies --deployment)")
	cmd.Flags().DurationVar(&o.MinInterval, "min-interval", ctl.DefaultMinInterval, "the shortest spec.interval the Stack and Pipeline CRDs accept (run the controller with the same --min-interval)")
	cmd.Flags().StringVar(&o.WebhookTokenSecret, "webhook-token-secret", "", fmt.Sprintf("run the Deployment's push receiver (--webhook-listen :%d) with this token Secret, NAMESPACE/NAME, and install its Service convoy-controller-webhook (implies --deployment)", deploy.WebhookPort))
	return cmd
}

func (o controllerInstallOptions) Run(ctx context.Context, s streams) error {
	if o.Image != "" {
		if err := ctl.ValidateImage(o.Image); err != nil {
			return err
		}
	}
	if o.MinInterval < time.Second {
		return fmt.Errorf("--min-interval %s: give at least 1s", o.MinInterval)
	}
	c, err := ctl.Connect(o.Kubeconfig, o.Context)
	if err != nil {
		return err
	}
	return ctl.Install(ctx, c, ctl.InstallRequest{
		Deployment: o.Deployment || o.Image != "" || o.WebhookTokenSecret != "", Image: o.Image, Log: s.Out, MinInterval: o.MinInterval,
		WebhookTokenSecret: o.WebhookTokenSecret,
	})
}

type approveOptions struct {
	kubeFlags
	Namespace, Name, Plan string
	AllowPolicies         []string
}

func newApproveCmd(s streams) *cobra.Command {
	var o approveOptions
	cmd := &cobra.Command{
		Use:   "approve STACK",
		Short: "Approve a Stack's current plan (manual approval): the controller applies it",
		Long: `Approve records your approval of the Stack's current plan
(status.plan.digest): an entry {digest, approvedBy: you} in
spec.approvals.entries, and spec.approvedPlan set to the digest. Approving
needs the verb approve on stacks.convoy.dev in the Stack's namespace
(ClusterRole convoy-approver); the admission policy convoy controller
install adds refuses the write otherwise, and refuses an entry that names
another user. With spec.approvals.required N, the plan waits for N
distinct users. Once approved, the controller applies it exactly as planned:
if anything it observed moved meanwhile, the controller refuses it as stale
and plans again, and the new plan needs approval again. With --plan the
digest must be the current plan's, so that what you reviewed is what you
approve. Read the plan with: kubectl get configmap convoy-plan-STACK -o
jsonpath='{.data.plan\.txt}'.

A plan that policies deny (status.plan.deniedBy) is never applied, whatever
the approval mode, unless approved with --allow-policy NAME for each denying
policy: the override holds for that plan only and is recorded in the
release history.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return o.Run(cmd.Context(), s)
		},
	}
	o.add(cmd)
	cmd.Flags().StringVarP(&o.Namespace, "namespace", "n", "", "the Stack's namespace (default: the kubeconfig context's)")
	cmd.Flags().StringVar(&o.Plan, "plan", "", "the plan digest you reviewed; refused unless it is the current plan's")
	cmd.Flags().StringArrayVar(&o.AllowPolicies, "allow-policy", nil, "override this policy's denials of the plan (repeatable; each denying policy must be named)")
	return cmd
}

func (o approveOptions) Run(ctx context.Context, s streams) error {
	c, ns, err := o.connect(o.Namespace)
	if err != nil {
		return err
	}
	a, err := ctl.ApprovePlan(ctx, c, ctl.ApproveRequest{Namespace: ns, Name: o.Name, Plan: o.Plan, AllowPolicies: o.AllowPolicies})
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "Approved plan %s of Stack %s/%s as %s.\n", a.Digest, ns, o.Name, a.By)
	if !a.Complete {
		fmt.Fprintf(s.Out, "It has %d of %d approvals (%s): it waits for %d more by other users.\n",
			len(a.Approval.ApprovedBy), a.Approval.Required, strings.Join(a.Approval.ApprovedBy, ", "), int(a.Approval.Required)-len(a.Approval.ApprovedBy))
	}
	return nil
}

type getStacksOptions struct {
	kubeFlags
	Namespace     string
	AllNamespaces bool
	// Output is "" or wide.
	Output string
}

func newGetCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get",
		Short: "List convoy objects in the cluster",
		Args:  cobra.NoArgs,
	}
	var o getStacksOptions
	stacks := &cobra.Command{
		Use:     "stacks",
		Aliases: []string{"stack"},
		Short:   "List Stack objects with their readiness, plan and revisions",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context(), s) },
	}
	o.add(stacks)
	stacks.Flags().StringVarP(&o.Namespace, "namespace", "n", "", "namespace (default: the kubeconfig context's)")
	stacks.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "every namespace")
	stacks.Flags().StringVarP(&o.Output, "output", "o", "", "wide: also the pulled source and who approved")
	cmd.AddCommand(stacks, newGetPipelinesCmd(s), newGetStackSetsCmd(s))
	return cmd
}

func (o getStacksOptions) Run(ctx context.Context, s streams) error {
	if o.Output != "" && o.Output != "wide" {
		return fmt.Errorf("--output %q: want wide (or none)", o.Output)
	}
	wide := o.Output == "wide"
	header := "NAMESPACE\tNAME\tREADY\tSTATUS\tPLAN\tAPPROVAL\tRELEASES\tAGE"
	if wide {
		header += "\tSOURCE\tAPPROVED-BY"
	}
	return getList(ctx, s, &o.kubeFlags, o.Namespace, o.AllNamespaces, "Stacks", ctl.ListStacks, header, func(st *v1alpha1.Stack) string {
		readyStatus, reason := "Unknown", ""
		if c := meta.FindStatusCondition(st.Status.Conditions, v1alpha1.CondReady); c != nil {
			readyStatus, reason = string(c.Status), c.Reason
		}
		planText := "-"
		if p := st.Status.Plan; p != nil {
			planText = p.Summary
			if p.HasChanges && st.Status.LastAppliedPlan != p.Digest {
				planText += " (" + shortDigest(p.Digest) + ")"
			}
		}
		var rels []string
		for _, r := range st.Status.Releases {
			rels = append(rels, fmt.Sprintf("%s:%d", r.Name, r.Revision))
		}
		approval := string(st.Spec.Approval)
		if approval == "" {
			approval = string(v1alpha1.ApprovalAuto)
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", st.Namespace, st.Name, readyStatus, reason, planText, approval,
			orDash(strings.Join(rels, ",")), duration.HumanDuration(time.Since(st.CreationTimestamp.Time)))
		if wide {
			src := "-"
			if st.Status.Source != nil {
				src = orDash(st.Status.Source.Ref)
			}
			row += fmt.Sprintf("\t%s\t%s", src, approvedByColumn(st))
		}
		return row
	})
}

func shortDigest(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// approvedByColumn says who approved the Stack's plan: the one waiting
// ("alice (1/2)"), else the one last applied ("-": applied without
// approval).
func approvedByColumn(st *v1alpha1.Stack) string {
	if a := st.Status.Approval; a != nil && a.Digest != st.Status.LastAppliedPlan {
		if a.Unrecorded {
			return "(unrecorded)"
		}
		return fmt.Sprintf("%s (%d/%d)", orDash(strings.Join(a.ApprovedBy, ",")), len(a.ApprovedBy), a.Required)
	}
	if a := st.Status.LastAppliedApproval; a != nil {
		if a.Unrecorded {
			return "(unrecorded)"
		}
		return orDash(strings.Join(a.ApprovedBy, ","))
	}
	return "-"
}
