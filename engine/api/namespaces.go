package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/engine-dev/engine/engine/memory"
)

// Namespaces is GET /v1/namespaces's answer.
type Namespaces struct {
	Namespaces []memory.NamespaceInfo `json:"namespaces"`
}

// NamespaceRoutes are the routes about the store's namespaces (not one
// namespace's memory: they ignore Engine-Namespace).
func init() {
	routeSets = append(routeSets, func() []Route {
		return []Route{
			{Method: http.MethodGet, Path: "/v1/namespaces", Summary: "Every namespace of the store the token opens (the default as -), with how many keys and sites each holds", Response: Namespaces{},
				handle: func(c *call) (any, error) {
					ns, err := c.m.Namespaces(c.ctx)
					if scope, ok := ScopeOf(c.r.Context()); ok && !scope.All() {
						// A token of one namespace sees that one alone.
						ns = slices.DeleteFunc(ns, func(n memory.NamespaceInfo) bool { return !scope.Opens(n.Name) })
					}
					return Namespaces{Namespaces: ns}, err
				}},
		}
	})
}

// Namespaces is GET /v1/namespaces.
func (c *Client) Namespaces(ctx context.Context) ([]memory.NamespaceInfo, error) {
	var out Namespaces
	err := c.do(ctx, request{method: http.MethodGet, path: "/v1/namespaces"}, &out)
	return out.Namespaces, err
}
