package run

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"k8s.io/client-go/rest"
)

// DefaultConnectionMaxAge is how long Connections keeps a connection when
// its MaxAge is 0: a kind another client installs in the meantime shows in
// the templates' .Capabilities within that time.
const DefaultConnectionMaxAge = 5 * time.Minute

// Connections keeps cluster connections (clients, HTTP connections,
// discovery, the RESTMapper and the capabilities templates see) across
// runs, keyed by what a connection reaches and as whom: the API server,
// the credentials and the client settings. A run given Connections
// (ClusterOptions.Connections) connects only to clusters none of the
// earlier runs reached; the controller's Stacks share one. The runs that
// share Connections must share their Traffic, Budget and Warnings too:
// a kept connection reports to those of the run that made it. Safe for
// concurrent use.
type Connections struct {
	// MaxAge bounds how long a connection is kept (0:
	// DefaultConnectionMaxAge).
	MaxAge time.Duration
	// Made counts the connections attempted (each reads the cluster's
	// discovery).
	Made atomic.Int64
	// OnConnect, if set, is called for each connection attempted.
	OnConnect func()
	// InformerIdle bounds how long a shared informer nobody asked for
	// keeps watching (0: kube.DefaultInformerIdle).
	InformerIdle time.Duration

	mu    sync.Mutex
	byKey map[string]*keptConn
	// informers are the shared metadata informers of each connection
	// key: kept across Forget (an apply changes objects, which the
	// watches follow, not what a connection reaches), stopped by Close.
	informers map[string]*kube.Informers
	// forgets counts the calls of Forget (generation).
	forgets atomic.Uint64
}

// ListMode says where a run's plans take their metadata lists from.
type ListMode int

const (
	// ListDirect lists from the API server in every plan (the CLI).
	ListDirect ListMode = iota
	// ListShared serves the lists of records' and live objects'
	// metadata from informers kept in the run's Connections and shared
	// by every run given them; what they cannot serve is listed.
	ListShared
)

// sharedInformers returns the informers of key, made from eng's metadata
// client the first time.
func (c *Connections) sharedInformers(key string, eng *release.Engine) *kube.Informers {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.informers == nil {
		c.informers = map[string]*kube.Informers{}
	}
	in, ok := c.informers[key]
	if !ok {
		in = kube.NewInformers(eng.Meta(), eng.Kube().FieldManager())
		in.Idle = c.InformerIdle
		in.Keep = release.RecordWriters // Release.Rewritten reads them
		c.informers[key] = in
	}
	return in
}

// Close stops the shared informers. A nil Connections has none.
func (c *Connections) Close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, in := range c.informers {
		in.Close()
		delete(c.informers, k)
	}
}

// Informers is how many shared informers run, over every connection.
func (c *Connections) Informers() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, in := range c.informers {
		n += in.Running()
	}
	return n
}

type keptConn struct {
	ready chan struct{} // closed once eng or err is set
	eng   *release.Engine
	err   error
	at    time.Time
}

// Forget drops every kept connection: the next run connects afresh and
// reads discovery again (after an apply, which may have installed kinds;
// after a failure, which may be a stale connection's). A nil Connections
// keeps none.
func (c *Connections) Forget() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byKey = nil
	c.forgets.Add(1)
}

// generation changes with each Forget: a Session connects afresh once
// its connections were forgotten (0 for a nil Connections).
func (c *Connections) generation() uint64 {
	if c == nil {
		return 0
	}
	return c.forgets.Load()
}

// engine returns the kept engine of key, or connects with build once for
// every concurrent caller. Failures are not kept.
func (c *Connections) engine(key string, build func() (*release.Engine, error)) (*release.Engine, error) {
	maxAge := c.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultConnectionMaxAge
	}
	c.mu.Lock()
	if c.byKey == nil {
		c.byKey = map[string]*keptConn{}
	}
	k, ok := c.byKey[key]
	if ok {
		select {
		case <-k.ready:
			if k.err != nil || time.Since(k.at) > maxAge {
				ok = false
			}
		default: // being made: wait for it below
		}
	}
	if !ok {
		k = &keptConn{ready: make(chan struct{})}
		c.byKey[key] = k
		c.mu.Unlock()
		k.eng, k.err = build()
		k.at = time.Now()
		c.Made.Add(1)
		if c.OnConnect != nil {
			c.OnConnect()
		}
		close(k.ready)
		if k.err != nil {
			c.mu.Lock()
			if c.byKey[key] == k {
				delete(c.byKey, key)
			}
			c.mu.Unlock()
		}
		return k.eng, k.err
	}
	c.mu.Unlock()
	<-k.ready
	return k.eng, k.err
}

// connectionKey is what a connection reaches and as whom, hashed so that
// no credential is kept in the clear beside the clients.
func connectionKey(cfg *rest.Config, driver release.StorageDriver) string {
	b, _ := json.Marshal(struct {
		ID                     kube.ClusterID
		User, Password, Token  string
		TokenFile              string
		Impersonate            rest.ImpersonationConfig
		TLS                    rest.TLSClientConfig
		Exec                   any
		AuthProvider           any
		Proxy                  bool
		QPS                    float32
		Burst                  int
		Driver                 release.StorageDriver
		UserAgent, ContentType string
	}{
		kube.ClusterIDOf(cfg), cfg.Username, cfg.Password, cfg.BearerToken, cfg.BearerTokenFile,
		cfg.Impersonate, cfg.TLSClientConfig, cfg.ExecProvider, cfg.AuthProvider, cfg.Proxy != nil,
		cfg.QPS, cfg.Burst, driver, cfg.UserAgent, cfg.ContentType,
	})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
