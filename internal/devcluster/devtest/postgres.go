package devtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/lib/pq"
)

// Postgres is a PostgreSQL server a test started (StartPostgres,
// Env.Postgres).
type Postgres struct {
	// Host is 127.0.0.1:PORT.
	Host string
	// User and Password are the superuser's, who owns every database.
	User, Password string
	stop           func()
}

// URL is the connection string of database db (as
// HELM_DRIVER_SQL_CONNECTION_STRING takes it).
func (p *Postgres) URL(db string) string {
	return fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", p.User, p.Password, p.Host, db)
}

// CreateDatabase creates an empty database named after t (and a random
// suffix) and returns its name and connection string.
func (p *Postgres) CreateDatabase(t testing.TB) (name, url string) {
	t.Helper()
	name = "t_" + randomHex(4)
	db := p.Open(t, "postgres")
	if _, err := db.Exec("CREATE DATABASE " + pq.QuoteIdentifier(name)); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	return name, p.URL(name)
}

// Open is a pool on database db, closed when t ends.
func (p *Postgres) Open(t testing.TB, db string) *sql.DB {
	t.Helper()
	c, err := sql.Open("postgres", p.URL(db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Connections counts the server's connections to database db
// (pg_stat_activity), waiting up to 5 s for it to reach 0: a backend
// leaves a moment after its client closed the socket.
func (p *Postgres) Connections(t testing.TB, db string) int {
	t.Helper()
	admin := p.Open(t, "postgres")
	var n int
	for range 50 {
		if err := admin.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, db).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return 0
		}
		time.Sleep(100 * time.Millisecond)
	}
	return n
}

// StartPostgres starts a PostgreSQL server of t's own, stopped when t
// ends (launchPostgres). Under -short it skips t.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	SkipShort(t, "PostgreSQL")
	p, err := launchPostgres()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	return p
}

// Postgres is the test binary's PostgreSQL server, started by the first
// test that asks and stopped by Run when the tests end: initdb takes
// seconds, a database (CreateDatabase) a few milliseconds. Under -short
// it skips t.
func (e *Env) Postgres(t testing.TB) *Postgres {
	t.Helper()
	SkipShort(t, "PostgreSQL")
	e.pgMu.Lock()
	defer e.pgMu.Unlock()
	if e.pg == nil && e.pgErr == nil {
		e.pg, e.pgErr = launchPostgres()
	}
	if e.pgErr != nil {
		t.Fatal(e.pgErr)
	}
	return e.pg
}

func (e *Env) stopPostgres() {
	e.pgMu.Lock()
	defer e.pgMu.Unlock()
	if e.pg != nil {
		e.pg.stop()
		e.pg = nil
	}
}

// launchPostgres initdb's a temporary directory and starts PostgreSQL
// (Debian's package, devcluster.LocatePostgreSQL) on a free port of
// 127.0.0.1 with password authentication.
func launchPostgres() (*Postgres, error) {
	bin, err := devcluster.LocatePostgreSQL(os.Getenv)
	if err != nil {
		return nil, err
	}
	dir, cred, err := postgresDir()
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Postgres, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	p := &Postgres{User: "convoy", Password: "pw-" + randomHex(8)}
	pwfile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwfile, []byte(p.Password+"\n"), 0o600); err != nil {
		return fail(err)
	}
	if err := chown(cred, pwfile); err != nil {
		return fail(err)
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", p.User, "--pwfile", pwfile, "-A", "scram-sha-256", "-E", "UTF8", "--no-sync")
	initdb.SysProcAttr = cred
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %v\n%s", err, out))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	p.Host = fmt.Sprintf("127.0.0.1:%d", port)
	logPath := filepath.Join(dir, "postgres.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return fail(err)
	}
	// The socket directory is the temporary one (not /var/run/postgresql,
	// which needs the postgres user); fsync off: a test's data need not
	// survive a crash.
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-k", dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = cred
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fail(fmt.Errorf("start postgres: %w", err))
	}
	p.stop = func() {
		// SIGINT: PostgreSQL's fast shutdown.
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
		os.RemoveAll(dir)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		db, err := sql.Open("postgres", p.URL("postgres"))
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err = db.PingContext(ctx)
			cancel()
			db.Close()
		}
		if err == nil {
			return p, nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logPath)
			p.stop()
			return nil, fmt.Errorf("postgres on %s never answered: %v\n%s", p.Host, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// postgresDir is a temporary directory PostgreSQL may own, and the
// credentials to run it with: PostgreSQL refuses to run as root, so as
// root (a CI container) it runs as the postgres user Debian's package
// creates (else nobody).
func postgresDir() (string, *syscall.SysProcAttr, error) {
	dir, err := os.MkdirTemp("", "convoy-postgres-")
	if err != nil {
		return "", nil, err
	}
	if os.Getuid() != 0 {
		return dir, nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		if u, err = user.Lookup("nobody"); err != nil {
			os.RemoveAll(dir)
			return "", nil, errors.New("PostgreSQL refuses to run as root, and there is neither a postgres nor a nobody user")
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	attr := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if err := chown(attr, dir); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, attr, nil
}

func chown(attr *syscall.SysProcAttr, path string) error {
	if attr == nil {
		return nil
	}
	return os.Chown(path, int(attr.Credential.Uid), int(attr.Credential.Gid))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
