package release_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
)

func sqlRec(name string, version int, status release.Status) *release.Release {
	return &release.Release{Name: name, Namespace: "ns", Version: version, Manifest: "kind: ConfigMap\n",
		Info:   &release.Info{Status: status, LastDeployed: time.Unix(1700000000, 0).UTC()},
		Labels: map[string]string{release.StackLabel: "shop"}, Annotations: map[string]string{"convoy.dev/objects": "[]"}}
}

// TestSQLDriverKeepsRecords: Helm's tables on a real PostgreSQL hold
// convoy's records, labels and annotations; an update of a record written
// since it was read is refused; the pool is closed by Close.
func TestSQLDriverKeepsRecords(t *testing.T) {
	pg := cluster.Postgres(t)
	dbName, conn := pg.CreateDatabase(t)
	ctx := context.Background()
	db, err := release.OpenSQL(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	s := &release.Storage{Driver: db.Driver("ns")}
	for _, r := range []*release.Release{sqlRec("api", 1, release.StatusSuperseded), sqlRec("api", 2, release.StatusDeployed), sqlRec("web", 1, release.StatusDeployed)} {
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, sqlRec("api", 2, release.StatusFailed)); !errors.Is(err, release.ErrReleaseExists) {
		t.Fatalf("creating an existing revision: %v", err)
	}
	h, err := s.History(ctx, "api")
	if err != nil || len(h) != 2 || h[1].Version != 2 || h[1].Labels[release.StackLabel] != "shop" || h[1].Annotations["convoy.dev/objects"] != "[]" {
		t.Fatalf("history %+v, %v", h, err)
	}
	if h[1].Rewritten() {
		t.Fatal("a record convoy wrote reads as rewritten")
	}
	// Another writer updates revision 2 after h was read: the update of
	// h[1] must be refused, and write nothing.
	other, err := s.Get(ctx, "api", 2)
	if err != nil {
		t.Fatal(err)
	}
	other.Info.Description = "written by the other"
	if err := s.Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	h[1].Info.Status = release.StatusFailed
	if err := s.Update(ctx, h[1]); !errors.Is(err, release.ErrRecordChanged) {
		t.Fatalf("an update of a stale read: %v", err)
	}
	if got, _ := s.Get(ctx, "api", 2); got.Info.Status != release.StatusDeployed || got.Info.Description != "written by the other" {
		t.Fatalf("the stale update wrote: %+v", got.Info)
	}
	// Twice in a row on the same read: the second refers to the first's
	// write (the driver keeps the version it wrote).
	other.Info.Description = "again"
	if err := s.Update(ctx, other); err != nil {
		t.Fatalf("an update after the driver's own: %v", err)
	}
	if dep, err := s.Deployed(ctx, "web"); err != nil || dep.Version != 1 {
		t.Fatalf("deployed web: %+v %v", dep, err)
	}
	if err := s.Delete(ctx, "api", 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "api", 1); !errors.Is(err, release.ErrReleaseNotFound) {
		t.Fatalf("deleting a deleted revision: %v", err)
	}
	if rs, err := s.Driver.List(ctx, map[string]string{release.StackLabel: "shop", "status": "deployed"}); err != nil || len(rs) != 2 {
		t.Fatalf("list by a custom label: %d %v", len(rs), err)
	}
	// Another namespace sees none of them.
	if h, err := (&release.Storage{Driver: db.Driver("other")}).History(ctx, "api"); err != nil || len(h) != 0 {
		t.Fatalf("history in another namespace: %v %v", h, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if n := db.OpenConnections(); n != 0 {
		t.Fatalf("%d connections open after Close", n)
	}
	if n := pg.Connections(t, dbName); n != 0 {
		t.Fatalf("the server holds %d connections to the database after Close", n)
	}
}

// TestSQLMigratesAnOlderSchema: a database at helm's first migration
// ("init", before custom labels) is brought to the newest, as helm does,
// and recorded in sql-migrate's table.
func TestSQLMigratesAnOlderSchema(t *testing.T) {
	pg := cluster.Postgres(t)
	dbName, conn := pg.CreateDatabase(t)
	raw := pg.Open(t, dbName)
	for _, q := range []string{
		`CREATE TABLE gorp_migrations (id text NOT NULL PRIMARY KEY, applied_at timestamp with time zone)`,
		`CREATE TABLE releases_v1 (key VARCHAR(90), type VARCHAR(64) NOT NULL, body TEXT NOT NULL, name VARCHAR(64) NOT NULL, namespace VARCHAR(64) NOT NULL,
			version INTEGER NOT NULL, status TEXT NOT NULL, owner TEXT NOT NULL, createdAt INTEGER NOT NULL, modifiedAt INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(key, namespace))`,
		`INSERT INTO gorp_migrations VALUES ('init', now())`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db, err := release.OpenSQL(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ids []string
	rows, err := raw.Query(`SELECT id FROM gorp_migrations ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	if !slices.Equal(ids, []string{"custom_labels", "init"}) {
		t.Fatalf("migrations recorded: %v", ids)
	}
	if err := (&release.Storage{Driver: db.Driver("ns")}).Create(context.Background(), sqlRec("api", 1, release.StatusDeployed)); err != nil {
		t.Fatalf("a record with labels on the migrated schema: %v", err)
	}
	// A second open finds nothing to do: it neither migrates nor waits
	// for the migration lock another run holds.
	held, err := raw.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := held.ExecContext(context.Background(), `SELECT pg_advisory_lock(hashtext('convoy:helm-sql-migrations'))`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	again, err := release.OpenSQL(ctx, conn)
	if err != nil {
		t.Fatalf("open of a current database, the migration lock held elsewhere: %v", err)
	}
	again.Close()
	// One that lacks convoy's table is migrated (under the lock).
	if _, err := held.ExecContext(context.Background(), `SELECT pg_advisory_unlock(hashtext('convoy:helm-sql-migrations'))`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DROP TABLE convoy_annotations_v1`); err != nil {
		t.Fatal(err)
	}
	migrated, err := release.OpenSQL(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	migrated.Close()
	var table *string
	if err := raw.QueryRow(`SELECT to_regclass('convoy_annotations_v1')::text`).Scan(&table); err != nil || table == nil {
		t.Fatalf("convoy's table not made again: %v", err)
	}
}

// TestSQLConnectionErrorsNameTheHostOnly: a wrong password and a database
// that does not answer fail naming the driver and the host, never the
// password.
func TestSQLConnectionErrorsNameTheHostOnly(t *testing.T) {
	pg := cluster.Postgres(t)
	ctx := context.Background()
	wrong := strings.Replace(pg.URL("postgres"), pg.Password, "Wr0ngSecretPassw0rd", 1)
	_, err := release.OpenSQL(ctx, wrong)
	if err == nil {
		t.Fatal("a wrong password connected")
	}
	for _, want := range []string{"sql storage", pg.Host, "password authentication failed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "Wr0ngSecretPassw0rd") || strings.Contains(err.Error(), pg.Password) {
		t.Errorf("error %q shows the password", err)
	}
	_, err = release.OpenSQL(ctx, "postgres://convoy:Sup3rSecret@127.0.0.1:1/db?sslmode=disable&connect_timeout=2")
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), "Sup3rSecret") {
		t.Errorf("unreachable database: %v", err)
	}
	_, err = release.OpenSQL(ctx, "host=127.0.0.1 port=1 password='Sup3rSecret' dbname=x sslmode=disable connect_timeout=2")
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), "Sup3rSecret") {
		t.Errorf("unreachable database, key=value form: %v", err)
	}
}
