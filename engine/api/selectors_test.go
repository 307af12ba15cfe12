package api_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/selector"
)

// local returns an in-process client of a fresh memory whose clock is
// fixed at now, and the events its requests report.
func local(t *testing.T, now time.Time) (*api.LocalClient, *[]event.Event) {
	t.Helper()
	var events []event.Event
	c := api.Local(api.Handler(open(t), api.Options{AllowClock: true}), api.ClientOptions{
		Events: func(e event.Event) { events = append(events, e) },
		Now:    now,
	})
	t.Cleanup(func() { c.Close() })
	return c, &events
}

var march12 = time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)

func names(evs []event.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Name)
	}
	return out
}

func TestSelectorRoutes(t *testing.T) {
	ctx := context.Background()
	c, events := local(t, march12)

	got, err := c.RecordSelector(ctx, api.SelectorObservation{Domain: "https://www.shop.example/", Role: "Button", Name: " Search ", Selector: "#search"})
	if err != nil || got.Domain != "www.shop.example" || got.Role != "button" || got.Name != "Search" || got.Successes != 1 || got.Score() != 1 {
		t.Fatalf("record: %+v, %v", got, err)
	}
	if !got.LastSuccess.Equal(march12) {
		t.Fatalf("last success %v, want the request's clock %v", got.LastSuccess, march12)
	}
	if n := names(*events); len(n) != 1 || n[0] != selector.EventRecorded {
		t.Fatalf("events after record: %v", n)
	}
	if ok := (*events)[0].Fields["ok"]; ok != true {
		t.Fatalf("selector_recorded ok = %v", ok)
	}
	got, err = c.RecordSelector(ctx, api.SelectorObservation{Domain: "www.shop.example", Role: "button", Name: "Search", Selector: "#search", Failed: true})
	if err != nil || got.Successes != 1 || got.Failures != 1 || got.Score() != -1 {
		t.Fatalf("record a failure: %+v, %v", got, err)
	}
	if _, err := c.RecordSelector(ctx, api.SelectorObservation{Domain: "www.shop.example", Role: "button", Name: "Search", Selector: "[data-testid=search]"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RecordSelector(ctx, api.SelectorObservation{Domain: "www.shop.example", Path: "https://www.shop.example/product/123?ref=x", Role: "button", Name: "Add to cart", Selector: "#add"}); err != nil {
		t.Fatal(err)
	}

	all, err := c.Selectors(ctx, api.SelectorFilter{Domain: "shop.example"})
	if err != nil || len(all.Selectors) != 3 {
		t.Fatalf("list: %+v, %v", all, err)
	}
	if last := all.Selectors[2]; last.Selector != "#search" {
		t.Fatalf("list: the failing selector is not last: %+v", all.Selectors)
	}

	*events = nil
	product, err := c.Selectors(ctx, api.SelectorFilter{URL: "https://www.shop.example/product/987"})
	if err != nil || len(product.Selectors) != 2 || product.Selectors[0].Path != "/product/*" && product.Selectors[1].Path != "/product/*" {
		t.Fatalf("known on a product page: %+v, %v", product, err)
	}
	if n := names(*events); len(n) != 1 || n[0] != selector.EventRecall {
		t.Fatalf("events after known: %v", n)
	}
	cart, err := c.Selectors(ctx, api.SelectorFilter{URL: "https://www.shop.example/cart"})
	if err != nil || len(cart.Selectors) != 1 || cart.Selectors[0].Selector != "[data-testid=search]" {
		t.Fatalf("known on the cart page: %+v, %v", cart, err)
	}

	_, err = c.RecordSelector(ctx, api.SelectorObservation{Domain: "shop.example", Role: "", Name: "Go", Selector: "#go"})
	if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "the element's role is empty") {
		t.Fatalf("empty role: %v; want bad input naming the problem", err)
	}
	_, err = c.Selectors(ctx, api.SelectorFilter{Domain: "shop.example", URL: "https://shop.example/"})
	if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "give domain or url, not both") {
		t.Fatalf("domain and url: %v; want bad input", err)
	}
}

func TestSelectorRoutesOverHTTP(t *testing.T) {
	h := api.Handler(open(t), api.Options{})
	if b := body(t, do(t, h, "GET", "/v1/selectors", "", "")); strings.TrimSpace(b) != `{"selectors":[]}` {
		t.Fatalf("empty list: %s", b)
	}
	wantProblem(t, do(t, h, "GET", "/v1/selectors?url=http://", "", ""), 400, "url")
	wantProblem(t, do(t, h, "GET", "/v1/selectors?domain=a&url=https://a/", "", ""), 400, "not both")
	wantProblem(t, do(t, h, "POST", "/v1/selectors", "application/json", `{"domain": "a.example", "role": "button", "name": "Go", "selector": "#go", "failed": "yes"}`), 400, "body")
	wantProblem(t, do(t, h, "POST", "/v1/selectors", "application/json", `{"domain": "a.example", "role": "button", "name": "Go", "sel": "#go"}`), 400, `unknown field "sel"`)
	wantProblem(t, do(t, h, "POST", "/v1/selectors", "application/json", `{"domain": "a.example", "role": "button", "name": "Go", "selector": " "}`), 400, "the selector is empty")
	resp := do(t, h, "POST", "/v1/selectors", "application/json", `{"domain": "a.example", "role": "button", "name": "Go", "selector": "#go", "failed": true}`)
	if b := body(t, resp); resp.StatusCode != 200 || !strings.Contains(b, `"failures":1`) || strings.Contains(b, "last_success") {
		t.Fatalf("record a failure: %d %s", resp.StatusCode, b)
	}
}
