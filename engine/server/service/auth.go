package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api/problem"
)

// tokenBytes is the token's entropy; it is written as hex.
const tokenBytes = 32

// EnsureToken returns the bearer token in <dataDir>/serve.token, creating
// it (32 random bytes, hex, mode 0600) when there is none; created says
// this call made it. A token file others can read, or one that does not
// hold a token, is refused: delete it to get a new one.
func EnsureToken(dataDir string) (token string, created bool, err error) {
	path := TokenPath(dataDir)
	tok, err := readToken(path)
	if err == nil {
		return tok, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", false, err
	}
	var b [tokenBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", false, fmt.Errorf("memory server: token: %w", err)
	}
	tok = hex.EncodeToString(b[:])
	// Written to a private temporary file and linked into place, so a crash never
	// leaves a half-written token, and the token is never readable by others.
	f, err := os.CreateTemp(dataDir, ".serve.token.*")
	if err != nil {
		return "", false, fmt.Errorf("memory server: token: %w", err)
	}
	defer os.Remove(f.Name())
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.WriteString(tok + "\n")
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// A link, not a rename: a token another process put there first
		// is kept, not overwritten.
		err = os.Link(f.Name(), path)
		if errors.Is(err, os.ErrExist) {
			tok, err = readToken(path)
			return tok, false, err
		}
	}
	if err != nil {
		return "", false, fmt.Errorf("memory server: write token %s: %w", path, err)
	}
	return tok, true, nil
}

func readToken(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", engine.Invalidf("token file", "%s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", engine.Invalidf("token file", "%s has mode %04o: others on this machine may have read the token; delete it to make a new one", path, fi.Mode().Perm())
	}
	b := make([]byte, 256)
	n, _ := f.Read(b)
	tok := strings.TrimSpace(string(b[:n]))
	if raw, err := hex.DecodeString(tok); err != nil || len(raw) != tokenBytes {
		return "", engine.Invalidf("token file", "%s does not hold a token (%d hex digits): delete it to make a new one", path, 2*tokenBytes)
	}
	return tok, nil
}

// CookieName is the browser session cookie. Opening a page the server's
// Options.Sessions accepts with ?token=<token> on TCP starts a session: the
// cookie (HttpOnly, SameSite=Strict, Path=/) holds a random session id the
// server keeps in memory, never the token, and the server redirects to the
// same URL without the token.
const CookieName = "engine_session"

// SessionTTL is how long a browser session lasts from its start; a
// restarted server knows none (open the printed URL again).
const SessionTTL = 12 * time.Hour

// maxSessions bounds the sessions kept: starting one past it drops the
// one that ends first.
const maxSessions = 1024

// authHandler refuses cross-origin state-changing requests on every
// route, then passes requests that came over the unix socket, and TCP
// requests that carry the right token in an Authorization: Bearer header
// or, where Options.Sessions accepts it, a live session cookie; other TCP
// requests get 401.
type authHandler struct {
	next http.Handler
	run  *tracker          // the handlers running
	want [sha256.Size]byte // sha256 of the token; zero: no TCP
	set  bool
	// browser says which requests a session cookie may authenticate
	// (Options.Sessions); nil: none.
	browser  func(*http.Request) bool
	sessions sessions
	// authenticate resolves a token other than serve.token
	// (Options.Authenticate); nil: serve.token alone.
	authenticate Authenticator
	// public says which requests need no token (Options.Public); nil: none.
	public func(*http.Request) bool
}

// Authenticator resolves a bearer token other than serve.token: for one
// it accepts, ok is true and grant marks the request's context with what
// the token may do (engine/api's scope), for the handler to enforce; err
// is a failure to tell (the store did not answer), answered 503.
type Authenticator func(ctx context.Context, token string) (grant func(context.Context) context.Context, ok bool, err error)

// admit resolves tok: serve.token admits r as it is (the owner); a token
// Authenticate accepts admits r with its grant applied.
func (a *authHandler) admit(r *http.Request, tok string) (*http.Request, bool, error) {
	if a.valid(tok) {
		return r, true, nil
	}
	if a.authenticate == nil || tok == "" {
		return nil, false, nil
	}
	grant, ok, err := a.authenticate(r.Context(), tok)
	if err != nil || !ok {
		return nil, false, err
	}
	return r.WithContext(grant(r.Context())), true, nil
}

// refuseUnresolved answers a token that could not be resolved.
func refuseUnresolved(w http.ResponseWriter, err error) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Retry-After", "1")
	problem.Write(w, problem.New(http.StatusServiceUnavailable, "the token could not be checked: "+err.Error()))
}

// crossOrigin refuses a POST, PUT, PATCH or DELETE that a browser says
// came from another site or another port of this one (Sec-Fetch-Site
// cross-site or same-site), or whose Origin is not this server's.
var crossOrigin = http.NewCrossOriginProtection()

func (a *authHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.run.add()
	defer a.run.done()
	if err := crossOrigin.Check(r); err != nil {
		w.Header().Set("Cache-Control", "no-store")
		problem.Write(w, problem.New(http.StatusForbidden, "cross-origin request refused: a state-changing request must come from this server's own pages or from a program, not from another site or port"))
		return
	}
	if v, _ := r.Context().Value(viaUnixKey{}).(bool); v {
		a.next.ServeHTTP(w, r)
		return
	}
	if a.public != nil && a.public(r) { // e.g. the API's description: no data
		a.next.ServeHTTP(w, r)
		return
	}
	browser := a.browser != nil && a.browser(r)
	if browser && r.URL.Query().Has("token") && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		a.openWithToken(w, r)
		return
	}
	tok, ok := bearer(r.Header.Get("Authorization"))
	if !ok {
		c, err := r.Cookie(CookieName)
		if !browser || err != nil || c.Value == "" {
			unauthorized(w, `Bearer realm="engine"`, "this request needs an Authorization: Bearer header with the token in the data dir's serve.token (a browser: open the URL engine serve printed, with ?token=)")
			return
		}
		tok, live := a.sessions.token(c.Value, time.Now())
		var admitted *http.Request
		err = nil
		if live {
			// The session's token is checked again on every request, so
			// a revoked or expired token ends its sessions too.
			admitted, live, err = a.admit(r, tok)
		}
		if err != nil {
			refuseUnresolved(w, err)
			return
		}
		if !live {
			unauthorized(w, `Bearer realm="engine", error="invalid_token"`, "the browser session is unknown or has ended: open the URL engine serve printed, with ?token=, again")
			return
		}
		a.next.ServeHTTP(w, admitted)
		return
	}
	admitted, ok, err := a.admit(r, tok)
	if err != nil {
		refuseUnresolved(w, err)
		return
	}
	if !ok {
		unauthorized(w, `Bearer realm="engine", error="invalid_token"`, "the token is not one this server accepts (see the data dir's serve.token, or engine tokens list)")
		return
	}
	a.next.ServeHTTP(w, admitted)
}

// valid reports whether tok is the server's token. Hashing first makes
// the comparison constant-time in the token's length too.
func (a *authHandler) valid(tok string) bool {
	got := sha256.Sum256([]byte(tok))
	return a.set && subtle.ConstantTimeCompare(got[:], a.want[:]) == 1
}

// openWithToken answers a browser opening a URL with ?token=: the right
// token starts a session, sets its cookie and redirects to the URL
// without the token (so it leaves the address bar and the history); a
// wrong one is 401.
func (a *authHandler) openWithToken(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	_, ok, err := a.admit(r, q.Get("token"))
	if err != nil {
		refuseUnresolved(w, err)
		return
	}
	if !ok {
		unauthorized(w, `Bearer realm="engine", error="invalid_token"`, "the token in the URL is not one this server accepts (see the data dir's serve.token)")
		return
	}
	id, err := a.sessions.start(time.Now(), q.Get("token"))
	if err != nil {
		problem.Write(w, problem.New(http.StatusInternalServerError, err.Error()))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: id, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
	q.Del("token")
	u := *r.URL
	u.RawQuery = q.Encode()
	u.Scheme, u.Host = "", ""
	// Always a path on this server: "//host" or "/\host" would send the
	// browser elsewhere.
	u.Path = "/" + strings.TrimLeft(u.Path, `/\`)
	u.RawPath = ""
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
}

// sessions are the live browser sessions, by the SHA-256 of their id (a
// map lookup then reveals nothing about an id through its timing).
type sessions struct {
	mu   sync.Mutex
	ends map[[sha256.Size]byte]session
}

// session is one browser session: when it ends, and the token that
// started it (kept in this process only, to check on each request).
type session struct {
	end   time.Time
	token string
}

// start makes a session lasting SessionTTL from now and returns its id:
// 32 random bytes, hex (the token's shape, but never equal to it, and
// never accepted where the token is).
func (s *sessions) start(now time.Time, token string) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("memory server: session: %w", err)
	}
	id := hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ends == nil {
		s.ends = map[[sha256.Size]byte]session{}
	}
	for k, se := range s.ends {
		if !now.Before(se.end) {
			delete(s.ends, k)
		}
	}
	if len(s.ends) >= maxSessions {
		var first [sha256.Size]byte
		var firstEnd time.Time
		for k, se := range s.ends {
			if firstEnd.IsZero() || se.end.Before(firstEnd) {
				first, firstEnd = k, se.end
			}
		}
		delete(s.ends, first)
	}
	s.ends[sha256.Sum256([]byte(id))] = session{end: now.Add(SessionTTL), token: token}
	return id, nil
}

// token returns the token that started session id; live is false for a
// session unknown or ended at now.
func (s *sessions) token(id string, now time.Time) (tok string, live bool) {
	k := sha256.Sum256([]byte(id))
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.ends[k]
	if !ok || !now.Before(se.end) {
		return "", false
	}
	return se.token, true
}

func (a *authHandler) setToken(tok string) {
	a.want = sha256.Sum256([]byte(tok))
	a.set = tok != ""
}

// bearer returns the token of an "Authorization: Bearer <token>" value.
func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

func unauthorized(w http.ResponseWriter, challenge, detail string) {
	w.Header().Set("WWW-Authenticate", challenge)
	w.Header().Set("Cache-Control", "no-store")
	problem.Write(w, problem.New(http.StatusUnauthorized, detail))
}

// removeTempTokens removes temporary token files a killed EnsureToken left.
func removeTempTokens(dataDir string) {
	matches, _ := filepath.Glob(filepath.Join(dataDir, ".serve.token.*"))
	for _, m := range matches {
		os.Remove(m)
	}
}
