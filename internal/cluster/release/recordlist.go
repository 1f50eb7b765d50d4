package release

import (
	"context"
	"fmt"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Records read by list (issue 26): a plan that needs the deployed records
// of many releases of a namespace whole reads them with one list of that
// namespace's deployed records instead of a GET each (LoadRecord). Which
// of the two a plan uses is the planner's decision (planner/records.go).

// maxWholePage bounds the page size of lists of whole records: a record
// holds its chart, and may be up to a megabyte.
const maxWholePage = 100

// DeployedRecords are the deployed records of a namespace as one list
// read them (ListDeployedRecords), by record name; each is decoded when
// asked (Load).
type DeployedRecords struct {
	byKey map[string]func() (*Release, error)
}

// Len is the number of records listed.
func (d *DeployedRecords) Len() int { return len(d.byKey) }

// Load returns the whole record of partial release r from the list, the
// record LoadRecord would read (the object of the same name, decoded the
// same way); false when the list does not hold it (r is not deployed, or
// was not when the list was read).
func (d *DeployedRecords) Load(r *Release) (*Release, bool, error) {
	decode, ok := d.byKey[recordKey(r.Name, r.Version)]
	if !ok {
		return nil, false, nil
	}
	full, err := decode()
	if err != nil {
		return nil, true, fmt.Errorf("release %s revision %d in namespace %s: %w", r.Name, r.Version, r.Namespace, err)
	}
	return full, true, nil
}

// ListDeployedRecords reads the deployed records of a namespace whole with
// one list (labels owner=helm and status=deployed; Secrets of Helm's record
// type only), page by page. Nothing is decoded until Load asks. It always
// asks the API server: the engine's Metadata holds no payloads.
func (e *Engine) ListDeployedRecords(ctx context.Context, namespace string) (*DeployedRecords, error) {
	if e.sql != nil {
		return e.sqlDeployedRecords(ctx, namespace)
	}
	_, fieldSelector := e.recordResource()
	limit := min(e.pageSize(), maxWholePage)
	d := NewKubeDriver(e.client, e.driver, namespace).(pagedLister)
	recs, err := d.listPaged(ctx, metav1.ListOptions{LabelSelector: "owner=helm,status=" + string(StatusDeployed), FieldSelector: fieldSelector, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := &DeployedRecords{byKey: make(map[string]func() (*Release, error), len(recs))}
	for _, r := range recs {
		out.byKey[r.name] = r.decode
	}
	return out, nil
}

// pagedLister lists records page by page without decoding them
// (kubeDriver).
type pagedLister interface {
	listPaged(ctx context.Context, opts metav1.ListOptions) ([]lazyRecord, error)
}

// listPaged implements pagedLister: every page of opts (its Limit set),
// following continue tokens; objects that are not records are left out.
func (d *kubeDriver[T, L]) listPaged(ctx context.Context, opts metav1.ListOptions) ([]lazyRecord, error) {
	var out []lazyRecord
	for {
		list, err := d.client.List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list release records in namespace %q: %w", d.namespace, kube.Forbidden(err))
		}
		items := d.records.items(list)
		for _, obj := range items {
			if _, ok := d.records.payload(obj); !ok {
				continue
			}
			out = append(out, lazyRecord{name: obj.GetName(), labels: obj.GetLabels(), namespace: obj.GetNamespace(), decode: func() (*Release, error) { return d.read(obj) }})
		}
		next := ""
		if l, ok := any(list).(metav1.ListInterface); ok {
			next = l.GetContinue()
		}
		if next == "" {
			return out, nil
		}
		if len(items) == 0 {
			return nil, fmt.Errorf("list release records in namespace %q: an empty page with a continue token", d.namespace)
		}
		opts.Continue = next
	}
}
