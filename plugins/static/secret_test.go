package static

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

// Secret fields (by type, autocomplete, name or label) are marked and
// their values never reported, before or after a fill; other fields are.
func TestSecretFieldsNeverReported(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Sign in</title>
<form method="post" action="/post">
  <label>Email <input name="email" value="alice@example.com"></label>
  <label for="pw">Password</label><input id="pw" type="password" value="prefilled-pw-1">
  <input name="key" aria-label="API key" value="sk-prefilled0000000000000">
  <input name="cc" autocomplete="cc-number" placeholder="Card" value="4111111111111111">
  <textarea name="recovery_token" aria-label="Recovery">token-in-textarea</textarea>
  <input type="submit" value="Sign in">
</form>`)
	}))
	defer ts.Close()
	ctx := context.Background()
	b := New()
	if err := b.Open(ctx, nil); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Navigate(ctx, ts.URL+"/"); err != nil {
		t.Fatal(err)
	}
	s, err := b.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]engine.Element{}
	for _, el := range s.Elements {
		byName[el.Name] = el
	}
	if err := b.Act(ctx, engine.Action{Kind: engine.ActFill, Ref: byName["Password"].Ref, Value: "typed-secret-2"}); err != nil {
		t.Fatal(err)
	}
	after, err := b.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, snap := range []*engine.Snapshot{s, after} {
		all := fmt.Sprintf("%+v", *snap)
		for _, v := range []string{"prefilled-pw-1", "typed-secret-2", "sk-prefilled", "4111111111111111", "token-in-textarea"} {
			if strings.Contains(all, v) {
				t.Errorf("the snapshot reports %q:\n%s", v, all)
			}
		}
		if !strings.Contains(snap.Tree, `value="alice@example.com"`) {
			t.Errorf("an ordinary field's value is not reported:\n%s", snap.Tree)
		}
		secret := map[string]bool{}
		for _, el := range snap.Elements {
			if slices.Contains(el.States, engine.StateSecret) {
				secret[el.Name] = true
				if !slices.Contains(el.States, stateFilled) {
					t.Errorf("%s: holds a value but is not marked filled: %v", el.Name, el.States)
				}
			}
		}
		for _, n := range []string{"Password", "API key", "Card", "Recovery"} {
			if !secret[n] {
				t.Errorf("%s is not marked secret: %+v", n, snap.Elements)
			}
		}
		if secret["Email"] || len(secret) != 4 {
			t.Errorf("secret fields: %v", secret)
		}
		if !strings.Contains(snap.Tree, `"Password" [ref=`) || !strings.Contains(snap.Tree, "[secret]") {
			t.Errorf("tree:\n%s", snap.Tree)
		}
	}
}
