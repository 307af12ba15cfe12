package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/token"
)

// scopeKey carries a request's scope in its context.
type scopeKey struct{}

// WithScope returns ctx carrying t: the requests made in it may do only
// what t opens (its namespaces, its role). The server's token check sets
// it for a request that brought a scoped token; a request without one is
// the owner's (the unix socket, serve.token, a handler in this process)
// and may do everything.
func WithScope(ctx context.Context, t token.Token) context.Context {
	return context.WithValue(ctx, scopeKey{}, t)
}

// ScopeOf returns the scope ctx carries; ok is false for the owner.
func ScopeOf(ctx context.Context) (t token.Token, ok bool) {
	t, ok = ctx.Value(scopeKey{}).(token.Token)
	return t, ok
}

// Authenticator resolves the bearer tokens m's store keeps (engine tokens
// create): for a token that exists and has not expired, ok is true and
// grant puts its scope in a request's context. It is what a server hands
// its token check (service.Options.Authenticate) for a token other than
// serve.token.
func Authenticator(m *memory.Memory) func(ctx context.Context, secret string) (grant func(context.Context) context.Context, ok bool, err error) {
	tokens := m.Tokens()
	return func(ctx context.Context, secret string) (func(context.Context) context.Context, bool, error) {
		t, ok, err := tokens.Resolve(ctx, secret)
		if err != nil || !ok {
			return nil, false, err
		}
		return func(ctx context.Context) context.Context { return WithScope(ctx, t) }, true, nil
	}
}

// adminRoutes are the routes only an admin token may call: they remove or
// replace memory wholesale (import, forget, prune, revert) or decide trust
// (approve or reject what the screen held), or manage tokens and
// namespaces.
var adminRoutes = map[string]bool{
	"POST /v1/import":                               true,
	"POST /v1/forget":                               true,
	"POST /v1/prune":                                true,
	"POST /v1/revert":                               true,
	"POST /v1/revert/{id}":                          true,
	"POST /v1/lessons/{id}/revert":                  true,
	"POST /v1/imports/{sha256}/revert":              true,
	"POST /v1/quarantine/lessons/{id}/approve":      true,
	"POST /v1/quarantine/lessons/{id}/reject":       true,
	"POST /v1/quarantine/facts/{id}/approve":        true,
	"POST /v1/quarantine/facts/{id}/reject":         true,
	"POST /v1/quarantine/trajectories/{id}/approve": true,
	"POST /v1/quarantine/trajectories/{id}/reject":  true,
	"GET /v1/tokens":                                true,
	"POST /v1/tokens":                               true,
	"DELETE /v1/tokens/{id}":                        true,
	"POST /v1/namespaces":                           true,
}

// readPosts are POST routes that only read (their input is a body).
var readPosts = map[string]bool{
	"POST /v1/recall/error": true,
}

// RoleOf is the role a route needs: read for GET and the POSTs that only
// read, admin for adminRoutes, write for every other.
func RoleOf(rt Route) token.Role {
	name := rt.Method + " " + rt.Path
	switch {
	case adminRoutes[name]:
		return token.Admin
	case rt.Method == http.MethodGet || rt.Method == http.MethodHead || readPosts[name]:
		return token.Read
	}
	return token.Write
}

// storeWide says a route is about the store rather than one namespace's
// memory: it ignores Engine-Namespace and narrows its answer to the
// request's scope itself.
func storeWide(rt Route) bool {
	return rt.Path == "/v1/namespaces" || strings.HasPrefix(rt.Path, "/v1/tokens")
}

// ErrForbidden marks a request its token's scope does not allow: a 403
// answer, on the server and in the client.
var ErrForbidden = errors.New("forbidden")

// forbiddenError is a request its token's scope does not allow (403).
type forbiddenError struct{ msg string }

func (e *forbiddenError) Error() string { return e.msg }

// Is makes the error an ErrForbidden.
func (e *forbiddenError) Is(target error) bool { return target == ErrForbidden }

func forbidden(format string, args ...any) error {
	return &forbiddenError{fmt.Sprintf(format, args...)}
}

// scopeName is how a token's namespaces are named in a refusal.
func scopeName(t token.Token) string {
	if t.All() {
		return "every namespace"
	}
	return "namespace " + t.Namespace
}

// authorize refuses a request its scope does not allow: a role below the
// route's, or a namespace the token does not open. ns is the namespace
// the request runs in ("-" the default).
func authorize(rt Route, t token.Token, ns string) error {
	if need := RoleOf(rt); !t.Role.Allows(need) {
		return forbidden("%s %s needs a %s token; this token (%s) is %s in %s", rt.Method, rt.Path, need, t.ID, t.Role, scopeName(t))
	}
	if !storeWide(rt) && !t.Opens(ns) {
		return forbidden("this token (%s) opens %s only, not namespace %s", t.ID, scopeName(t), ns)
	}
	return nil
}

// narrowUnknown narrows an unknown namespace's list of those that exist
// to the ones t opens.
func narrowUnknown(err *memory.UnknownNamespaceError, t token.Token) *memory.UnknownNamespaceError {
	if t.All() {
		return err
	}
	out := *err
	out.Known = slices.DeleteFunc(slices.Clone(err.Known), func(n string) bool { return !t.Opens(n) })
	return &out
}

// nsName is a memory's namespace as a request names it ("-" the default).
func nsName(ns string) string {
	if ns == "" {
		return memory.DefaultNamespace
	}
	return ns
}

// ProblemUnknownNamespace is the problem type of a request naming a
// namespace the store does not hold (404): the client reads it as bad
// input, since the name came from the caller (a CLI exits 2).
const ProblemUnknownNamespace = "urn:engine:problem:unknown-namespace"
