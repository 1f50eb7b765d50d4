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
	"sync"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/resolve"
	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"
)

type renderOptions struct {
	Stack       stackFlags
	Release     string
	KubeVersion string
	APIVersions []string
	IncludeCRDs bool
	OutDir      string
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
in the stack's release order.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), s)
		},
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	f := cmd.Flags()
	f.StringVar(&o.Release, "release", "", "render only this release: an address (release.api[\"eu\"]) or a Helm release name")
	f.StringVar(&o.KubeVersion, "kube-version", "", "Kubernetes version for .Capabilities.KubeVersion (default v1.37.0, as helm template)")
	f.StringSliceVarP(&o.APIVersions, "api-versions", "a", nil, "extra API versions for .Capabilities.APIVersions")
	f.BoolVar(&o.IncludeCRDs, "include-crds", false, "include the charts' crds/ files in the output")
	f.StringVar(&o.OutDir, "out-dir", "", "write the manifests to files under this directory instead of stdout")
	return cmd
}

// renderResult is one release's output or error.
type renderResult struct {
	release *config.ReleaseInstance
	out     *chart.Rendered
	err     error
}

func (o renderOptions) Run(ctx context.Context, s streams) error {
	if o.KubeVersion != "" {
		if _, err := chart.ParseKubeVersion(o.KubeVersion); err != nil {
			return fmt.Errorf("invalid kube version '%s': %w", o.KubeVersion, err)
		}
	}
	ls, diags := o.Stack.loadStack(ctx)
	if len(diags) > 0 {
		var files map[string]*hcl.File
		if ls.Config != nil {
			files = ls.Config.Files
		}
		if err := writeDiagnostics(s.Err, diags, files); err != nil {
			return err
		}
	}
	if diags.HasErrors() || ls.Stack == nil {
		return errSilent
	}
	releases := ls.Stack.Releases
	if o.Release != "" {
		r, err := findRelease(ls.Stack, o.Release)
		if err != nil {
			return err
		}
		releases = []*config.ReleaseInstance{r}
	}
	results := o.renderAll(ctx, ls.Stack.Dir, releases)

	single := o.Release != ""
	failed := false
	for _, res := range results {
		if res.err != nil {
			failed = true
			if single {
				return res.err
			}
			fmt.Fprintf(s.Err, "Error: %s: %v\n", res.release.Addr, res.err)
			continue
		}
		if o.OutDir != "" {
			dir := o.OutDir
			if !single {
				dir = filepath.Join(o.OutDir, res.release.Name)
			}
			if err := writeRendered(s.Out, dir, res.out, o.IncludeCRDs); err != nil {
				return err
			}
			continue
		}
		var b strings.Builder
		if !single {
			fmt.Fprintf(&b, "# Release: %s (%s)\n", res.release.Name, res.release.Namespace)
		}
		b.WriteString(res.out.TemplateOutput(o.IncludeCRDs))
		if _, err := io.WriteString(s.Out, b.String()); err != nil {
			return err
		}
	}
	if failed {
		return errSilent
	}
	return nil
}

// renderAll renders releases in parallel (at most GOMAXPROCS at once),
// sharing loaded charts, and returns the results in input order.
func (o renderOptions) renderAll(ctx context.Context, dir string, releases []*config.ReleaseInstance) []renderResult {
	charts := newCharts()
	results := make([]renderResult, len(releases))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, r := range releases {
		results[i].release = r
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i].err = ctx.Err()
				return
			}
			defer func() { <-sem }()
			results[i].out, results[i].err = o.renderOne(charts, dir, r)
		})
	}
	wg.Wait()
	return results
}

func (o renderOptions) renderOne(charts *resolve.Charts, dir string, r *config.ReleaseInstance) (*chart.Rendered, error) {
	rel, err := resolve.Resolve(charts, dir, r)
	if err != nil {
		if errors.Is(err, resolve.ErrUnknown) {
			return nil, fmt.Errorf("values depend on attributes known only after apply: %w", err)
		}
		return nil, err
	}
	out, err := chart.Render(rel.Chart, chart.RenderOptions{
		ReleaseName: r.Name,
		Namespace:   r.Namespace,
		KubeVersion: o.KubeVersion,
		APIVersions: o.APIVersions,
		UserValues:  rel.Values,
	})
	if err != nil {
		return nil, errors.New(chart.HelmTemplateMessage(err))
	}
	return out, nil
}

// findRelease accepts an instance address or a Helm release name.
func findRelease(st *config.Stack, name string) (*config.ReleaseInstance, error) {
	if addr, diags := config.ParseReleaseInstanceAddr(name); !diags.HasErrors() {
		if r := st.Release(addr); r != nil {
			return r, nil
		}
	}
	var found *config.ReleaseInstance
	for _, r := range st.Releases {
		if r.Name == name {
			if found != nil {
				return nil, fmt.Errorf("release name %q is used by %s and %s; use an address", name, found.Addr, r.Addr)
			}
			found = r
		}
	}
	if found == nil {
		return nil, fmt.Errorf("no release %q in the stack", name)
	}
	return found, nil
}

// writeRendered writes one release's documents under dir the way
// `helm template --output-dir` does: one file per template path, documents
// appended in output order, "wrote FILE" on out for each write.
func writeRendered(out io.Writer, dir string, r *chart.Rendered, includeCRDs bool) error {
	written := map[string]bool{}
	write := func(name, data string) error {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		if written[p] {
			flags = os.O_APPEND | os.O_WRONLY
		}
		f, err := os.OpenFile(p, flags, 0o644)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f, "---\n# Source: %s\n%s\n", name, data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		written[p] = true
		_, err = fmt.Fprintf(out, "wrote %s\n", p)
		return err
	}
	if includeCRDs {
		for _, c := range r.CRDs {
			if err := write(c.Name, string(c.Data)); err != nil {
				return err
			}
		}
	}
	for _, m := range r.Manifests {
		if err := write(m.Path, m.Content); err != nil {
			return err
		}
	}
	for _, h := range r.Hooks {
		if err := write(h.Path, h.Manifest); err != nil {
			return err
		}
	}
	return nil
}
