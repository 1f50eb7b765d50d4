package release

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/chart/postrender"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Histories reads every release record of a namespace with one list
// request and groups them by release name, oldest first: what a plan of
// many releases reads instead of one request per release. Only the newest
// and the newest deployed record of each release are decoded (a record
// holds its chart: decoding them all was a seventh of a plan's CPU); the
// others carry their name, namespace, revision, status and labels, from
// their record's labels.
func (e *Engine) Histories(ctx context.Context, namespace string) (map[string][]*Release, error) {
	recs, err := e.lazyRecords(namespace).listLazy(ctx, map[string]string{"owner": "helm"})
	if err != nil {
		return nil, err
	}
	return historiesOf(recs)
}

// history is one release's records, oldest first, as Histories reads
// them (the newest and the newest deployed decoded), read from the
// engine's storage, never a cache: what a deploy prepares from. An upgrade
// of a large release does not decode each of its history_max revisions
// to replace the newest.
func (e *Engine) history(ctx context.Context, namespace, name string) ([]*Release, error) {
	l, ok := e.records(namespace).(lazyLister)
	if !ok {
		return e.Storage(namespace).History(ctx, name)
	}
	recs, err := l.listLazy(ctx, map[string]string{"owner": "helm", "name": name})
	if err != nil {
		return nil, err
	}
	hs, err := historiesOf(recs)
	if err != nil {
		return nil, err
	}
	return hs[name], nil
}

// historiesOf groups records by release name, oldest first, decoding the
// newest and the newest deployed of each.
func historiesOf(recs []lazyRecord) (map[string][]*Release, error) {
	type entry struct {
		rec     lazyRecord
		version int
	}
	groups := map[string][]entry{}
	for _, r := range recs {
		v, err := strconv.Atoi(r.labels["version"])
		if err != nil || r.labels["name"] == "" {
			// Not labelled as Helm labels records: decode it to know.
			full, err := r.decode()
			if err != nil {
				return nil, err
			}
			groups[full.Name] = append(groups[full.Name], entry{lazyRecord{labels: map[string]string{"name": full.Name, "status": string(full.Info.Status)}, decode: func() (*Release, error) { return full, nil }}, full.Version})
			continue
		}
		groups[r.labels["name"]] = append(groups[r.labels["name"]], entry{r, v})
	}
	out := make(map[string][]*Release, len(groups))
	for name, es := range groups {
		slices.SortFunc(es, func(a, b entry) int { return a.version - b.version })
		deployed := -1
		for i, e := range es {
			if Status(e.rec.labels["status"]) == StatusDeployed {
				deployed = i
			}
		}
		h := make([]*Release, len(es))
		for i, e := range es {
			if i == len(es)-1 || i == deployed {
				var err error
				if h[i], err = e.rec.decode(); err != nil {
					return nil, err
				}
				continue
			}
			r := &Release{Name: name, Namespace: e.rec.namespace, Version: e.version, Info: &Info{Status: Status(e.rec.labels["status"])}}
			r.fromObjectLabels(e.rec.labels)
			h[i] = r
		}
		out[name] = h
	}
	return out, nil
}

// PrepareWithHistory is Prepare with the release's history already read
// (oldest first, as Histories returns it).
func (e *Renderer) PrepareWithHistory(ctx context.Context, req *Request, history []*Release) (*Prepared, error) {
	if req.Fingerprint == "" {
		req.Fingerprint = e.Fingerprint(req)
	}
	p, err := e.observeHistory(req, history)
	if err != nil {
		return nil, err
	}
	action := chart.ActionUpgrade
	if p.IsInstall {
		action = chart.ActionInstall
	}
	rendered, err := e.RenderRevision(ctx, req, p.Revision, action)
	if err != nil {
		return nil, err
	}
	return p, e.build(p, rendered)
}

// PrepareRenderedWithHistory is PrepareRendered with the history already
// read.
func (e *Renderer) PrepareRenderedWithHistory(req *Request, history []*Release, rendered *chart.Rendered) (*Prepared, error) {
	p, err := e.observeHistory(req, history)
	if err != nil {
		return nil, err
	}
	return p, e.build(p, rendered)
}

// RenderRevision renders req's chart as the given revision would see it,
// installing or upgrading the release (action), with the cluster's
// capabilities and live lookups. Plan uses it to tell whether the deployed
// revision, rendered again, is unchanged.
//
// Lookups of objects the rendering itself creates, which the cluster lacks,
// see them as the revision creates them when the chart reuses what it looks
// up (ownlookup.go): a generated password and the checksum of its Secret
// agree from the install on.
func (e *Renderer) RenderRevision(ctx context.Context, req *Request, revision int, action chart.ReleaseAction) (*chart.Rendered, error) {
	opts := e.RenderOptions(ctx, req, revision, action)
	live := opts.Lookup
	misses := &missRecorder{next: live}
	opts.Lookup = misses.lookup
	r, err := chart.Render(req.Chart, opts)
	if err != nil {
		return nil, err
	}
	if len(misses.missed) > 0 {
		if own := e.ownObjects(r, req.Namespace, misses.missed); len(own) > 0 {
			opts.Lookup = withOwnObjects(live, own)
			if second, err := chart.Render(req.Chart, opts); err == nil && e.reproduces(second, req.Namespace, own) {
				r = second
			}
		}
	}
	if err := postrender.Apply(ctx, r, req.Namespace, req.PostRender); err != nil {
		return nil, err
	}
	return r, nil
}

// RenderOptions are the options RenderRevision starts from (it answers
// lookups of the rendering's own objects itself, and applies the request's
// PostRender to what it renders). Plan renders variants of them (other
// values, lookups shared between renders), and applies the request's
// PostRender to what it renders.
func (e *Renderer) RenderOptions(ctx context.Context, req *Request, revision int, action chart.ReleaseAction) chart.RenderOptions {
	lookup := req.Lookups
	if lookup == nil {
		lookup = e.kube.Lookup(ctx)
	}
	return chart.RenderOptions{
		ReleaseName:  req.Name,
		Namespace:    req.Namespace,
		Revision:     revision,
		Action:       action,
		Capabilities: e.caps,
		UserValues:   req.Values,
		Lookup:       lookup,
		// A plan or an apply parses what it renders.
		KeepDocuments: true,
	}
}

// observeHistory is observe with the history given.
func (e *Renderer) observeHistory(req *Request, history []*Release) (*Prepared, error) {
	p := &Prepared{Request: req, History: history, Revision: 1}
	for _, r := range history {
		p.Last = r
		if r.Info.Status == StatusDeployed {
			p.Deployed = r
		}
	}
	if p.Last != nil && p.Last.Info.Status.IsPending() {
		return nil, pendingError(p.Last)
	}
	if p.Last != nil {
		if err := movingError(p.Last); err != nil {
			return nil, err
		}
	}
	p.IsInstall = p.Last == nil || (p.Last.Info.Status == StatusUninstalled && p.Deployed == nil)
	if p.Last != nil {
		p.Revision = p.Last.Version + 1
	}
	if base := cmp.Or(p.Deployed, p.Last); base != nil && base.Info.Status != StatusUninstalled {
		var err error
		if p.Previous, p.StoredAPIs, err = e.parseStored(base.Manifest, req.Name, req.Namespace, base.Version); err != nil {
			return nil, fmt.Errorf("previous revision %d of %s: %w", base.Version, req.Name, err)
		}
	}
	return p, nil
}

// TemplateOf is the chart template that rendered the object, or "".
func (p *Prepared) TemplateOf(ref kube.Ref) string { return p.sources.of(ref) }

// WithOwnership returns deep copies of objs carrying the release's
// ownership metadata, as Execute applies them: stored manifests lack it.
func WithOwnership(objs []*unstructured.Unstructured, name, namespace string) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopy()
	}
	setOwnership(out, name, namespace)
	return out
}

// RecordHooks are the hooks of a rendering as a release records them.
func RecordHooks(r *chart.Rendered) []*Hook { return hooksFromChart(r.Hooks) }

// IsKept reports whether obj is annotated helm.sh/resource-policy: keep
// (never deleted by an upgrade or uninstall).
func IsKept(obj *unstructured.Unstructured) bool {
	return obj.GetAnnotations()[annoResourcePolicy] == "keep"
}
