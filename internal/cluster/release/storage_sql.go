package release

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/lib/pq"
)

// Helm's SQL storage (HELM_DRIVER=sql): release records in a PostgreSQL
// database, in exactly the tables, columns and migrations of helm's
// pkg/storage/driver/sql.go (v3.13 and later, v4), so that helm reads and
// writes the records convoy writes and the other way round:
//
//   - releases_v1: one row per revision: key (the record name,
//     sh.helm.release.v1.NAME.vN), type, body (Helm's payload,
//     base64(gzip(JSON)), as in a Secret), name, namespace, version,
//     status, owner, createdAt, modifiedAt (Unix seconds; unquoted in
//     helm's DDL, so the columns are createdat and modifiedat).
//   - custom_labels_v1: the record's labels other than the system ones
//     (releaseKey, releaseNamespace, key, value).
//   - gorp_migrations: sql-migrate's table of applied migrations, "init"
//     and "custom_labels".
//
// What a Secret keeps besides (convoy's annotations: ObjectsAnnotation)
// has no place in helm's tables: convoy keeps it in a table of its own,
// convoy_annotations_v1, which helm never reads. Each row says which
// version of the release row it was written with (the row's xmin): a row
// rewritten since by another writer (helm) is Rewritten, as a Secret whose
// payload another field manager wrote.
//
// Optimistic concurrency: a record's version (what a Secret's
// resourceVersion is) is its row's xmin, the transaction that last wrote
// it; an update is conditional on it (UPDATE … WHERE xmin = the one
// read), so what another operation wrote since is never overwritten.

const (
	sqlReleasesTable    = "releases_v1"
	sqlLabelsTable      = "custom_labels_v1"
	sqlAnnotationsTable = "convoy_annotations_v1"
	sqlMigrationsTable  = "gorp_migrations"
	// sqlLabelValueMax is the width of custom_labels_v1.value.
	sqlLabelValueMax = 63
)

// sqlMigrations are helm's, in helm's order, with helm's IDs and DDL.
var sqlMigrations = []struct{ id, up string }{
	{"init", `
CREATE TABLE releases_v1 (
	key VARCHAR(90),
	type VARCHAR(64) NOT NULL,
	body TEXT NOT NULL,
	name VARCHAR(64) NOT NULL,
	namespace VARCHAR(64) NOT NULL,
	version INTEGER NOT NULL,
	status TEXT NOT NULL,
	owner TEXT NOT NULL,
	createdAt INTEGER NOT NULL,
	modifiedAt INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY(key, namespace)
);
CREATE INDEX ON releases_v1 (key, namespace);
CREATE INDEX ON releases_v1 (version);
CREATE INDEX ON releases_v1 (status);
CREATE INDEX ON releases_v1 (owner);
CREATE INDEX ON releases_v1 (createdAt);
CREATE INDEX ON releases_v1 (modifiedAt);

GRANT ALL ON releases_v1 TO PUBLIC;

ALTER TABLE releases_v1 ENABLE ROW LEVEL SECURITY;
`},
	{"custom_labels", `
CREATE TABLE custom_labels_v1 (
	releaseKey VARCHAR(64),
	releaseNamespace VARCHAR(67),
	key VARCHAR(317),
	value VARCHAR(63)
);
CREATE INDEX ON custom_labels_v1 (releaseKey, releaseNamespace);

GRANT ALL ON custom_labels_v1 TO PUBLIC;
ALTER TABLE custom_labels_v1 ENABLE ROW LEVEL SECURITY;
`},
}

// sqlConvoyTables are convoy's own, outside sql-migrate's table (an ID
// helm does not know there would make helm's migration fail).
const sqlConvoyTables = `
CREATE TABLE IF NOT EXISTS convoy_annotations_v1 (
	releaseKey VARCHAR(90) NOT NULL,
	releaseNamespace VARCHAR(67) NOT NULL,
	key TEXT NOT NULL,
	value TEXT NOT NULL,
	writtenXmin TEXT NOT NULL,
	PRIMARY KEY (releaseKey, releaseNamespace, key)
);
`

// SQLRecords is a PostgreSQL database of release records in Helm's
// schema: one connection pool, shared by the drivers of every namespace.
// Close it when the run ends. Safe for concurrent use.
type SQLRecords struct {
	db   *sql.DB
	host string
	// queries counts the statements sent (tests count a plan's).
	queries atomic.Int64
}

// SQLHost is the host (and port) a connection string names, the only part
// of it errors and logs show: the string may hold a password.
func SQLHost(conn string) string {
	if u, err := url.Parse(conn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		if u.Host != "" {
			return u.Host
		}
		if h := u.Query().Get("host"); h != "" {
			return h
		}
		return "localhost"
	}
	host, port := "localhost", ""
	for _, f := range strings.Fields(conn) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, "'")
		switch k {
		case "host":
			host = v
		case "port":
			port = v
		}
	}
	if port != "" {
		return host + ":" + port
	}
	return host
}

// SQLError is a failure of the SQL storage: it names the driver and the
// host, never the connection string.
type SQLError struct {
	Host string
	Op   string
	Err  error
}

func (e *SQLError) Error() string {
	return fmt.Sprintf("sql storage (PostgreSQL at %s): %s: %v", e.Host, e.Op, e.Err)
}

func (e *SQLError) Unwrap() error { return e.Err }

// redactedError is err with every occurrence of secrets replaced.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func redact(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	changed := false
	for _, s := range secrets {
		if len(s) >= 4 && strings.Contains(msg, s) {
			msg, changed = strings.ReplaceAll(msg, s, "***"), true
		}
	}
	if !changed {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

// sqlSecrets are the parts of a connection string an error must not show.
func sqlSecrets(conn string) []string {
	out := []string{conn}
	if u, err := url.Parse(conn); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p, url.QueryEscape(p))
		}
		if p := u.Query().Get("password"); p != "" {
			out = append(out, p)
		}
		return out
	}
	for _, f := range strings.Fields(conn) {
		if k, v, ok := strings.Cut(f, "="); ok && k == "password" {
			out = append(out, strings.Trim(v, "'"))
		}
	}
	return out
}

// OpenSQL connects to the database of conn (a libpq connection string or
// URL, as HELM_DRIVER_SQL_CONNECTION_STRING), checks that it answers, and
// brings its tables to helm's newest migration (creating them in an empty
// database, migrating one at an older migration, as helm does). Errors
// name the host, never the connection string.
func OpenSQL(ctx context.Context, conn string) (*SQLRecords, error) {
	host := SQLHost(conn)
	fail := func(op string, err error) error {
		return &SQLError{Host: host, Op: op, Err: redact(err, sqlSecrets(conn)...)}
	}
	connector, err := pq.NewConnector(conn)
	if err != nil {
		return nil, fail("parse the connection string", errors.New("invalid connection string"))
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(time.Minute)
	s := &SQLRecords{db: db, host: host}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fail("connect", err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fail("migrate helm's tables", err)
	}
	return s, nil
}

// Close closes the pool: every connection it opened.
func (s *SQLRecords) Close() error { return s.db.Close() }

// Host is the database's host (and port).
func (s *SQLRecords) Host() string { return s.host }

// Queries is how many statements were sent so far.
func (s *SQLRecords) Queries() int64 { return s.queries.Load() }

// OpenConnections is how many connections the pool holds.
func (s *SQLRecords) OpenConnections() int { return s.db.Stats().OpenConnections }

// migrate applies helm's migrations the database lacks, each in a
// transaction recorded in gorp_migrations as sql-migrate records it, under
// an advisory lock so that two convoy runs do not migrate at once; then
// convoy's own table.
func (s *SQLRecords) migrate(ctx context.Context) error {
	if s.current(ctx) {
		return nil
	}
	s.queries.Add(1)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// One lock for every migration of this schema (helm takes none:
	// convoy's runs wait for each other here).
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext('convoy:helm-sql-migrations'))`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS gorp_migrations (id text NOT NULL PRIMARY KEY, applied_at timestamp with time zone)`); err != nil {
		return err
	}
	applied := map[string]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM gorp_migrations`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		applied[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, m := range sqlMigrations {
		if applied[m.id] {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.up); err != nil {
			return fmt.Errorf("migration %q: %w", m.id, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO gorp_migrations (id, applied_at) VALUES ($1, $2)`, m.id, time.Now()); err != nil {
			return fmt.Errorf("migration %q: %w", m.id, err)
		}
	}
	if _, err := tx.ExecContext(ctx, sqlConvoyTables); err != nil {
		return err
	}
	return tx.Commit()
}

// current reports whether the database has every migration and convoy's
// table already (one query, no lock), as it has on every run after the
// first: the migration's transaction, its lock and its statements cost a
// run of a few releases more than its plan. Any doubt (an error, a table
// missing) is false, and migrate looks under the lock.
func (s *SQLRecords) current(ctx context.Context) bool {
	ids := make([]string, len(sqlMigrations))
	for i, m := range sqlMigrations {
		ids[i] = m.id
	}
	s.queries.Add(1)
	var ok bool
	err := s.db.QueryRowContext(ctx, `SELECT count(DISTINCT id) = $2 AND to_regclass('convoy_annotations_v1') IS NOT NULL FROM gorp_migrations WHERE id = ANY($1)`,
		pq.StringArray(ids), len(ids)).Scan(&ok)
	return err == nil && ok
}

// Driver is the driver of namespace's records ("" lists every namespace;
// read only).
func (s *SQLRecords) Driver(namespace string) Driver {
	return &sqlDriver{s: s, namespace: namespace}
}

// sqlDriver is the records of one namespace in a SQLRecords.
type sqlDriver struct {
	s         *SQLRecords
	namespace string
}

// Name implements Driver.
func (d *sqlDriver) Name() string { return "sql" }

func (d *sqlDriver) wrap(key string, err error) error {
	if key == "" {
		return &SQLError{Host: d.s.host, Op: fmt.Sprintf("release records of namespace %q", d.namespace), Err: err}
	}
	return &SQLError{Host: d.s.host, Op: fmt.Sprintf("release record %s/%s", d.namespace, key), Err: err}
}

// sqlRecordColumns select, of a row r of releases_v1, what a record is
// made of (body last: a metadata read leaves it out): its key, namespace,
// xmin, createdAt, name, version, status, custom labels and convoy's
// annotations as JSON objects, and whether the annotations are of an
// older version of the row.
const sqlRecordColumns = `r.key, r.namespace, r.xmin::text, r.createdAt, r.name, r.version, r.status,
	COALESCE((SELECT json_object_agg(l.key, l.value) FROM custom_labels_v1 l WHERE l.releaseKey = r.key AND l.releaseNamespace = r.namespace), '{}'),
	COALESCE((SELECT json_object_agg(a.key, a.value) FROM convoy_annotations_v1 a WHERE a.releaseKey = r.key AND a.releaseNamespace = r.namespace), '{}'),
	EXISTS (SELECT 1 FROM convoy_annotations_v1 a WHERE a.releaseKey = r.key AND a.releaseNamespace = r.namespace AND a.writtenXmin <> r.xmin::text)`

// sqlRow is one row as sqlRecordColumns select it.
type sqlRow struct {
	key, namespace, xmin, name, status string
	createdAt, version                 int64
	labels, annotations                map[string]string
	rewritten                          bool
	body                               string
}

func scanRow(sc interface{ Scan(...any) error }, withBody bool) (*sqlRow, error) {
	var row sqlRow
	var labels, annotations []byte
	dest := []any{&row.key, &row.namespace, &row.xmin, &row.createdAt, &row.name, &row.version, &row.status, &labels, &annotations, &row.rewritten}
	if withBody {
		dest = append(dest, &row.body)
	}
	if err := sc.Scan(dest...); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(labels, &row.labels); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(annotations, &row.annotations); err != nil {
		return nil, err
	}
	return &row, nil
}

// objectLabels are the labels a Secret of this record would carry: the
// system labels from the columns, the custom ones from their table.
func (row *sqlRow) objectLabels() map[string]string {
	l := maps.Clone(row.labels)
	if l == nil {
		l = map[string]string{}
	}
	for _, k := range systemLabels {
		delete(l, k)
	}
	l["name"], l["owner"], l["status"] = row.name, "helm", row.status
	l["version"] = strconv.FormatInt(row.version, 10)
	l["createdAt"] = strconv.FormatInt(row.createdAt, 10)
	return l
}

// release decodes a row read with its body.
func (row *sqlRow) release() (*Release, error) {
	r, err := decode(row.body)
	if err != nil {
		return nil, err
	}
	row.fill(r)
	return r, nil
}

func (row *sqlRow) fill(r *Release) {
	r.fromObjectLabels(row.objectLabels())
	if len(row.annotations) > 0 {
		r.Annotations = row.annotations
	} else {
		r.Annotations = nil
	}
	r.resourceVersion = row.xmin
	r.rewritten = row.rewritten
}

// partial is the partial release of a row read without its body (as
// releaseOfMeta of a Secret's metadata).
func (row *sqlRow) partial() *Release {
	r := &Release{Name: row.name, Namespace: row.namespace, Version: int(row.version), Info: &Info{Status: Status(row.status)}, partial: true, objects: &recordObjectsMemo{}}
	row.fill(r)
	return r
}

// selectRows runs a query of sqlRecordColumns (and the body) with the
// conditions where (on r), returning the rows.
func (d *sqlDriver) selectRows(ctx context.Context, withBody bool, where string, args ...any) ([]*sqlRow, error) {
	q := "SELECT " + sqlRecordColumns
	if withBody {
		q += ", r.body"
	}
	q += " FROM releases_v1 r WHERE " + where
	d.s.queries.Add(1)
	rows, err := d.s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*sqlRow
	for rows.Next() {
		row, err := scanRow(rows, withBody)
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// Get implements Driver.
func (d *sqlDriver) Get(ctx context.Context, key string) (*Release, error) {
	rows, err := d.selectRows(ctx, true, "r.key = $1 AND r.namespace = $2", key, d.namespace)
	if err != nil {
		return nil, d.wrap(key, err)
	}
	if len(rows) == 0 {
		return nil, ErrReleaseNotFound
	}
	r, err := rows[0].release()
	if err != nil {
		return nil, d.wrap(key, err)
	}
	return r, nil
}

// payload implements payloadReader.
func (d *sqlDriver) payload(ctx context.Context, key string) (string, string, error) {
	var body, xmin string
	d.s.queries.Add(1)
	err := d.s.db.QueryRowContext(ctx, `SELECT body, xmin::text FROM releases_v1 WHERE key = $1 AND namespace = $2`, key, d.namespace).Scan(&body, &xmin)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", ErrReleaseNotFound
	}
	if err != nil {
		return "", "", d.wrap(key, err)
	}
	return body, xmin, nil
}

// selectorWhere turns a label selector into conditions on r: system
// labels are columns, others rows of custom_labels_v1. args are the
// arguments so far; the returned ones follow them.
func (d *sqlDriver) selectorWhere(selector map[string]string, args []any) (string, []any) {
	conds := []string{}
	if d.namespace != "" {
		args = append(args, d.namespace)
		conds = append(conds, fmt.Sprintf("r.namespace = $%d", len(args)))
	}
	for _, k := range slices.Sorted(maps.Keys(selector)) {
		v := selector[k]
		switch k {
		case "name", "owner", "status":
			args = append(args, v)
			conds = append(conds, fmt.Sprintf("r.%s = $%d", k, len(args)))
		case "version", "createdAt", "modifiedAt":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				conds = append(conds, "false")
				continue
			}
			args = append(args, n)
			conds = append(conds, fmt.Sprintf("r.%s = $%d", k, len(args)))
		default:
			args = append(args, k, v)
			conds = append(conds, fmt.Sprintf("EXISTS (SELECT 1 FROM custom_labels_v1 l WHERE l.releaseKey = r.key AND l.releaseNamespace = r.namespace AND l.key = $%d AND l.value = $%d)", len(args)-1, len(args)))
		}
	}
	if len(conds) == 0 {
		return "true", args
	}
	return strings.Join(conds, " AND "), args
}

// List implements Driver.
func (d *sqlDriver) List(ctx context.Context, selector map[string]string) ([]*Release, error) {
	where, args := d.selectorWhere(selector, nil)
	rows, err := d.selectRows(ctx, true, where+" ORDER BY r.namespace, r.key", args...)
	if err != nil {
		return nil, d.wrap("", err)
	}
	out := make([]*Release, 0, len(rows))
	for _, row := range rows {
		r, err := row.release()
		if err != nil {
			return nil, d.wrap(row.key, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// listLazy implements lazyLister: the rows' metadata with one query, each
// body read (one query) when decoded.
func (d *sqlDriver) listLazy(ctx context.Context, selector map[string]string) ([]lazyRecord, error) {
	where, args := d.selectorWhere(selector, nil)
	rows, err := d.selectRows(ctx, false, where+" ORDER BY r.namespace, r.key", args...)
	if err != nil {
		return nil, d.wrap("", err)
	}
	out := make([]lazyRecord, 0, len(rows))
	for _, row := range rows {
		nd := &sqlDriver{s: d.s, namespace: row.namespace}
		key := row.key
		out = append(out, lazyRecord{name: key, labels: row.objectLabels(), namespace: row.namespace, decode: func() (*Release, error) { return nd.Get(ctx, key) }})
	}
	return out, nil
}

// sqlLabels are the custom labels of a record as written: the system
// labels are columns.
func sqlLabels(r *Release) map[string]string {
	l := maps.Clone(r.Labels)
	for _, k := range systemLabels {
		delete(l, k)
	}
	return l
}

// checkLabels refuses labels helm's table cannot hold.
func checkLabels(labels map[string]string) error {
	for k, v := range labels {
		if len(v) > sqlLabelValueMax {
			return fmt.Errorf("label %s: value of %d characters (helm's custom_labels_v1 holds at most %d)", k, len(v), sqlLabelValueMax)
		}
	}
	return nil
}

// writeExtras replaces, in tx, the record's custom labels and convoy's
// annotations (written with the row's new xmin).
func writeExtras(ctx context.Context, tx *sql.Tx, key, namespace, xmin string, r *Release) error {
	return writeExtrasOf(ctx, tx, key, namespace, xmin, sqlLabels(r), r.Annotations)
}

// writeExtrasOf replaces, in tx, a record's custom labels and convoy's
// annotations (written with the row's new xmin).
func writeExtrasOf(ctx context.Context, tx *sql.Tx, key, namespace, xmin string, labels, annotations map[string]string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM custom_labels_v1 WHERE releaseKey = $1 AND releaseNamespace = $2`, key, namespace); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM convoy_annotations_v1 WHERE releaseKey = $1 AND releaseNamespace = $2`, key, namespace); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO custom_labels_v1 (releaseKey, releaseNamespace, key, value) VALUES ($1, $2, $3, $4)`, key, namespace, k, labels[k]); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO convoy_annotations_v1 (releaseKey, releaseNamespace, key, value, writtenXmin) VALUES ($1, $2, $3, $4, $5)`, key, namespace, k, annotations[k], xmin); err != nil {
			return err
		}
	}
	return nil
}

// namespaceOf is where a record is written: the driver's namespace, else
// the release's (helm writes "default" for none).
func (d *sqlDriver) namespaceOf(r *Release) string {
	if d.namespace != "" {
		return d.namespace
	}
	if r.Namespace != "" {
		return r.Namespace
	}
	return "default"
}

// Create implements Driver.
func (d *sqlDriver) Create(ctx context.Context, key string, r *Release) error {
	if err := checkLabels(sqlLabels(r)); err != nil {
		return d.wrap(key, err)
	}
	body, err := r.encoded()
	if err != nil {
		return fmt.Errorf("encode release %s: %w", r.Name, err)
	}
	ns := d.namespaceOf(r)
	now := time.Now().Unix()
	d.s.queries.Add(1)
	tx, err := d.s.db.BeginTx(ctx, nil)
	if err != nil {
		return d.wrap(key, err)
	}
	defer tx.Rollback()
	var xmin string
	err = tx.QueryRowContext(ctx, `INSERT INTO releases_v1 (key, type, body, name, namespace, version, status, owner, createdAt)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 'helm', $8) ON CONFLICT (key, namespace) DO NOTHING RETURNING xmin::text`,
		key, SecretType, textParam(body), r.Name, ns, r.Version, string(r.Info.Status), now).Scan(&xmin)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrReleaseExists
	}
	if err != nil {
		return d.wrap(key, err)
	}
	if err := writeExtras(ctx, tx, key, ns, xmin, r); err != nil {
		return d.wrap(key, err)
	}
	if err := tx.Commit(); err != nil {
		return d.wrap(key, err)
	}
	r.resourceVersion = xmin
	r.createdAt = strconv.FormatInt(now, 10)
	return nil
}

// Update implements Driver: conditional on the row's xmin as read.
func (d *sqlDriver) Update(ctx context.Context, key string, r *Release) error {
	if r.resourceVersion == "" {
		return d.wrap(key, fmt.Errorf("release %s revision %d was not read from its record: not updated", r.Name, r.Version))
	}
	if err := checkLabels(sqlLabels(r)); err != nil {
		return d.wrap(key, err)
	}
	body, err := r.encoded()
	if err != nil {
		return fmt.Errorf("encode release %s: %w", r.Name, err)
	}
	ns := d.namespaceOf(r)
	d.s.queries.Add(1)
	tx, err := d.s.db.BeginTx(ctx, nil)
	if err != nil {
		return d.wrap(key, err)
	}
	defer tx.Rollback()
	var xmin string
	err = tx.QueryRowContext(ctx, `UPDATE releases_v1 SET body = $1, name = $2, version = $3, status = $4, owner = 'helm', modifiedAt = $5
		WHERE key = $6 AND namespace = $7 AND xmin::text = $8 RETURNING xmin::text`,
		textParam(body), r.Name, r.Version, string(r.Info.Status), time.Now().Unix(), key, ns, r.resourceVersion).Scan(&xmin)
	if errors.Is(err, sql.ErrNoRows) {
		var now string
		switch err := tx.QueryRowContext(ctx, `SELECT xmin::text FROM releases_v1 WHERE key = $1 AND namespace = $2`, key, ns).Scan(&now); {
		case errors.Is(err, sql.ErrNoRows):
			return ErrReleaseNotFound
		case err != nil:
			return d.wrap(key, err)
		}
		return d.wrap(key, fmt.Errorf("%w (read at version %s, now %s)", ErrRecordChanged, r.resourceVersion, now))
	}
	if err != nil {
		return d.wrap(key, err)
	}
	if err := writeExtras(ctx, tx, key, ns, xmin, r); err != nil {
		return d.wrap(key, err)
	}
	if err := tx.Commit(); err != nil {
		return d.wrap(key, err)
	}
	r.resourceVersion = xmin
	return nil
}

// Delete implements Driver: the row, its labels and annotations.
func (d *sqlDriver) Delete(ctx context.Context, key string) error {
	d.s.queries.Add(1)
	tx, err := d.s.db.BeginTx(ctx, nil)
	if err != nil {
		return d.wrap(key, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM releases_v1 WHERE key = $1 AND namespace = $2`, key, d.namespace)
	if err != nil {
		return d.wrap(key, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrReleaseNotFound
	}
	for _, q := range []string{`DELETE FROM custom_labels_v1 WHERE releaseKey = $1 AND releaseNamespace = $2`, `DELETE FROM convoy_annotations_v1 WHERE releaseKey = $1 AND releaseNamespace = $2`} {
		if _, err := tx.ExecContext(ctx, q, key, d.namespace); err != nil {
			return d.wrap(key, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return d.wrap(key, err)
	}
	return nil
}

// relabel sets labels (a nil value removes one) on the record key, in one
// transaction holding the row: only while its status is status ("" any).
func (d *sqlDriver) relabel(ctx context.Context, key, status string, labels map[string]*string) error {
	d.s.queries.Add(1)
	tx, err := d.s.db.BeginTx(ctx, nil)
	if err != nil {
		return d.wrap(key, err)
	}
	defer tx.Rollback()
	var now string
	switch err := tx.QueryRowContext(ctx, `SELECT status FROM releases_v1 WHERE key = $1 AND namespace = $2 FOR UPDATE`, key, d.namespace).Scan(&now); {
	case errors.Is(err, sql.ErrNoRows):
		return ErrReleaseNotFound
	case err != nil:
		return d.wrap(key, err)
	}
	if status != "" && now != status {
		return nil // changed since: the next plan finds out
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM custom_labels_v1 WHERE releaseKey = $1 AND releaseNamespace = $2 AND key = $3`, key, d.namespace, k); err != nil {
			return d.wrap(key, err)
		}
		if v := labels[k]; v != nil {
			if len(*v) > sqlLabelValueMax {
				return d.wrap(key, checkLabels(map[string]string{k: *v}))
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO custom_labels_v1 (releaseKey, releaseNamespace, key, value) VALUES ($1, $2, $3, $4)`, key, d.namespace, k, *v); err != nil {
				return d.wrap(key, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return d.wrap(key, err)
	}
	return nil
}

// textParam is s as the parameter of a text column, without a copy: lib/pq
// copies a string parameter into a []byte before it copies that into the
// message it sends, and a record's body may be tens of MiB (held three
// times while written). A []byte parameter of a column that is not bytea
// is sent as it is; the driver only reads it, so the string's own bytes
// serve.
func textParam(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
