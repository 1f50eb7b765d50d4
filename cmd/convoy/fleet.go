package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// hubFlags connect to the cluster that holds the registrations (the
// controller's): --kubeconfig of convoy cluster add is the registered
// cluster's.
type hubFlags struct {
	kubeFlags
}

func (f *hubFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.Kubeconfig, "hub-kubeconfig", "", "kubeconfig of the controller's cluster, where the registration is written (default $KUBECONFIG or ~/.kube/config)")
	cmd.Flags().StringVar(&f.Context, "hub-context", "", "context of --hub-kubeconfig")
}

type clusterAddOptions struct {
	hubFlags
	Namespace, Kubeconfig, Context string
	Labels                         map[string]string
	Allow                          []string
}

func newClusterCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Register clusters that StackSets deploy to (docs/fleet.md)",
		Args:  cobra.NoArgs,
	}
	var a clusterAddOptions
	add := &cobra.Command{
		Use:   "add NAME --kubeconfig FILE [--context C] [-l k=v,…] [-n NAMESPACE]",
		Short: "Register a cluster: a labelled Secret with its kubeconfig (no exec plugins, no file paths)",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return a.Run(cmd.Context(), s, args[0]) },
	}
	a.hubFlags.add(add)
	add.Flags().StringVar(&a.Kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to register (required)")
	add.Flags().StringVar(&a.Context, "context", "", "its context (default: its current context)")
	add.Flags().StringToStringVarP(&a.Labels, "labels", "l", nil, "labels StackSets select by (env=prod,region=eu)")
	add.Flags().StringSliceVar(&a.Allow, "allow-namespace", nil, "namespaces whose StackSets may select it under --tenancy strict (* for any)")
	add.Flags().StringVarP(&a.Namespace, "namespace", "n", "", "namespace of the registration (default: the kubeconfig context's)")
	_ = add.MarkFlagRequired("kubeconfig")

	var l clusterListOptions
	list := &cobra.Command{
		Use:   "list [-n NAMESPACE | -A]",
		Short: "List the registered clusters with their reachability and server version",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return l.Run(cmd.Context(), s) },
	}
	l.hubFlags.add(list)
	list.Flags().StringVarP(&l.Namespace, "namespace", "n", "", "namespace (default: the kubeconfig context's)")
	list.Flags().BoolVarP(&l.AllNamespaces, "all-namespaces", "A", false, "every namespace")
	list.Flags().DurationVar(&l.Timeout, "timeout", 5*time.Second, "how long each cluster is given to answer")
	cmd.AddCommand(add, list)
	return cmd
}

func (o clusterAddOptions) Run(ctx context.Context, s streams, name string) error {
	kc, err := os.ReadFile(o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	c, ns, err := o.connect(o.Namespace)
	if err != nil {
		return err
	}
	sec, err := ctl.RegisterCluster(ctx, c, ctl.RegisterRequest{
		Namespace: ns, Name: name, Kubeconfig: kc, Context: o.Context, Labels: o.Labels, AllowedNamespaces: o.Allow,
	})
	if err != nil {
		return fmt.Errorf("cluster %s: %w", name, err)
	}
	fmt.Fprintf(s.Out, "Registered cluster %s: v1 Secret %s/%s", name, sec.Namespace, sec.Name)
	if len(o.Labels) > 0 {
		fmt.Fprintf(s.Out, " (%s)", ctl.FormatLabels(o.Labels))
	}
	fmt.Fprintln(s.Out)
	return nil
}

type clusterListOptions struct {
	hubFlags
	Namespace     string
	AllNamespaces bool
	Timeout       time.Duration
}

func (o clusterListOptions) Run(ctx context.Context, s streams) error {
	c, ns, err := o.connect(o.Namespace)
	if err != nil {
		return err
	}
	if o.AllNamespaces {
		ns = ""
	}
	regs, err := ctl.ListClusters(ctx, c, ns, o.Timeout)
	if err != nil {
		return err
	}
	if len(regs) == 0 {
		fmt.Fprintln(s.Err, "No registered clusters.")
		return nil
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tSERVER\tREACHABLE\tVERSION\tLABELS\tALLOWED")
	for _, r := range regs {
		reach, version := "yes", r.Version
		if r.Err != nil {
			reach, version = "no: "+oneLine(r.Err.Error()), "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Namespace, r.Name, orDash(r.Server), reach, version, orDash(ctl.FormatLabels(r.Labels)), orDash(r.Allowed))
	}
	return tw.Flush()
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

type getStackSetsOptions struct {
	kubeFlags
	Namespace     string
	AllNamespaces bool
	Output        string
}

func newGetStackSetsCmd(s streams) *cobra.Command {
	var o getStackSetsOptions
	cmd := &cobra.Command{
		Use:     "stacksets",
		Aliases: []string{"stackset"},
		Short:   "List StackSet objects: their Stacks' readiness and, with -o wide, the fleet plan grouped by identical plan",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context(), s) },
	}
	o.add(cmd)
	cmd.Flags().StringVarP(&o.Namespace, "namespace", "n", "", "namespace (default: the kubeconfig context's)")
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "every namespace")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "wide: also the grouped plans and the steps")
	return cmd
}

func (o getStackSetsOptions) Run(ctx context.Context, s streams) error {
	if o.Output != "" && o.Output != "wide" {
		return fmt.Errorf("--output %q: want wide (or none)", o.Output)
	}
	wide := o.Output == "wide"
	header := "NAME\tREADY\tSTATUS\tSTACKS"
	if wide {
		header += "\tSTEPS\tPLANS"
	}
	header = namespaceColumn(o.AllNamespaces, "NAMESPACE", header)
	return getList(ctx, s, &o.kubeFlags, o.Namespace, o.AllNamespaces, "StackSets", ctl.ListStackSets, header, func(ss *v1alpha1.StackSet) string {
		ready, reason := ctl.ReadyOf(ss.Status.Conditions)
		row := fmt.Sprintf("%s\t%s\t%s\t%s", ss.Name, ready, reason, orDash(ss.Status.Summary))
		if wide {
			var steps []string
			for _, st := range ss.Status.Steps {
				steps = append(steps, fmt.Sprintf("%s: %s %s", st.Name, orDash(shortPipelineDigest(st.Digest)), st.Phase))
			}
			row += fmt.Sprintf("\t%s\t%s", orDash(strings.Join(steps, ", ")), orDash(ss.Status.PlanSummary))
		}
		return namespaceColumn(o.AllNamespaces, ss.Namespace, row)
	})
}

// showStackSet prints a StackSet's fleet plan (ctl.WriteFleetPlan).
func showStackSet(ctx context.Context, s streams, c client.Client, ns, name string) error {
	ss, err := ctl.GetStackSet(ctx, c, ns, name)
	if err != nil {
		return err
	}
	return ctl.WriteFleetPlan(s.Out, ss)
}

type stackSetPauseOptions struct {
	kubeFlags
	Namespace string
}

func newStackSetCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stackset",
		Short: "Pause and resume a StackSet's rollout, approve a group of its identical plans",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newStackSetApproveCmd(s))
	for _, verb := range []string{"pause", "resume"} {
		var o stackSetPauseOptions
		sub := &cobra.Command{
			Use:   verb + " NAME",
			Short: map[string]string{"pause": "Hold the rollout: no Stack is pinned to a new digest", "resume": "Let a paused rollout go on"}[verb],
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				c, ns, err := o.connect(o.Namespace)
				if err != nil {
					return err
				}
				if err := ctl.PauseStackSet(cmd.Context(), c, ns, args[0], verb == "pause"); err != nil {
					return err
				}
				fmt.Fprintf(s.Out, "StackSet %s/%s %sd.\n", ns, args[0], verb)
				return nil
			},
		}
		o.add(sub)
		sub.Flags().StringVarP(&o.Namespace, "namespace", "n", "", "namespace (default: the kubeconfig context's)")
		cmd.AddCommand(sub)
	}
	return cmd
}

type stackSetApproveOptions struct {
	kubeFlags
	Namespace  string
	Like, Step string
}

func newStackSetApproveCmd(s streams) *cobra.Command {
	var o stackSetApproveOptions
	cmd := &cobra.Command{
		Use:   "approve NAME [--like STACK] [--step STEP]",
		Short: "Approve, as you, every Stack of the StackSet that waits with the same plan (one group of the fleet plan)",
		Long: `Approve, as you, the current plan of every Stack of the StackSet that waits
for approval with the same plan: one group of the fleet plan (convoy show
--stackset NAME). Each Stack gets its own approval naming you, so you need
the verb approve on each, as for convoy approve. Without --like, the one
group waiting is approved; with several, --like STACK names the group by one
of its Stacks. --step approves only the Stacks of that rollout step.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := o.connect(o.Namespace)
			if err != nil {
				return err
			}
			res, err := ctl.ApproveGroup(cmd.Context(), c, ctl.GroupApproveRequest{Namespace: ns, Name: args[0], Like: o.Like, Step: o.Step})
			if err != nil {
				return err
			}
			by := ""
			if len(res.Approved) > 0 {
				by = " as " + res.Approved[0].By
			}
			fmt.Fprintf(s.Out, "Approved%s on %s: %s\n", by, ctl.Count(len(res.Stacks), "Stack", "Stacks"), res.Plan)
			for i, a := range res.Approved {
				state := fmt.Sprintf("%d of %d approvals", len(a.Approval.ApprovedBy), a.Approval.Required)
				if a.Complete {
					state = "approved: the controller applies it"
				}
				fmt.Fprintf(s.Out, "  %s: plan %s, %s\n", res.Stacks[i], a.Digest, state)
			}
			if len(res.Others) > 0 {
				fmt.Fprintf(s.Out, "Still waiting with other plans: %s\n", strings.Join(res.Others, "; "))
			}
			return nil
		},
	}
	o.add(cmd)
	cmd.Flags().StringVarP(&o.Namespace, "namespace", "n", "", "namespace (default: the kubeconfig context's)")
	cmd.Flags().StringVar(&o.Like, "like", "", "approve the group of this Stack's plan")
	cmd.Flags().StringVar(&o.Step, "step", "", "approve only the Stacks of this rollout step")
	return cmd
}
