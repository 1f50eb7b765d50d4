package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/convoy-sh/convoy/internal/apply"
	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/convoy-sh/convoy/internal/resolve"
	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// stackLabel marks release records with the stack that owns them, so apply
// can find releases removed from the stack files.
const stackLabel = "convoy.dev/stack"

type applyOptions struct {
	Stack          stackFlags
	Cluster        clusterFlags
	AutoApprove    bool
	ForceConflicts bool
	Parallelism    int
	Atomic         bool
	NoProgress     bool
}

func newApplyCmd(s streams) *cobra.Command {
	var o applyOptions
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Install or upgrade every release of the stack in dependency order",
		Long: `Apply renders every release of the stack and installs or upgrades it, in
dependency order and in parallel where the graph allows, with Helm's hooks,
waits and atomic rollback. A release whose dependency failed is skipped;
independent releases go on. Releases this stack deployed earlier that are no
longer in its files are uninstalled when everything else succeeded. With
--atomic (or atomic = true in the stack block) a failure rolls back every
release this run changed. One apply per stack runs at a time.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context(), s) },
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	addClusterFlags(cmd.Flags(), &o.Cluster)
	addRunFlags(cmd.Flags(), &o.Parallelism, &o.NoProgress)
	cmd.Flags().BoolVar(&o.AutoApprove, "auto-approve", false, "apply without asking for confirmation (required when not on a terminal)")
	cmd.Flags().BoolVar(&o.ForceConflicts, "force-conflicts", false, "take over fields owned by other field managers (server-side apply)")
	cmd.Flags().BoolVar(&o.Atomic, "atomic", false, "if any release fails, roll back every release changed in this run")
	return cmd
}

func addRunFlags(fs *pflag.FlagSet, parallelism *int, noProgress *bool) {
	fs.IntVarP(parallelism, "parallelism", "p", 5, "how many releases may be applied at once")
	fs.BoolVar(noProgress, "no-progress", false, "plain timestamped log lines instead of the live view on a terminal")
}

// isTerminal reports whether r (or w) is an interactive terminal.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// confirm asks on a terminal; refuses without one unless auto-approved.
func confirm(s streams, autoApprove bool, question string) error {
	if autoApprove {
		return nil
	}
	if !isTerminal(s.In) {
		return errors.New("not running on a terminal: pass --auto-approve to proceed without confirmation")
	}
	fmt.Fprintf(s.Err, "%s Only 'yes' will be accepted: ", question)
	var answer string
	_, _ = fmt.Fscanln(s.In, &answer)
	if answer != "yes" {
		return errors.New("cancelled")
	}
	return nil
}

// forwarder hands engine events to the progress view, which exists only
// once the run's steps are known.
type forwarder struct {
	mu sync.Mutex
	to apply.Progress
}

func (f *forwarder) event(ev release.Event) {
	f.mu.Lock()
	p := f.to
	f.mu.Unlock()
	if p != nil {
		p.Event(ev)
	}
}

func (f *forwarder) set(p apply.Progress) {
	f.mu.Lock()
	f.to = p
	f.mu.Unlock()
}

func newProgress(s streams, noProgress bool, steps []*apply.Step) apply.Progress {
	rows := make([]apply.Row, len(steps))
	for i, st := range steps {
		rows[i] = apply.Row{ID: st.ID, Namespace: st.Namespace, Name: st.Name}
	}
	if !noProgress && isTerminal(s.Err) && os.Getenv("TERM") != "dumb" {
		return apply.NewLive(s.Err, rows)
	}
	return apply.NewLines(s.Err, rows)
}

func (o applyOptions) Run(ctx context.Context, s streams) error {
	st, order, err := loadOrdered(ctx, o.Stack, s)
	if err != nil {
		return err
	}
	if err := confirm(s, o.AutoApprove, fmt.Sprintf("Apply %d releases of stack %q?", len(order), st.Name)); err != nil {
		return err
	}
	fwd := &forwarder{}
	engines := newEngines(o.Cluster, fwd.event)
	unlock, err := lockStack(ctx, st, engines, "convoy apply")
	if err != nil {
		return err
	}
	defer unlock()
	steps, err := o.steps(ctx, st, order, engines)
	if err != nil {
		return err
	}
	progress := newProgress(s, o.NoProgress, steps)
	fwd.set(progress)
	results := apply.Execute(ctx, steps, apply.ExecOptions{Parallelism: o.Parallelism, Atomic: o.Atomic || st.Atomic, Progress: progress})
	progress.Close()
	fwd.set(nil)
	writeResults(s.Out, results)
	for _, r := range results {
		if r.Status != apply.Succeeded {
			return errSilent
		}
	}
	return nil
}

// clustersOf lists the cluster blocks a stack uses; "" is the default.
func clustersOf(st *config.Stack) map[string]*config.ClusterSpec {
	m := map[string]*config.ClusterSpec{"": nil}
	for _, r := range st.Releases {
		if r.Cluster != nil {
			m[r.Cluster.Name] = r.Cluster
		}
	}
	return m
}

// lockStack takes the stack's lock on every cluster it uses, or none.
func lockStack(ctx context.Context, st *config.Stack, engines *engines, command string) (func(), error) {
	clusters := clustersOf(st)
	var held []*apply.Lock
	unlock := func() {
		for _, l := range held {
			_ = l.Release(context.WithoutCancel(ctx))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(clusters)) {
		eng, err := engines.forCluster(ctx, clusters[key])
		if err != nil {
			unlock()
			return nil, err
		}
		l, err := apply.Acquire(ctx, eng.Client(), st.Name, command)
		if err != nil {
			unlock()
			return nil, err
		}
		held = append(held, l)
	}
	return unlock, nil
}

// steps builds the run: a deploy step per release instance (rendered when
// it starts, after its dependencies applied), then an uninstall step per
// release removed from the stack files, after every deploy.
func (o applyOptions) steps(ctx context.Context, st *config.Stack, order []config.ReleaseInstanceAddr, engines *engines) ([]*apply.Step, error) {
	charts := resolve.NewCharts()
	var steps []*apply.Step
	var deployIDs []string
	for _, addr := range order {
		inst := st.Release(addr)
		eng, err := engines.forCluster(ctx, inst.Cluster)
		if err != nil {
			return nil, err
		}
		var deps []string
		for _, d := range inst.DependsOn {
			deps = append(deps, d.Addr.String())
		}
		deployIDs = append(deployIDs, addr.String())
		steps = append(steps, &apply.Step{
			ID: addr.String(), Name: inst.Name, Namespace: inst.Namespace, DependsOn: deps,
			Kind: apply.StepDeploy, Engine: eng,
			Prepare: func(ctx context.Context, applied map[string]*release.Release) (*release.Prepared, error) {
				cur := inst
				if !inst.Known {
					av, err := appliedAttributes(ctx, st, inst, applied, engines)
					if err != nil {
						return nil, err
					}
					again, diags := st.EvaluateRelease(addr, av)
					if diags.HasErrors() {
						return nil, errors.New(diags.Error())
					}
					cur = again
				}
				r, err := resolve.Resolve(charts, st.Dir, cur)
				if err != nil {
					return nil, err
				}
				return eng.Prepare(ctx, requestFor(st, r, o.ForceConflicts))
			},
		})
	}
	removed, err := removedReleases(ctx, st, engines)
	if err != nil {
		return nil, err
	}
	for _, r := range removed {
		steps = append(steps, &apply.Step{
			ID: "removed:" + r.Namespace + "/" + r.Name, Name: r.Name, Namespace: r.Namespace,
			DependsOn: deployIDs, Kind: apply.StepUninstall, Engine: r.engine,
			Uninstall: release.UninstallRequest{Name: r.Name, Namespace: r.Namespace, Wait: true},
		})
	}
	return steps, nil
}

type removedRelease struct {
	Name, Namespace string
	engine          *release.Engine
}

// removedReleases finds releases that carry this stack's label but are no
// longer in its files, on every cluster the stack uses.
func removedReleases(ctx context.Context, st *config.Stack, engines *engines) ([]removedRelease, error) {
	clusters := clustersOf(st)
	inStack := map[string]bool{} // "cluster/namespace/name"
	for _, r := range st.Releases {
		key := ""
		if r.Cluster != nil {
			key = r.Cluster.Name
		}
		inStack[key+"/"+r.Namespace+"/"+r.Name] = true
	}
	var out []removedRelease
	for _, key := range slices.Sorted(maps.Keys(clusters)) {
		eng, err := engines.forCluster(ctx, clusters[key])
		if err != nil {
			return nil, err
		}
		recs, err := eng.Storage("").Driver.List(ctx, map[string]string{"owner": "helm", stackLabel: st.Name})
		if err != nil {
			return nil, err
		}
		latest := map[string]*release.Release{}
		for _, r := range recs {
			k := key + "/" + r.Namespace + "/" + r.Name
			if cur := latest[k]; cur == nil || r.Version > cur.Version {
				latest[k] = r
			}
		}
		for _, k := range slices.Sorted(maps.Keys(latest)) {
			if r := latest[k]; !inStack[k] && r.Info.Status != release.StatusUninstalled {
				out = append(out, removedRelease{Name: r.Name, Namespace: r.Namespace, engine: eng})
			}
		}
	}
	return out, nil
}

// writeResults prints the final table: every release's outcome and time,
// then the errors in full.
func writeResults(w io.Writer, rs []*apply.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RELEASE\tNAMESPACE\tACTION\tREVISION\tRESULT\tDURATION")
	for _, r := range rs {
		action := "deploy"
		switch {
		case r.Step.Kind == apply.StepUninstall:
			action = "uninstall"
		case r.Step.Kind == apply.StepNoOp:
			action = "no-op"
		case r.Release != nil && r.Release.Version == 1:
			action = "install"
		case r.Release != nil:
			action = "upgrade"
		}
		rev, result := "-", string(r.Status)
		switch {
		case r.Status == apply.Skipped:
			result += " (" + r.Reason + ")"
		case r.Step.Kind == apply.StepNoOp:
			result = "unchanged"
		case r.Step.Kind == apply.StepUninstall && r.Status == apply.Succeeded:
			result = "uninstalled"
		case r.Release != nil && r.Step.Kind == apply.StepDeploy:
			rev, result = fmt.Sprint(r.Release.Version), string(r.Release.Info.Status)
		}
		if r.Restored {
			result += ", restored"
		} else if r.RestoreErr != nil {
			result += ", restore failed"
		}
		dur := "-"
		if r.Duration > 0 {
			dur = r.Duration.Round(10 * time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Step.Name, r.Step.Namespace, action, rev, result, dur)
	}
	tw.Flush()
	for _, r := range rs {
		if r.Err != nil {
			fmt.Fprintf(w, "\n%s (%s/%s): %s\n", r.ID, r.Step.Namespace, r.Step.Name, strings.TrimSpace(r.Err.Error()))
		}
		if r.RestoreErr != nil {
			fmt.Fprintf(w, "\n%s: restoring failed: %s\n", r.ID, strings.TrimSpace(r.RestoreErr.Error()))
		}
	}
}

// loadOrdered evaluates the stack and orders its releases; diagnostics are
// printed and end the command.
func loadOrdered(ctx context.Context, f stackFlags, s streams) (*config.Stack, []config.ReleaseInstanceAddr, error) {
	ls, diags := f.loadStack(ctx)
	var order []config.ReleaseInstanceAddr
	if ls.Stack != nil {
		g, d := ls.Stack.Graph()
		diags = append(diags, d...)
		if !d.HasErrors() {
			var d2 = diags[:0:0]
			order, d2 = g.TopologicalOrder()
			diags = append(diags, d2...)
		}
	}
	if diags.HasErrors() {
		var files = ls.configFiles()
		if err := writeDiagnostics(s.Err, diags, files); err != nil {
			return nil, nil, err
		}
		return nil, nil, errSilent
	}
	return ls.Stack, order, nil
}

func (ls loadedStack) configFiles() map[string]*hcl.File {
	if ls.Config == nil {
		return nil
	}
	return ls.Config.Files
}

// requestFor turns a resolved release into the release engine's request.
func requestFor(st *config.Stack, r *resolve.Release, force bool) *release.Request {
	inst := r.Instance
	wait := release.WaitNone
	if inst.Wait {
		wait = release.WaitReady
		if inst.WaitForJobs {
			wait = release.WaitReadyAndJobs
		}
	}
	labels := maps.Clone(inst.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[stackLabel] = st.Name
	return &release.Request{
		Name:            inst.Name,
		Namespace:       inst.Namespace,
		Chart:           r.Chart,
		Values:          r.Values,
		CreateNamespace: inst.CreateNamespace,
		Wait:            wait,
		Timeout:         inst.Timeout,
		Atomic:          inst.Atomic,
		CleanupOnFail:   inst.CleanupOnFail,
		HistoryMax:      inst.HistoryMax,
		DisableHooks:    inst.DisableHooks,
		TakeOwnership:   inst.TakeOwnership,
		ForceConflicts:  force,
		Labels:          labels,
	}
}
