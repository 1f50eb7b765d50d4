package planner

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fieldDelta is one object of a rendering whose fields differ from the
// deployed revision's record of it.
type fieldDelta struct {
	ref   kube.Ref
	paths [][]string
}

func (f fieldDelta) String() string {
	ps := make([]string, len(f.paths))
	for i, p := range f.paths {
		ps[i] = strings.Join(p, ".")
	}
	return fmt.Sprintf("%s: %s", f.ref, strings.Join(ps, ", "))
}

// manifestDeltas pairs the objects of a rendering with the record's, in
// order, and lists the fields that differ. ok is false when the two do not
// hold the same objects (one added, removed or reordered), where fields
// say nothing: the caller keeps the generic reason.
func manifestDeltas(rd *release.Renderer, rendered, recorded, ns string) (deltas []fieldDelta, ok bool) {
	ra, err := rd.Parse(rendered, ns)
	if err != nil {
		return nil, false
	}
	rb, err := rd.Parse(recorded, ns)
	if err != nil || len(ra) != len(rb) {
		return nil, false
	}
	for i := range ra {
		a, b := ra[i], rb[i]
		if kube.RefOf(a) != kube.RefOf(b) {
			return nil, false
		}
		var paths [][]string
		diffPaths(withoutNulls(b.Object), withoutNulls(a.Object), nil, &paths)
		if len(paths) > 0 {
			deltas = append(deltas, fieldDelta{ref: kube.RefOf(a), paths: paths})
		}
	}
	return deltas, true
}

// diffPaths appends the paths at which a and b differ: map keys are
// followed, anything else (lists included) is compared whole.
func diffPaths(a, b any, at []string, out *[][]string) {
	ma, aok := a.(map[string]any)
	mb, bok := b.(map[string]any)
	if !aok || !bok {
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, append([]string(nil), at...))
		}
		return
	}
	keys := map[string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		diffPaths(ma[k], mb[k], append(at, k), out)
	}
}

// unsettled drops from deltas the fields that the live object already
// holds as rendered: what a template's lookup read of live state (grafana's
// lookupVolumeName fills spec.volumeName from the bound claim, absent when
// helm installed it). Applying those changes nothing, and they alone need
// no revision. What remains is a difference of the rendering.
func (c *computer) unsettled(ctx context.Context, rd *release.Renderer, rendered string, deltas []fieldDelta, ns string) ([]fieldDelta, error) {
	objs, err := rd.Parse(rendered, ns)
	if err != nil {
		return deltas, nil
	}
	byRef := map[kube.Ref]*unstructured.Unstructured{}
	for _, o := range objs {
		byRef[kube.RefOf(o)] = o
	}
	var out []fieldDelta
	for _, d := range deltas {
		var live *unstructured.Unstructured
		err := c.do(ctx, func() error {
			var err error
			live, err = c.view(rd).Get(ctx, d.ref)
			return err
		})
		if err != nil {
			return nil, err
		}
		if live == nil {
			out = append(out, d)
			continue
		}
		want := byRef[d.ref]
		left := fieldDelta{ref: d.ref}
		for _, p := range d.paths {
			rv, rok, _ := unstructured.NestedFieldNoCopy(want.Object, p...)
			lv, lok, _ := unstructured.NestedFieldNoCopy(live.Object, p...)
			if !rok || !lok || !reflect.DeepEqual(rv, lv) {
				left.paths = append(left.paths, p)
			}
		}
		if len(left.paths) > 0 {
			out = append(out, left)
		}
	}
	return out, nil
}
