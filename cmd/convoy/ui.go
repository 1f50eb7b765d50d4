package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"runtime"

	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/ui"
	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
)

type uiOptions struct {
	stackRun
	Listen    string
	NoBrowser bool
	// Namespace is where the Stacks page starts when the user may not
	// list Stacks in all namespaces ("": the kubeconfig context's).
	Namespace string
	// Ready, when set, receives the URL once the server listens (tests).
	Ready func(url string)
}

func newUICmd(s streams) *cobra.Command {
	var o uiOptions
	cmd := &cobra.Command{
		Use:   "ui [PLAN_FILE]",
		Short: "Serve a web view of the Stacks, plans, Pipelines and StackSets you may see",
		Long: `UI serves a web application on 127.0.0.1 (a free port, or --listen ADDR): the
Stacks, Pipelines and StackSets of the cluster, each Stack's current plan
(impact, policies, value and object diffs masked as in the CLI, a
dependency graph), its conditions, history and events, with Approve
buttons, and each StackSet's steps, its Stacks' phases and its fleet plan. It reaches the
cluster with the credentials of --kubeconfig/--kube-context, so Kubernetes
RBAC decides what you see and may approve (docs/ui.md).

With -C DIR (and --var, --var-file, --env) it also shows the plan of that
stack directory, computed with your credentials; with PLAN_FILE, a saved
plan. No controller is needed for those.

It prints a URL with a random access token, as Jupyter does: the first visit
trades it for a cookie; a request with neither gets 401. It opens the
browser unless --no-browser, and serves until interrupted.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var planFile string
			if len(args) == 1 {
				planFile = args[0]
			}
			return o.Run(cmd.Context(), s, cmd.Flags().Changed("dir"), planFile)
		},
	}
	addStackRunFlags(cmd.Flags(), &o.stackRun)
	cmd.Flags().StringVar(&o.Listen, "listen", "127.0.0.1:0", "the address to serve on (port 0: a free one)")
	cmd.Flags().BoolVar(&o.NoBrowser, "no-browser", false, "print the URL only; do not open a browser")
	cmd.Flags().StringVarP(&o.Namespace, "namespace", "n", "", "when you may not list Stacks and Pipelines in all namespaces, show this one's (default: those you may list them in, and the kubeconfig context's)")
	return cmd
}

func (o uiOptions) Run(ctx context.Context, s streams, localDir bool, planFile string) error {
	if localDir && planFile != "" {
		return errors.New("convoy ui takes -C DIR or a PLAN_FILE, not both")
	}
	var uo ui.Options
	cfg, cfgErr := ctl.RestConfig(o.Cluster.Kubeconfig, o.Cluster.Context)
	if cfgErr == nil {
		b, err := ui.NewClusterBackend(cfg)
		if err != nil {
			return err
		}
		uo.Backend = b
		uo.Namespace = o.Namespace
		if uo.Namespace == "" {
			uo.Namespace = kubeconfigNamespace(o.Cluster.Kubeconfig, o.Cluster.Context)
		}
	}
	switch {
	case planFile != "":
		f, err := run.ReadPlanFile(planFile)
		if err != nil {
			return err
		}
		uo.Local = &ui.Local{Name: planFile, Plan: func(context.Context) (*plan.Plan, error) { return f.Plan, nil }}
	case localDir:
		opts, err := o.options(s)
		if err != nil {
			return err
		}
		uo.Local = &ui.Local{Name: o.Stack.Dir, Replan: true, Plan: func(ctx context.Context) (*plan.Plan, error) {
			session, err := run.Open(ctx, opts)
			if err != nil {
				return nil, err
			}
			defer session.Close()
			res, err := session.Plan(ctx, run.PlanRequest{Observe: run.ObserveMetadata})
			var foreign *plan.ForeignError
			if err != nil && !errors.As(err, &foreign) {
				return nil, err
			}
			return res.Plan, nil
		}}
	case cfgErr != nil:
		return cfgErr
	}
	srv, err := ui.New(uo)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", o.Listen, err)
	}
	url := srv.URL(ln.Addr().String())
	fmt.Fprintf(s.Out, "convoy ui: serving on %s (Ctrl-C stops it)\nOpen: %s\n", ln.Addr(), url)
	if cfgErr != nil {
		fmt.Fprintf(s.Err, "Warning: no cluster (%v): only the local plan is shown\n", cfgErr)
	}
	if !o.NoBrowser {
		openBrowser(url)
	}
	if o.Ready != nil {
		o.Ready(url)
	}
	return srv.Serve(ctx, ln)
}

// kubeconfigNamespace is the namespace of the kubeconfig's context
// ("default" when it names none, as for kubectl).
func kubeconfigNamespace(kubeconfig, context string) string {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).Namespace()
	if err != nil {
		return ""
	}
	return ns
}

// openBrowser opens url in the desktop's browser, if there is one; the
// printed URL is the way in either way.
func openBrowser(url string) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err == nil {
		go func() { _ = cmd.Wait() }()
	}
}
