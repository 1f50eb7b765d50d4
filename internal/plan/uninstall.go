package plan

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/kube"
	"github.com/convoy-sh/convoy/internal/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Clusters are the clusters a stack uses, by cluster block name; "" is the
// default cluster, included when a release has no cluster block (or the
// stack has no release, so that removing the last release uninstalls it).
func Clusters(st *config.Stack) map[string]*config.ClusterSpec {
	m := map[string]*config.ClusterSpec{}
	for _, r := range st.Releases {
		if r.Cluster != nil {
			m[r.Cluster.Name] = r.Cluster
		} else {
			m[""] = nil
		}
	}
	if len(m) == 0 {
		m[""] = nil
	}
	return m
}

// removed plans the uninstall of releases that carry this stack's label
// but are no longer in its files, on every cluster the stack uses.
func (c *computer) removed(ctx context.Context) ([]*ReleaseChange, error) {
	st := c.in.Stack
	clusters := Clusters(st)
	inStack := map[string]bool{}
	for _, r := range st.Releases {
		inStack[clusterName(r.Cluster)+"/"+r.Namespace+"/"+r.Name] = true
	}
	var out []*ReleaseChange
	for _, key := range slices.Sorted(maps.Keys(clusters)) {
		eng, err := c.in.Engine(ctx, clusters[key])
		if err != nil {
			return nil, err
		}
		var recs []*release.Release
		if err := c.do(ctx, func() error {
			recs, err = eng.Storage("").Driver.List(ctx, map[string]string{"owner": "helm", StackLabel: st.Name})
			return err
		}); err != nil {
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
			r := latest[k]
			if inStack[k] || r.Info.Status == release.StatusUninstalled {
				continue
			}
			rc, err := c.uninstall(ctx, eng, key, r)
			if err != nil {
				return nil, fmt.Errorf("removed release %s/%s: %w", r.Namespace, r.Name, err)
			}
			out = append(out, rc)
		}
	}
	return out, nil
}

func (c *computer) uninstall(ctx context.Context, eng *release.Engine, cluster string, r *release.Release) (*ReleaseChange, error) {
	rc := &ReleaseChange{
		Addr: "removed:" + r.Namespace + "/" + r.Name, Name: r.Name, Namespace: r.Namespace, Cluster: cluster,
		Action:   ActionUninstall,
		Observed: Observed{LastRevision: r.Version, LastStatus: string(r.Info.Status), ObjectVersions: map[string]string{}, ObjectHashes: map[string]string{}},
	}
	rc.Chart.Before = chartRef(r.Chart)
	for _, h := range r.Hooks {
		for _, ev := range h.Events {
			if ev == chart.HookPreDelete || ev == chart.HookPostDelete {
				rc.Hooks = append(rc.Hooks, HookRun{Name: h.Name, Kind: h.Kind, Path: h.Path, Events: []string{string(ev)}, Weight: h.Weight})
			}
		}
	}
	objs, err := eng.Kube().Parse(r.Manifest, r.Namespace)
	if err != nil {
		rc.Warnings = append(rc.Warnings, fmt.Sprintf("the recorded manifest of revision %d cannot be read: %v", r.Version, err))
		return rc, nil
	}
	kc := eng.Kube()
	for _, o := range slices.Backward(objs) {
		ref := kube.RefOf(o)
		if release.IsKept(o) {
			ch := objectChange(ref, ObjectNoOp)
			ch.Reason = "kept (helm.sh/resource-policy: keep)"
			rc.Objects = append(rc.Objects, ch)
			continue
		}
		var live *unstructured.Unstructured
		if err := c.do(ctx, func() error {
			var err error
			live, err = c.live(ctx, cluster, kc, ref)
			return err
		}); err != nil {
			return nil, err
		}
		if live == nil {
			continue
		}
		rc.Observed.ObjectVersions[ref.String()] = live.GetResourceVersion()
		rc.Observed.ObjectHashes[ref.String()] = contentHash(live)
		rc.Objects = append(rc.Objects, objectChange(ref, ObjectDelete))
	}
	return rc, nil
}
