package ui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// cookieName is the cookie that holds the access token once the first
// visit presented it. Browsers keep cookies per host, not per port: each
// server's cookie is named after its port, so that two convoy ui on one
// machine (two clusters, two users) do not log each other out.
func (s *Server) cookieName() string {
	if _, port, err := net.SplitHostPort(s.addr); err == nil {
		return "convoy-ui-" + port
	}
	return "convoy-ui"
}

// NewToken returns a random access token (256 bits, hex).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// authenticate lets through requests that carry the token: as ?token=
// (the printed URL; the answer sets the cookie and redirects to the URL
// without it) or as the cookie. Anything else is 401. Requests naming a
// host other than the one listened on are refused (DNS rebinding).
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			http.Error(w, "convoy ui: unexpected Host header", http.StatusForbidden)
			return
		}
		if tok := r.URL.Query().Get("token"); tok != "" {
			if !s.tokenOK(tok) {
				s.unauthorized(w)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q := r.URL.Query()
			q.Del("token")
			u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		c, err := r.Cookie(s.cookieName())
		if err != nil || !s.tokenOK(c.Value) {
			s.unauthorized(w)
			return
		}
		if r.Method == http.MethodPost && !s.sameOrigin(r) {
			http.Error(w, "convoy ui: a form posted from another origin", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) tokenOK(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) == 1
}

func (s *Server) unauthorized(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte("convoy ui: open the URL convoy ui printed; it carries the access token.\n"))
}

// csrf is the token each form carries: an HMAC of the access token, so a
// page that cannot read ours cannot forge it.
func (s *Server) csrf() string {
	m := hmac.New(sha256.New, []byte(s.token))
	m.Write([]byte("convoy-ui-form"))
	return hex.EncodeToString(m.Sum(nil))
}

func (s *Server) csrfOK(r *http.Request) bool {
	return subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(s.csrf())) == 1
}

// sameOrigin: a POST's Origin (browsers send it) names this server.
func (s *Server) sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// hostAllowed accepts the hosts a loopback listener is reached as
// (127.0.0.1, localhost, [::1], at its port); any host for a listener on
// another address (--listen), where the token alone decides.
func (s *Server) hostAllowed(host string) bool {
	if s.addr == "" {
		return true
	}
	lh, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		return true
	}
	if ip := net.ParseIP(lh); ip == nil || !ip.IsLoopback() {
		return true
	}
	h, p, err := net.SplitHostPort(host)
	if err != nil || p != port {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}
