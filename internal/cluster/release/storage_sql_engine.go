package release

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The engine's reads of record metadata (recordmeta.go, recordlist.go,
// Labelled, Relabel, Disown) on SQL storage: the same answers as from
// Secrets' metadata, each with one query.

// records is the driver of namespace's records ("" lists all).
func (e *Engine) records(namespace string) Driver {
	if e.sql != nil {
		return e.sql.Driver(namespace)
	}
	return NewKubeDriver(e.client, e.driver, namespace)
}

// SQL is the engine's SQL storage (nil: records live in the cluster).
func (e *Engine) SQL() *SQLRecords { return e.sql }

// sqlRecordMeta lists the records of a namespace without their bodies, as
// the metadata of the Secrets they would be: labels, annotations, and the
// managedFields that tell a record rewritten by another writer.
func (e *Engine) sqlRecordMeta(ctx context.Context, namespace string) ([]metav1.PartialObjectMetadata, error) {
	d := e.sql.Driver(namespace).(*sqlDriver)
	rows, err := d.selectRows(ctx, false, "r.namespace = $1 AND r.owner = 'helm' ORDER BY r.key", namespace)
	if err != nil {
		return nil, d.wrap("", err)
	}
	out := make([]metav1.PartialObjectMetadata, len(rows))
	for i, row := range rows {
		rec := memRecord{payloadBy: RecordFieldManager, objectsBy: RecordFieldManager, annotations: row.annotations}
		if row.rewritten {
			rec.payloadBy = "helm"
		}
		out[i] = metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: row.key, Namespace: row.namespace, ResourceVersion: row.xmin,
			Labels: row.objectLabels(), Annotations: row.annotations, ManagedFields: rec.managedFields(),
		}}
	}
	return out, nil
}

// sqlDeployedRecords reads a namespace's deployed records whole with one
// query.
func (e *Engine) sqlDeployedRecords(ctx context.Context, namespace string) (*DeployedRecords, error) {
	d := e.sql.Driver(namespace).(*sqlDriver)
	rows, err := d.selectRows(ctx, true, "r.namespace = $1 AND r.owner = 'helm' AND r.status = $2", namespace, string(StatusDeployed))
	if err != nil {
		return nil, d.wrap("", err)
	}
	out := &DeployedRecords{byKey: make(map[string]func() (*Release, error), len(rows))}
	for _, row := range rows {
		out.byKey[row.key] = func() (*Release, error) {
			r, err := row.release()
			if err != nil {
				return nil, d.wrap(row.key, err)
			}
			return r, nil
		}
	}
	return out, nil
}

// sqlLabelled is Labelled on SQL storage: one query across namespaces.
func (e *Engine) sqlLabelled(ctx context.Context, selector map[string]string, except []string) ([]RecordKey, error) {
	d := e.sql.Driver("").(*sqlDriver)
	where, args := d.selectorWhere(selector, nil)
	if len(except) > 0 {
		ph := make([]string, len(except))
		for i, ns := range except {
			args = append(args, ns)
			ph[i] = fmt.Sprintf("$%d", len(args))
		}
		where += " AND r.namespace NOT IN (" + strings.Join(ph, ", ") + ")"
	}
	q := "SELECT DISTINCT r.namespace, r.name FROM releases_v1 r WHERE " + where + " ORDER BY r.namespace, r.name"
	e.sql.queries.Add(1)
	rows, err := e.sql.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, d.wrap("", err)
	}
	defer rows.Close()
	var out []RecordKey
	for rows.Next() {
		var k RecordKey
		if err := rows.Scan(&k.Namespace, &k.Name); err != nil {
			return nil, d.wrap("", err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, d.wrap("", err)
	}
	return out, nil
}

// sqlDisown is Disown on SQL storage.
func (e *Engine) sqlDisown(ctx context.Context, namespace, name, stack string) error {
	d := e.sql.Driver(namespace).(*sqlDriver)
	recs, err := d.listLazy(ctx, map[string]string{"owner": "helm", "name": name, StackLabel: stack})
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := d.relabel(ctx, r.name, "", map[string]*string{StackLabel: nil, AddressLabel: nil, LetGoLabel: &stack}); err != nil {
			return fmt.Errorf("unlabel the record %s of release %s: %w", r.name, name, err)
		}
	}
	return nil
}

// sqlRelabel is Relabel on SQL storage.
func (e *Engine) sqlRelabel(ctx context.Context, namespace, key string, labels map[string]string) error {
	set := make(map[string]*string, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		v := labels[k]
		set[k] = &v
	}
	return e.sql.Driver(namespace).(*sqlDriver).relabel(ctx, key, string(StatusDeployed), set)
}
