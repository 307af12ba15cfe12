package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/token"
)

// TokenRequest is POST /v1/tokens's body.
type TokenRequest struct {
	// Namespace is the namespace the token opens ("-" the default), or
	// "*" for every namespace.
	Namespace string `json:"namespace"`
	// Role is read, write or admin.
	Role string `json:"role"`
	// Name is a label to tell tokens apart.
	Name string `json:"name,omitempty"`
	// ExpiresIn is how long the token works, as a Go duration (720h);
	// "" for ever.
	ExpiresIn string `json:"expires_in,omitempty"`
}

// CreatedToken is POST /v1/tokens's answer: the token itself, shown this
// once (the store keeps its SHA-256), and what it opens.
type CreatedToken struct {
	token.Token
	Secret string `json:"token"`
}

// Tokens is GET /v1/tokens's answer.
type Tokens struct {
	Tokens []token.Token `json:"tokens"`
}

// NamespaceRequest is POST /v1/namespaces's body.
type NamespaceRequest struct {
	Name string `json:"name"`
}

// CreatedNamespace is POST /v1/namespaces's answer.
type CreatedNamespace struct {
	Name string `json:"name"`
	// Created is false when the namespace existed already.
	Created bool `json:"created"`
}

// Routes about tokens and about making namespaces: an admin's (RoleOf),
// and a token that opens one namespace manages that namespace's tokens
// only.
func init() {
	routeSets = append(routeSets, func() []Route {
		return []Route{
			{Method: http.MethodGet, Path: "/v1/tokens", Summary: "The bearer tokens the server accepts besides serve.token (never the tokens themselves)", Response: Tokens{},
				handle: func(c *call) (any, error) {
					ts, err := c.m.Tokens().List(c.ctx)
					if scope, ok := ScopeOf(c.r.Context()); ok && !scope.All() {
						ts = slices.DeleteFunc(ts, func(t token.Token) bool { return t.Namespace != scope.Namespace })
					}
					if ts == nil {
						ts = []token.Token{}
					}
					return Tokens{Tokens: ts}, err
				}},
			{Method: http.MethodPost, Path: "/v1/tokens", Summary: "Make a token opening one namespace (or every one) with a role: read, write or admin; the answer holds the token, shown this once", Body: TokenRequest{}, Response: CreatedToken{},
				handle: func(c *call) (any, error) {
					var req TokenRequest
					if err := c.decode(&req); err != nil {
						return nil, err
					}
					return createToken(c, req)
				}},
			{Method: http.MethodDelete, Path: "/v1/tokens/{id}", Summary: "Revoke a token: it is refused from then on", Response: token.Token{},
				handle: func(c *call) (any, error) {
					tokens := c.m.Tokens()
					t, err := tokens.Get(c.ctx, c.r.PathValue("id"))
					if err != nil {
						return nil, err
					}
					if scope, ok := ScopeOf(c.r.Context()); ok && !scope.All() && t.Namespace != scope.Namespace {
						// Another namespace's tokens are not this one's to see.
						return nil, token.ErrNotFound
					}
					return t, tokens.Revoke(c.ctx, t.ID)
				}},
			{Method: http.MethodPost, Path: "/v1/namespaces", Summary: "Make a namespace (its seed lessons written); an existing one is left as it is", Body: NamespaceRequest{}, Response: CreatedNamespace{},
				handle: func(c *call) (any, error) {
					var req NamespaceRequest
					if err := c.decode(&req); err != nil {
						return nil, err
					}
					if scope, ok := ScopeOf(c.r.Context()); ok && !scope.All() {
						return nil, forbidden("making a namespace needs an admin token of every namespace; this token (%s) opens %s only", scope.ID, scopeName(scope))
					}
					if req.Name == "" {
						return nil, engine.Invalid("namespace", "a name is required")
					}
					created, err := c.m.CreateNamespace(c.ctx, req.Name)
					return CreatedNamespace{Name: req.Name, Created: created}, err
				}},
		}
	})
}

// createToken checks a token request against the caller's scope and makes
// the token.
func createToken(c *call, req TokenRequest) (any, error) {
	role, err := token.ParseRole(req.Role)
	if err != nil {
		return nil, err
	}
	ns := req.Namespace
	switch ns {
	case "":
		return nil, engine.Invalid("token", "a namespace is required (- the default, * every namespace)")
	case token.AllNamespaces:
	default:
		if err := memory.CheckNamespace(ns); err != nil {
			return nil, err
		}
	}
	scope, scoped := ScopeOf(c.r.Context())
	if scoped && !scope.Opens(ns) {
		return nil, forbidden("this token (%s) opens %s only: it cannot make a token of %s", scope.ID, scopeName(scope), scopeName(token.Token{Namespace: ns}))
	}
	if ns != token.AllNamespaces {
		if _, err := c.m.WithNamespace(c.ctx, ns); err != nil {
			var unknown *memory.UnknownNamespaceError
			if errors.As(err, &unknown) && scoped {
				err = narrowUnknown(unknown, scope)
			}
			return nil, err
		}
	}
	spec := token.Spec{Namespace: ns, Role: role, Name: req.Name}
	if req.ExpiresIn != "" {
		d, err := time.ParseDuration(req.ExpiresIn)
		if err != nil || d <= 0 {
			return nil, engine.Invalidf("token", "expires_in %q: want a duration over 0 (720h, 30m)", req.ExpiresIn)
		}
		at := c.m.Now().Add(d).UTC().Truncate(time.Second)
		spec.ExpiresAt = &at
	}
	t, secret, err := c.m.Tokens().Create(c.ctx, spec)
	return CreatedToken{Token: t, Secret: secret}, err
}

// Tokens is GET /v1/tokens.
func (c *Client) Tokens(ctx context.Context) ([]token.Token, error) {
	var out Tokens
	err := c.do(ctx, request{method: http.MethodGet, path: "/v1/tokens"}, &out)
	return out.Tokens, err
}

// CreateToken is POST /v1/tokens.
func (c *Client) CreateToken(ctx context.Context, req TokenRequest) (*CreatedToken, error) {
	var out CreatedToken
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/tokens", json: req}, &out)
}

// RevokeToken is DELETE /v1/tokens/{id}.
func (c *Client) RevokeToken(ctx context.Context, id string) (*token.Token, error) {
	var out token.Token
	return &out, c.do(ctx, request{method: http.MethodDelete, path: pathf("/v1/tokens/%s", id)}, &out)
}

// CreateNamespace is POST /v1/namespaces.
func (c *Client) CreateNamespace(ctx context.Context, name string) (*CreatedNamespace, error) {
	var out CreatedNamespace
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/namespaces", json: NamespaceRequest{Name: name}}, &out)
}
