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
	"text/tabwriter"
	"time"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/convoy-sh/convoy/internal/resolve"
	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"
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
}

func newApplyCmd(s streams) *cobra.Command {
	var o applyOptions
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Install or upgrade every release of the stack in dependency order",
		Long: `Apply renders every release of the stack and installs or upgrades it, in
dependency order, with Helm's hooks, waits and atomic rollback. Releases this
stack deployed earlier that are no longer in its files are uninstalled. A
release whose dependency failed is skipped; independent releases go on.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context(), s) },
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	addClusterFlags(cmd.Flags(), &o.Cluster)
	cmd.Flags().BoolVar(&o.AutoApprove, "auto-approve", false, "apply without asking for confirmation (required when not on a terminal)")
	cmd.Flags().BoolVar(&o.ForceConflicts, "force-conflicts", false, "take over fields owned by other field managers (server-side apply)")
	return cmd
}

// isTerminal reports whether r is an interactive terminal.
func isTerminal(r io.Reader) bool {
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

// outcome is one row of the final report.
type outcome struct {
	Addr      string
	Name      string
	Namespace string
	Action    string // install, upgrade, uninstall, skipped
	Revision  int
	Status    string
	Duration  time.Duration
	Err       error
}

func (o applyOptions) Run(ctx context.Context, s streams) error {
	st, order, err := loadOrdered(ctx, o.Stack, s)
	if err != nil {
		return err
	}
	if err := confirm(s, o.AutoApprove, fmt.Sprintf("Apply %d releases of stack %q?", len(order), st.Name)); err != nil {
		return err
	}
	engines := newEngines(o.Cluster, s.Err)
	charts := resolve.NewCharts()
	applied := map[config.ReleaseInstanceAddr]config.AppliedRelease{}
	failed := map[config.ReleaseInstanceAddr]bool{}
	var results []outcome
	for _, addr := range order {
		inst := st.Release(addr)
		res := outcome{Addr: addr.String(), Name: inst.Name, Namespace: inst.Namespace}
		if dep := firstFailedDependency(inst, failed); dep != "" {
			res.Action, res.Status = "skipped", "dependency "+dep+" failed"
			failed[addr] = true
			results = append(results, res)
			continue
		}
		start := time.Now()
		rel, action, err := o.applyOne(ctx, st, inst, applied, engines, charts)
		res.Duration = time.Since(start)
		res.Action = action
		if rel != nil {
			res.Revision, res.Status = rel.Version, string(rel.Info.Status)
			applied[addr] = config.AppliedRelease{Revision: rel.Version, Status: string(rel.Info.Status)}
		}
		if err != nil {
			res.Err = err
			if res.Status == "" {
				res.Status = "failed"
			}
			failed[addr] = true
		}
		results = append(results, res)
	}
	removed, err := uninstallRemoved(ctx, st, engines, failed)
	results = append(results, removed...)
	writeOutcomes(s.Out, results)
	if err != nil {
		return err
	}
	for _, r := range results {
		if r.Err != nil {
			return &exitError{code: 1, err: fmt.Errorf("%s: %w", r.Addr, r.Err)}
		}
	}
	return nil
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

func firstFailedDependency(inst *config.ReleaseInstance, failed map[config.ReleaseInstanceAddr]bool) string {
	for _, d := range inst.DependsOn {
		if failed[d.Addr] {
			return d.Addr.String()
		}
	}
	return ""
}

// applyOne deploys one release instance, re-evaluating it first when its
// values depend on what its dependencies' apply produced.
func (o applyOptions) applyOne(ctx context.Context, st *config.Stack, inst *config.ReleaseInstance, applied map[config.ReleaseInstanceAddr]config.AppliedRelease, engines *engines, charts *resolve.Charts) (*release.Release, string, error) {
	if !inst.Known {
		again, diags := st.EvaluateRelease(inst.Addr, applied)
		if diags.HasErrors() {
			return nil, "install", errors.New(diags.Error())
		}
		inst = again
	}
	r, err := resolve.Resolve(charts, st.Dir, inst)
	if err != nil {
		return nil, "install", err
	}
	eng, err := engines.forCluster(ctx, inst.Cluster)
	if err != nil {
		return nil, "install", err
	}
	action := "install"
	if last, err := eng.Storage(inst.Namespace).Last(ctx, inst.Name); err == nil && last.Info.Status != release.StatusUninstalled {
		action = "upgrade"
	}
	rel, err := eng.Deploy(ctx, requestFor(st, r, o.ForceConflicts))
	return rel, action, err
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

// uninstallRemoved uninstalls releases that carry this stack's label but
// are no longer in its files, on every cluster the stack uses. Nothing is
// removed while any release failed: a broken run must not delete more.
func uninstallRemoved(ctx context.Context, st *config.Stack, engines *engines, failed map[config.ReleaseInstanceAddr]bool) ([]outcome, error) {
	if len(failed) > 0 {
		return nil, nil
	}
	clusters := map[string]*config.ClusterSpec{"": nil}
	inStack := map[string]bool{} // "cluster/namespace/name"
	for _, r := range st.Releases {
		key := ""
		if r.Cluster != nil {
			key = r.Cluster.Name
			clusters[key] = r.Cluster
		}
		inStack[key+"/"+r.Namespace+"/"+r.Name] = true
	}
	var out []outcome
	for _, key := range slices.Sorted(maps.Keys(clusters)) {
		eng, err := engines.forCluster(ctx, clusters[key])
		if err != nil {
			return out, err
		}
		recs, err := eng.Storage("").Driver.List(ctx, map[string]string{"owner": "helm", stackLabel: st.Name})
		if err != nil {
			return out, err
		}
		latest := map[string]*release.Release{}
		for _, r := range recs {
			k := key + "/" + r.Namespace + "/" + r.Name
			if cur := latest[k]; cur == nil || r.Version > cur.Version {
				latest[k] = r
			}
		}
		for _, k := range slices.Sorted(maps.Keys(latest)) {
			r := latest[k]
			if inStack[k] || r.Info.Status == release.StatusUninstalled {
				continue
			}
			start := time.Now()
			_, err := eng.Uninstall(ctx, release.UninstallRequest{Name: r.Name, Namespace: r.Namespace, Wait: true})
			res := outcome{Addr: "(removed) " + r.Name, Name: r.Name, Namespace: r.Namespace, Action: "uninstall", Revision: r.Version, Status: "uninstalled", Duration: time.Since(start), Err: err}
			if err != nil {
				res.Status = "failed"
			}
			out = append(out, res)
		}
	}
	return out, nil
}

func writeOutcomes(w io.Writer, rs []outcome) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RELEASE\tNAMESPACE\tACTION\tREVISION\tSTATUS\tDURATION")
	for _, r := range rs {
		rev := "-"
		if r.Revision > 0 {
			rev = fmt.Sprint(r.Revision)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Namespace, r.Action, rev, r.Status, r.Duration.Round(10*time.Millisecond))
	}
	tw.Flush()
	for _, r := range rs {
		if r.Err != nil {
			fmt.Fprintf(w, "\n%s (%s/%s): %s\n", r.Addr, r.Namespace, r.Name, strings.TrimSpace(r.Err.Error()))
		}
	}
}
