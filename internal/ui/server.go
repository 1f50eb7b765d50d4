// Package ui is convoy ui: a web view of the Stacks, plans, Pipelines
// and StackSets a user may see, served by the convoy binary with its
// pages embedded. It talks to the cluster with the user's own credentials
// (a Backend), so the cluster's RBAC decides what each page shows and
// what Approve may do; it shows plans through their JSON and text views,
// so sensitive values are masked exactly as in the CLI.
package ui

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/internal/plan"
)

//go:embed assets
var assets embed.FS

// Local is a stack directory or a saved plan shown without a controller
// (convoy ui -C DIR, convoy ui PLAN_FILE).
type Local struct {
	// Name is what the page calls it (the directory or the file).
	Name string
	// Plan computes (or reads) the plan; Replan says whether calling it
	// again may give another (a directory, not a saved file).
	Plan   func(ctx context.Context) (*plan.Plan, error)
	Replan bool
}

// Options configure a Server.
type Options struct {
	// Backend reaches the cluster (nil: only Local is shown).
	Backend Backend
	// Namespace is convoy ui -n's, else the kubeconfig context's
	// namespace: listed, besides those Backend.StackNamespaces finds,
	// when the user may not list across namespaces.
	Namespace string
	// Local is shown at /local when set.
	Local *Local
	// Token is the access token ("": a random one).
	Token string
	// Refresh is how often an open page updates itself (default 5s).
	Refresh time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Server serves the pages.
type Server struct {
	o     Options
	token string
	addr  string // the listen address, once Serve has it
	pages *template.Template

	localMu   sync.Mutex
	localPlan *planPage
	localErr  error
	localAt   time.Time
}

// New returns a Server.
func New(o Options) (*Server, error) {
	if o.Backend == nil && o.Local == nil {
		return nil, errors.New("convoy ui: neither a cluster nor a local stack to show")
	}
	if o.Refresh == 0 {
		o.Refresh = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Server{o: o, token: o.Token}
	if s.token == "" {
		t, err := NewToken()
		if err != nil {
			return nil, err
		}
		s.token = t
	}
	t, err := template.New("").Funcs(s.funcs()).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, err
	}
	s.pages = t
	return s, nil
}

// Token is the access token the printed URL carries.
func (s *Server) Token() string { return s.token }

// URL is the address to open: the first visit trades the token for a cookie.
func (s *Server) URL(addr string) string {
	path := "/stacks"
	if s.o.Backend == nil {
		path = "/local"
	}
	return fmt.Sprintf("http://%s%s?token=%s", addr, path, s.token)
}

// Serve answers on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.addr = ln.Addr().String()
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Handler is the server's routes behind the token check.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		to := "/stacks"
		if s.o.Backend == nil {
			to = "/local"
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
	})
	if s.o.Backend != nil {
		mux.HandleFunc("GET /stacks", s.stacksPage)
		mux.HandleFunc("GET /stacks/{ns}/{name}", s.stackPage)
		mux.HandleFunc("POST /stacks/{ns}/{name}/approve", s.approveStack)
		mux.HandleFunc("GET /pipelines", s.pipelinesPage)
		mux.HandleFunc("GET /pipelines/{ns}/{name}", s.pipelinePage)
		mux.HandleFunc("POST /pipelines/{ns}/{name}/approve", s.approveStage)
		mux.HandleFunc("GET /stacksets", s.stackSetsPage)
		mux.HandleFunc("GET /stacksets/{ns}/{name}", s.stackSetPage)
	}
	if s.o.Local != nil {
		mux.HandleFunc("GET /local", s.localPage)
		mux.HandleFunc("POST /local/plan", s.replanLocal)
	}
	return s.authenticate(securityHeaders(mux))
}

// securityHeaders: no framing, no sniffing, scripts and styles only from
// this server.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
		w.Header().Set("Referrer-Policy", "same-origin") // "no-referrer" makes a form's Origin "null"
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// page is what every page template gets.
type page struct {
	Title   string
	Nav     string
	CSRF    string
	Refresh int // seconds
	Cluster bool
	Local   bool
	Flash   string
	Error   string
	Data    any
}

// render writes the named page, or only its main part when the page's
// script asks for an update (X-Convoy-Fragment).
func (s *Server) render(w http.ResponseWriter, r *http.Request, name string, status int, p page) {
	p.CSRF = s.csrf()
	p.Refresh = int(s.o.Refresh / time.Second)
	p.Cluster = s.o.Backend != nil
	p.Local = s.o.Local != nil
	if p.Flash == "" {
		p.Flash = r.URL.Query().Get("flash")
	}
	tmpl := name
	if r.Header.Get("X-Convoy-Fragment") == "1" {
		tmpl = name + "-main"
	}
	var b bytes.Buffer
	if err := s.pages.ExecuteTemplate(&b, tmpl, p); err != nil {
		http.Error(w, "convoy ui: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
