package release

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"sync"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/chart/postrender"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// LookupsAnnotation lists, on a deployed record whose chart calls lookup,
// the objects its rendering looked up and how each was when the deploy
// ended (uid and resourceVersion, or absent). The record carries its
// fingerprint only when a rendering made then, with those answers, was
// the revision's own: a plan that finds each of them as recorded (from
// the metadata it lists anyway) knows the chart renders as deployed
// without rendering it (docs/performance.md).
const LookupsAnnotation = "convoy.dev/lookups"

// Lookup is an object a rendering looked up, as LookupsAnnotation
// records it: absent when UID is "".
type Lookup struct {
	Ref                  kube.Ref
	UID, ResourceVersion string
}

// Settle writes on rel, the deployed record of p, what lets later plans
// prove it unchanged from metadata (docs/performance.md):
//   - a chart with crds/: the CRDs (CRDsAnnotation);
//   - a chart that calls lookup (and nothing volatile): its fingerprint,
//     with each object it looked up as the deploy left it
//     (LookupsAnnotation), when a rendering made now, with those answers,
//     is the revision's;
//   - a chart that reads .Capabilities, when this run wrote CRDs (its own
//     crds/ or another release's): its fingerprint with the capabilities
//     the cluster has now, which the next plan computes, when the revision
//     renders the same with them. Without it, every such release deployed
//     in the run that installed kube-prometheus-stack's CRDs would read
//     as changed.
//
// A rendering that reads the clock or random numbers, lists objects, or
// now renders otherwise keeps the record as it is: plans render it.
// Execute settles the records it writes deployed; planner/plannertest, which
// deploys without it, calls it itself.
func (e *Engine) Settle(ctx context.Context, p *Prepared, rel *Release) {
	e.settleCRDs(ctx, p, rel)
	req := p.Request
	if req.Fingerprint == "" || req.Chart == nil || p.Rendered.Volatile || req.PostRender.Exec != nil || rel.Labels[AppliedLabel] == "" {
		return
	}
	if fingerprintWith(req, e.caps) != req.Fingerprint {
		return // another chart than the one planned (a saved plan's)
	}
	caps := e.currentCaps()
	newCaps := caps != e.caps && req.Chart.UsesCapabilities()
	if !p.Rendered.Impure && !newCaps {
		e.fresh.deployed(p, rel, caps) // p.record's label holds
		return
	}
	rec, same := e.rendersAsDeployed(ctx, p, caps)
	if !same {
		return
	}
	if p.Rendered.Impure {
		v, err := encodeLookups(rec.seen)
		if err != nil {
			return
		}
		if rel.Annotations == nil {
			rel.Annotations = map[string]string{}
		}
		rel.Annotations[LookupsAnnotation] = v
	}
	rel.Labels[FingerprintLabel] = RevisionFingerprint(fingerprintWith(req, caps), p.Revision)
	e.fresh.deployed(p, rel, caps)
}

// rendersAsDeployed renders p's revision again with caps and the cluster
// as it is now, and reports whether that is p's rendering (manifest and
// hooks); the recorder says what its lookups found. A rendering that
// reads the clock or random numbers, or lists objects, is not.
func (e *Engine) rendersAsDeployed(ctx context.Context, p *Prepared, caps *chart.Capabilities) (*lookupRecorder, bool) {
	req := p.Request
	action := chart.ActionUpgrade
	if p.IsInstall {
		action = chart.ActionInstall
	}
	opts := e.RenderOptions(ctx, req, p.Revision, action)
	opts.Capabilities = caps
	// The cluster as the deploy left it, whatever answered the plan's.
	rec := &lookupRecorder{next: e.kube.Lookup(ctx), kc: e.kube}
	opts.Lookup = rec.lookup
	again, err := chart.Render(req.Chart, opts)
	if err != nil || again.Volatile || rec.listed {
		return rec, false
	}
	if err := postrender.Apply(ctx, again, req.Namespace, req.PostRender); err != nil {
		return rec, false
	}
	same := again.Manifest(false) == p.Rendered.Manifest(false) && reflect.DeepEqual(hooksFromChart(again.Hooks), hooksFromChart(p.Rendered.Hooks))
	return rec, same
}

// Resettle settles again the releases this engine deployed whose
// fingerprint holds capabilities the cluster no longer has: a release
// deployed before (or while) another release of the run wrote CRDs —
// bitnami's charts beside kube-prometheus-stack's, deployed in parallel
// — was fingerprinted with the kinds served before, and the next plan,
// computing it with today's, would find its inputs changed and plan it in
// full until an apply relabelled it. When its revision renders the same
// with the capabilities of now, its deployed record is relabelled with
// that fingerprint (no revision; a record no longer deployed is left
// alone). The run calls it once its releases are applied.
func (e *Engine) Resettle(ctx context.Context) {
	list := e.fresh.takeDeployed()
	if len(list) == 0 {
		return
	}
	caps := e.currentCaps()
	for _, d := range list {
		if sameCapabilities(d.caps, caps) {
			continue
		}
		if _, same := e.rendersAsDeployed(ctx, d.p, caps); !same {
			continue
		}
		label := RevisionFingerprint(fingerprintWith(d.p.Request, caps), d.revision)
		_ = e.Relabel(ctx, d.namespace, d.name, d.revision, map[string]string{FingerprintLabel: label})
	}
}

func sameCapabilities(a, b *chart.Capabilities) bool {
	return a == b || slices.Equal(a.APIVersions, b.APIVersions) && a.KubeVersion == b.KubeVersion
}

// settled is a release Settle fingerprinted with caps, for Resettle.
type settled struct {
	p               *Prepared
	namespace, name string
	revision        int
	caps            *chart.Capabilities
}

// freshCaps are an engine's capabilities once its run wrote CRDs, read
// from discovery again after each write (once, however many releases
// ask).
type freshCaps struct {
	mu           sync.Mutex
	writes, seen int
	caps         *chart.Capabilities
	// settled are the releases whose chart reads .Capabilities deployed
	// since the engine was made, with the capabilities fingerprinted.
	settled []settled
}

// deployed notes that p was deployed as rel, fingerprinted with caps,
// when its chart reads .Capabilities and rel carries a fingerprint.
func (f *freshCaps) deployed(p *Prepared, rel *Release, caps *chart.Capabilities) {
	if !p.Request.Chart.UsesCapabilities() || rel.Labels[FingerprintLabel] == "" {
		return
	}
	f.mu.Lock()
	f.settled = append(f.settled, settled{p: p, namespace: rel.Namespace, name: rel.Name, revision: rel.Version, caps: caps})
	f.mu.Unlock()
}

// takeDeployed returns the releases noted deployed and forgets them.
func (f *freshCaps) takeDeployed() []settled {
	f.mu.Lock()
	defer f.mu.Unlock()
	list := f.settled
	f.settled = nil
	return list
}

// wrote notes that the run wrote CRDs.
func (f *freshCaps) wrote() {
	f.mu.Lock()
	f.writes++
	f.mu.Unlock()
}

// currentCaps are the cluster's capabilities now: the engine's, unless
// its run wrote CRDs since it read them. Discovery failing, they stay the
// engine's.
func (e *Engine) currentCaps() *chart.Capabilities {
	f := e.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.writes == 0 {
		return e.caps
	}
	if f.seen != f.writes {
		disco := e.kube.Discovery()
		disco.Invalidate()
		caps, err := clusterCapabilities(disco)
		if err != nil {
			return e.caps
		}
		f.caps, f.seen = caps, f.writes
	}
	if slices.Equal(f.caps.APIVersions, e.caps.APIVersions) && f.caps.KubeVersion == e.caps.KubeVersion {
		return e.caps
	}
	return f.caps
}

// lookupRecorder wraps a rendering's lookups and records what each named
// one found; listed says a lookup listed objects (a namespace's or the
// cluster's), which no metadata of one object settles.
type lookupRecorder struct {
	next   chart.LookupFunc
	kc     *kube.Client
	mu     sync.Mutex
	seen   []Lookup
	listed bool
}

func (r *lookupRecorder) lookup(apiVersion, kind, namespace, name string) (map[string]any, error) {
	got, err := r.next(apiVersion, kind, namespace, name)
	if err != nil {
		return got, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == "" {
		r.listed = true
		return got, nil
	}
	gv, perr := schema.ParseGroupVersion(apiVersion)
	if perr != nil {
		r.listed = true
		return got, nil
	}
	ref := kube.Ref{Group: gv.Group, Version: gv.Version, Kind: kind, Namespace: namespace, Name: name}
	if namespaced, err := r.kc.IsNamespaced(gv.WithKind(kind)); err != nil {
		r.listed = true // unknown scope: not settled
		return got, nil
	} else if !namespaced {
		ref.Namespace = ""
	}
	l := Lookup{Ref: ref}
	if len(got) > 0 {
		u := unstructured.Unstructured{Object: got}
		l.UID, l.ResourceVersion = string(u.GetUID()), u.GetResourceVersion()
	}
	if !slices.Contains(r.seen, l) {
		r.seen = append(r.seen, l)
	}
	return got, nil
}

// encodeLookups is the LookupsAnnotation value of ls: a JSON array of
// [apiVersion, kind, namespace, name, uid, resourceVersion].
func encodeLookups(ls []Lookup) (string, error) {
	rows := make([][6]string, len(ls))
	for i, l := range ls {
		rows[i] = [6]string{l.Ref.APIVersion(), l.Ref.Kind, l.Ref.Namespace, l.Ref.Name, l.UID, l.ResourceVersion}
	}
	b, err := json.Marshal(rows)
	return string(b), err
}

// LookupsOf reads rec's LookupsAnnotation: the objects its rendering
// looked up, as they were when it was deployed. False when it has none
// or it does not decode.
func LookupsOf(rec *Release) ([]Lookup, bool) {
	v, ok := rec.Annotations[LookupsAnnotation]
	if !ok {
		return nil, false
	}
	var rows [][6]string
	if err := json.NewDecoder(bytes.NewReader([]byte(v))).Decode(&rows); err != nil {
		return nil, false
	}
	out := make([]Lookup, len(rows))
	for i, r := range rows {
		gv, err := schema.ParseGroupVersion(r[0])
		if err != nil {
			return nil, false
		}
		out[i] = Lookup{Ref: kube.Ref{Group: gv.Group, Version: gv.Version, Kind: r[1], Namespace: r[2], Name: r[3]}, UID: r[4], ResourceVersion: r[5]}
	}
	return out, true
}
