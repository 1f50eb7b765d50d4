package run

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/chart/postrender"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
	"github.com/hashicorp/hcl/v2"
)

// RenderRequest says what to render offline and with which capabilities.
type RenderRequest struct {
	// Release renders only this release (address or Helm name); "" all.
	Release string
	// Selectors (-l) render only the releases whose labels match.
	Selectors   []string
	KubeVersion string
	APIVersions []string
}

// Rendered is one release's output, or its error.
type Rendered struct {
	Instance *config.ReleaseInstance
	Out      *chart.Rendered
	Err      error
}

// AddrErr is Err naming the release's address once.
func (r Rendered) AddrErr() error { return resolve.WithAddr(r.Instance.Addr, r.Err) }

// Render renders releases of the stack offline, exactly as helm template
// would: in parallel (at most o.Parallelism at once, default GOMAXPROCS), each distinct chart
// loaded once, results in the stack's release order.
func (s *Session) Render(ctx context.Context, req RenderRequest) (*Loaded, []Rendered, error) {
	if req.KubeVersion != "" {
		if _, err := chart.ParseKubeVersion(req.KubeVersion); err != nil {
			return nil, nil, fmt.Errorf("invalid kube version '%s': %w", req.KubeVersion, err)
		}
	}
	ls, err := s.loaded(false)
	if err != nil {
		return nil, nil, err
	}
	o := s.o
	keepRenderedNames(ctx, o, ls)
	releases := ls.Stack.Releases
	if req.Release != "" {
		r, err := ls.FindRelease(req.Release)
		if err != nil {
			return ls, nil, err
		}
		releases = []*config.ReleaseInstance{r}
	}
	if len(req.Selectors) > 0 {
		sel, diags := ls.Stack.Select(req.Selectors)
		if err := diagError(diags, ls.Config); err != nil {
			return ls, nil, err
		}
		releases = slices.DeleteFunc(slices.Clone(releases), func(r *config.ReleaseInstance) bool { return !slices.Contains(sel, r.Addr) })
	}
	charts := o.charts()
	results := make([]Rendered, len(releases))
	limit := o.Parallelism
	if limit < 1 {
		limit = runtime.GOMAXPROCS(0)
	}
	for i, r := range releases {
		results[i].Instance = r
		results[i].Err = context.Canceled // replaced when rendered
	}
	clusters := lazyClusters(o)
	err = forEach(ctx, limit, len(releases), func(i int) {
		r, err := deployedOutputs(ctx, ls, clusters, releases[i])
		if err != nil {
			results[i].Err = err
			return
		}
		results[i].Instance = r
		results[i].Out, results[i].Err = renderOne(ctx, charts, ls.Stack.Dir, r, req)
		results[i].Err = renderDiagnostics(ls, charts, r, results[i].Err)
	})
	if err != nil {
		for i := range results {
			if results[i].Out == nil && errors.Is(results[i].Err, context.Canceled) {
				results[i].Err = err
			}
		}
	}
	return ls, results, nil
}

// renderNamesTimeout bounds reading the records of moved releases: render
// is offline otherwise, and an unreachable cluster must not hold it up.
const renderNamesTimeout = 10 * time.Second

// keepRenderedNames gives the instances that count added or removed the
// Helm names their records have (keepMovedNames), so that render, -l
// name= and --release agree with plan and apply. Only stacks with a
// release block that sets count and no name read their clusters' records;
// when that fails the configuration's names are used, with a warning.
func keepRenderedNames(ctx context.Context, o Options, ls *Loaded) {
	// Only blocks with count may have kept a name from before count was
	// added: other stacks render offline, as helm template does.
	if !slices.ContainsFunc(ls.Stack.ImplicitMoves(), func(m config.ImplicitMove) bool { return m.CountAdded }) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, renderNamesTimeout)
	defer cancel()
	cl := o.forStack(ls.Stack).newClusters(nil)
	defer cl.Close()
	if err := ls.keepMovedNames(ctx, cl); err != nil {
		ls.Warnings = append(ls.Warnings, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Release names of moved instances not read",
			Detail:   fmt.Sprintf("Adding or removing count keeps a release's Helm name, which its records on the cluster hold; they could not be read (%v), so instances are rendered under the names the configuration gives them.", err),
		})
	}
}

func renderOne(ctx context.Context, charts *resolve.Charts, dir string, r *config.ReleaseInstance, req RenderRequest) (*chart.Rendered, error) {
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
		KubeVersion: req.KubeVersion,
		APIVersions: req.APIVersions,
		UserValues:  rel.Values,
	})
	if err != nil {
		return nil, errors.New(chart.HelmTemplateMessage(err))
	}
	if err := postrender.Apply(ctx, out, r.Namespace, postRender(r)); err != nil {
		return nil, err
	}
	return out, nil
}
