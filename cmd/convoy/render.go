package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/convoy-sh/convoy/internal/run"
	"github.com/spf13/cobra"
)

type renderOptions struct {
	Stack       stackFlags
	Cluster     clusterFlags
	Release     string
	Selectors   []string
	KubeVersion string
	APIVersions []string
	IncludeCRDs bool
	OutDir      string
	Parallelism int
}

func newRenderCmd(s streams) *cobra.Command {
	o := renderOptions{}
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Render releases offline, exactly as helm template would",
		Long: `Render renders the stack's releases with convoy's chart engine, offline.

With --release, the output is byte for byte what
  helm template NAME CHART --namespace NS -f <values...> --set ...
prints for that release. Without it, every release is rendered (in parallel,
each distinct chart loaded once) and each output follows a line
  # Release: NAME (NAMESPACE)
in the stack's release order.

A release block that count was added to (or removed from) keeps the Helm
name its records have, as plan and apply give it: for such a stack render
reads the release records' names from the clusters (--kubeconfig), and
warns and uses the configuration's names when it cannot.

A release whose values read another release's outputs (revision, status,
resources) is rendered with what that release has deployed: its newest
deployed record and its live objects, read from its cluster (--kubeconfig),
as a plan reads them. When the dependency is not deployed, render says so,
naming it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), s)
		},
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	addClusterFlags(cmd.Flags(), &o.Cluster)
	f := cmd.Flags()
	f.StringVar(&o.Release, "release", "", "render only this release: an address (release.api[\"eu\"]) or a Helm release name")
	addSelectorFlag(f, &o.Selectors, "render only")
	f.StringVar(&o.KubeVersion, "kube-version", "", "Kubernetes version for .Capabilities.KubeVersion (default v1.37.0, as helm template)")
	f.StringSliceVarP(&o.APIVersions, "api-versions", "a", nil, "extra API versions for .Capabilities.APIVersions")
	f.BoolVar(&o.IncludeCRDs, "include-crds", false, "include the charts' crds/ files in the output")
	f.IntVarP(&o.Parallelism, "parallelism", "p", runtime.GOMAXPROCS(0), "how many releases are rendered at once")
	f.StringVar(&o.OutDir, "out-dir", "", "write the manifests to files under this directory instead of stdout")
	f.StringVar(&o.OutDir, "output-dir", "", "the same as --out-dir (helm template's name)")
	_ = cmd.RegisterFlagCompletionFunc("release", completeReleases(&o.Stack, false))
	return cmd
}

func (o renderOptions) Run(ctx context.Context, s streams) error {
	if o.Parallelism < 1 {
		return errors.New("--parallelism must be at least 1")
	}
	src, err := o.Stack.source()
	if err != nil {
		return err
	}
	c := o.Cluster
	clusters := run.ClusterOptions{Kubeconfig: c.Kubeconfig, Context: c.Context, QPS: c.QPS, Burst: c.Burst, StorageDriver: c.StorageDriver, SQLConnection: os.Getenv("HELM_DRIVER_SQL_CONNECTION_STRING"), Warnings: s.Err}
	session, err := run.Open(ctx, run.Options{Source: src, Clusters: clusters, ChartCache: chartCache(), Parallelism: o.Parallelism})
	if err != nil {
		return err
	}
	defer session.Close()
	ls, results, err := session.Render(ctx, run.RenderRequest{
		Release: o.Release, Selectors: o.Selectors, KubeVersion: o.KubeVersion, APIVersions: o.APIVersions,
	})
	if err != nil {
		return err
	}
	if len(ls.Warnings) > 0 {
		if err := writeDiagnostics(s.Err, ls.Warnings, ls.Config.Files); err != nil {
			return err
		}
	}
	single := o.Release != ""
	failed := false
	for _, res := range results {
		if res.Err != nil {
			failed = true
			if single {
				return res.Err
			}
			var de *run.DiagnosticsError
			if errors.As(res.Err, &de) {
				if err := writeDiagnostics(s.Err, de.Diags, de.Files); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(s.Err, "Error: %v\n", res.AddrErr())
			continue
		}
		if o.OutDir != "" {
			dir := o.OutDir
			if !single {
				dir = filepath.Join(o.OutDir, res.Instance.Name)
			}
			if err := res.Out.WriteDir(dir, o.IncludeCRDs, func(p string) { fmt.Fprintf(s.Out, "wrote %s\n", p) }); err != nil {
				return err
			}
			continue
		}
		var b strings.Builder
		if !single {
			fmt.Fprintf(&b, "# Release: %s (%s)\n", res.Instance.Name, res.Instance.Namespace)
		}
		b.WriteString(res.Out.TemplateOutput(o.IncludeCRDs))
		if _, err := io.WriteString(s.Out, b.String()); err != nil {
			return err
		}
	}
	if failed {
		return errSilent
	}
	return nil
}
