package release

import (
	"context"
	"slices"
	"strconv"
)

// Newest is the newest record of one release, as an import reads it.
type Newest struct {
	Name, Namespace string
	// Revision and Status are the record object's labels.
	Revision int
	Status   Status
	// Release is the decoded record; nil when Err says why it could not
	// be decoded.
	Release *Release
	Err     error
}

// NewestRecords reads, with one list request, the newest record of every
// release of a namespace ("" for every namespace), decoding only those. A
// record that fails to decode is returned with its error instead of
// failing the others: what an import of many releases needs.
func (e *Engine) NewestRecords(ctx context.Context, namespace string) ([]Newest, error) {
	recs, err := e.lazyRecords(namespace).listLazy(ctx, map[string]string{"owner": "helm"})
	if err != nil {
		return nil, err
	}
	type key struct{ ns, name string }
	newest := map[key]lazyRecord{}
	versions := map[key]int{}
	var undecodable []Newest
	for _, r := range recs {
		v, err := strconv.Atoi(r.labels["version"])
		name := r.labels["name"]
		if err != nil || name == "" {
			// Not labelled as Helm labels records: decode it to know.
			full, err := r.decode()
			if err != nil {
				undecodable = append(undecodable, Newest{Name: name, Namespace: r.namespace, Err: err})
				continue
			}
			name, v = full.Name, full.Version
			r.decode = func() (*Release, error) { return full, nil }
		}
		k := key{r.namespace, name}
		if old, ok := versions[k]; ok && old >= v {
			continue
		}
		newest[k], versions[k] = r, v
	}
	out := undecodable
	for k, r := range newest {
		n := Newest{Name: k.name, Namespace: k.ns, Revision: versions[k], Status: Status(r.labels["status"])}
		n.Release, n.Err = r.decode()
		if n.Release != nil {
			n.Status = n.Release.Info.Status
		}
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b Newest) int {
		if a.Namespace != b.Namespace {
			if a.Namespace < b.Namespace {
				return -1
			}
			return 1
		}
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out, nil
}
