package release

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Records as stored, payload untouched: what a move between drivers
// (recordmove.go) copies, so that the copy holds the very bytes helm or
// convoy wrote, whatever fields of helm's a decode would not keep.

// storedRecord is one record as its driver keeps it.
type storedRecord struct {
	key     string
	payload string
	// labels are a record object's, system labels (name, owner, status,
	// version, createdAt, modifiedAt) included.
	labels      map[string]string
	annotations map[string]string
	// version is the object's resourceVersion, the row's xmin.
	version   string
	rewritten bool
}

// revision is the record's version label.
func (r *storedRecord) revision() int {
	n, _ := strconv.Atoi(r.labels["version"])
	return n
}

// recordStore is a driver whose records can be read and written as
// stored (NewKubeDriver's and SQLRecords' drivers).
type recordStore interface {
	Driver
	// storedHistory is every record of release name, oldest first.
	storedHistory(ctx context.Context, name string) ([]*storedRecord, error)
	// createStored writes a new record as given; ErrReleaseExists when
	// the key exists.
	createStored(ctx context.Context, rec *storedRecord) error
	// relabelStored sets labels on the record (a nil value removes one),
	// leaving its payload and annotations as they are.
	relabelStored(ctx context.Context, key string, set map[string]*string) error
}

func sortStored(rs []*storedRecord) []*storedRecord {
	slices.SortFunc(rs, func(a, b *storedRecord) int { return cmp.Compare(a.revision(), b.revision()) })
	return rs
}

// storedHistory implements recordStore.
func (d *kubeDriver[T, L]) storedHistory(ctx context.Context, name string) ([]*storedRecord, error) {
	list, err := d.client.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(map[string]string{"name": name, "owner": "helm"}).String()})
	if err != nil {
		return nil, d.wrap(d.namespace, "sh.helm.release.v1."+name, err)
	}
	var out []*storedRecord
	for _, obj := range d.records.items(list) {
		payload, ok := d.records.payload(obj)
		if !ok {
			continue
		}
		out = append(out, &storedRecord{key: obj.GetName(), payload: payload, labels: obj.GetLabels(), annotations: obj.GetAnnotations(),
			version: obj.GetResourceVersion(), rewritten: payloadRewritten(obj.GetManagedFields())})
	}
	return sortStored(out), nil
}

// createStored implements recordStore.
func (d *kubeDriver[T, L]) createStored(ctx context.Context, rec *storedRecord) error {
	meta := metav1.ObjectMeta{Name: rec.key, Namespace: d.namespace, Labels: maps.Clone(rec.labels), Annotations: maps.Clone(rec.annotations)}
	_, err := d.client.Create(ctx, d.records.object(meta, rec.payload), metav1.CreateOptions{FieldManager: RecordFieldManager})
	if apierrors.IsAlreadyExists(err) {
		return ErrReleaseExists
	}
	if err != nil {
		return d.wrap(d.namespace, rec.key, err)
	}
	return nil
}

// relabelStored implements recordStore: an update conditional on the
// object as just read.
func (d *kubeDriver[T, L]) relabelStored(ctx context.Context, key string, set map[string]*string) error {
	obj, err := d.client.Get(ctx, key, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ErrReleaseNotFound
	}
	if err != nil {
		return d.wrap(d.namespace, key, err)
	}
	l := maps.Clone(obj.GetLabels())
	if l == nil {
		l = map[string]string{}
	}
	for k, v := range set {
		if v == nil {
			delete(l, k)
		} else {
			l[k] = *v
		}
	}
	obj.SetLabels(l)
	if _, err := d.client.Update(ctx, obj, metav1.UpdateOptions{FieldManager: RecordFieldManager}); err != nil {
		return d.wrap(d.namespace, key, err)
	}
	return nil
}

// storedHistory implements recordStore.
func (d *sqlDriver) storedHistory(ctx context.Context, name string) ([]*storedRecord, error) {
	rows, err := d.selectRows(ctx, true, "r.namespace = $1 AND r.name = $2 AND r.owner = 'helm'", d.namespace, name)
	if err != nil {
		return nil, d.wrap("", err)
	}
	out := make([]*storedRecord, len(rows))
	for i, row := range rows {
		out[i] = &storedRecord{key: row.key, payload: row.body, labels: row.objectLabels(), annotations: row.annotations, version: row.xmin, rewritten: row.rewritten}
	}
	return sortStored(out), nil
}

// createStored implements recordStore: the system labels are the row's
// columns, createdAt and modifiedAt kept.
func (d *sqlDriver) createStored(ctx context.Context, rec *storedRecord) error {
	custom := maps.Clone(rec.labels)
	for _, k := range systemLabels {
		delete(custom, k)
	}
	if err := checkLabels(custom); err != nil {
		return d.wrap(rec.key, err)
	}
	version, err := strconv.Atoi(rec.labels["version"])
	if err != nil {
		return d.wrap(rec.key, errors.New("the record has no version label"))
	}
	created, err := strconv.ParseInt(rec.labels["createdAt"], 10, 64)
	if err != nil {
		created = time.Now().Unix()
	}
	modified, _ := strconv.ParseInt(rec.labels["modifiedAt"], 10, 64)
	d.s.queries.Add(1)
	tx, err := d.s.db.BeginTx(ctx, nil)
	if err != nil {
		return d.wrap(rec.key, err)
	}
	defer tx.Rollback()
	var xmin string
	err = tx.QueryRowContext(ctx, `INSERT INTO releases_v1 (key, type, body, name, namespace, version, status, owner, createdAt, modifiedAt)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 'helm', $8, $9) ON CONFLICT (key, namespace) DO NOTHING RETURNING xmin::text`,
		rec.key, SecretType, textParam(rec.payload), rec.labels["name"], d.namespace, version, rec.labels["status"], created, modified).Scan(&xmin)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrReleaseExists
	}
	if err != nil {
		return d.wrap(rec.key, err)
	}
	if err := writeExtrasOf(ctx, tx, rec.key, d.namespace, xmin, custom, rec.annotations); err != nil {
		return d.wrap(rec.key, err)
	}
	if err := tx.Commit(); err != nil {
		return d.wrap(rec.key, err)
	}
	return nil
}

// relabelStored implements recordStore.
func (d *sqlDriver) relabelStored(ctx context.Context, key string, set map[string]*string) error {
	return d.relabel(ctx, key, "", set)
}
