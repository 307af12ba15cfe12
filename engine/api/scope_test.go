package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/token"
	"github.com/engine-dev/engine/kv"
)

// Every route, under every scope: a token whose role is below the route's
// (api.RoleOf), or that does not open the request's namespace, is 403
// before the route reads its body or the store changes; every other
// request gets past the check (whatever the route then answers to an
// empty body). Routes about the store (namespaces, tokens) take no
// namespace.
func TestScopeOfEveryRoute(t *testing.T) {
	ctx := context.Background()
	m := open(t)
	for _, ns := range []string{"a", "b"} {
		if _, err := m.CreateNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	h := api.Handler(m, api.Options{})
	param := regexp.MustCompile(`\{[a-z0-9_]+\}`)
	rank := map[token.Role]int{token.Read: 1, token.Write: 2, token.Admin: 3}
	admins := 0
	for _, rt := range api.Routes() {
		need := api.RoleOf(rt)
		if need == token.Admin {
			admins++
		}
		if (rt.Method == http.MethodGet) != (need == token.Read) && rt.Path != "/v1/recall/error" && !(rt.Method == http.MethodGet && need == token.Admin) {
			t.Errorf("%s %s needs %s", rt.Method, rt.Path, need)
		}
		storeWide := rt.Path == "/v1/namespaces" || strings.HasPrefix(rt.Path, "/v1/tokens")
		path := param.ReplaceAllString(rt.Path, "x")
		for _, scope := range []string{"a", token.AllNamespaces} {
			for _, role := range []token.Role{token.Read, token.Write, token.Admin} {
				for _, in := range []string{"a", "b"} {
					before := dump(t, m.DB())
					tk := token.Token{ID: "t1", Namespace: scope, Role: role}
					req := httptest.NewRequest(rt.Method, path, strings.NewReader(""))
					req = req.WithContext(api.WithScope(req.Context(), tk))
					req.Header.Set(api.HeaderNamespace, in)
					if rt.Method != http.MethodGet {
						req.Header.Set("Content-Type", "application/json")
						if rt.BodyType != "" {
							req.Header.Set("Content-Type", rt.BodyType)
						}
					}
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					body, _ := io.ReadAll(w.Result().Body)
					allowed := rank[role] >= rank[need] && (scope == token.AllNamespaces || scope == in || storeWide)
					if got := w.Code == http.StatusForbidden; got == allowed && !(storeWide && w.Code == http.StatusForbidden && scope != token.AllNamespaces) {
						t.Errorf("%s %s as %s of %s in %s: %d %s (allowed %v)", rt.Method, rt.Path, role, scope, in, w.Code, body, allowed)
					}
					if w.Code == http.StatusForbidden && dump(t, m.DB()) != before {
						t.Errorf("%s %s as %s of %s in %s: refused, yet the store changed", rt.Method, rt.Path, role, scope, in)
					}
				}
			}
		}
	}
	if admins < 10 {
		t.Errorf("only %d admin routes", admins)
	}
}

// dump is every key and value of db, as one string.
func dump(t *testing.T, db kv.Store) string {
	t.Helper()
	var b strings.Builder
	err := db.View(context.Background(), func(r kv.Reader) error {
		return r.Scan(nil, kv.ScanOptions{}, func(k, v []byte) error {
			b.Write(k)
			b.WriteByte('=')
			b.Write(v)
			b.WriteByte('\n')
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
