package selector

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

var t0 = time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)

func openDisk(t *testing.T, dir string) kv.Store {
	t.Helper()
	db := badgertest.OpenDir(t, dir)
	return db
}

func names(ss []Selector) string {
	var b []string
	for _, s := range ss {
		b = append(b, s.Selector)
	}
	return strings.Join(b, " ")
}

func TestRankingByScoreAndDemotion(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openDisk(t, dir)
	now := t0
	s := New(db, Options{Now: func() time.Time { return now }})
	rec := func(sel string, failed bool) Selector {
		t.Helper()
		now = now.Add(time.Minute)
		out, err := s.Record(ctx, Observation{Domain: "www.shop.example", Role: "Button", Name: " Search ", Selector: sel, Failed: failed})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	rec("#search", false)
	rec("#search", false)
	rec("#search", false)
	rec("[data-testid=search]", false)
	rec("[data-testid=search]", false)
	if got := rec("#search", true); got.Successes != 3 || got.Failures != 1 || got.Score() != 1 {
		t.Fatalf("after one failure: %+v score %d", got, got.Score())
	}
	rec("button.old", true)
	db.Close()

	db = openDisk(t, dir)
	defer db.Close()
	s = New(db, Options{Now: func() time.Time { return now }})
	got, err := s.Lookup(ctx, "https://www.shop.example/", "button", "search")
	if err != nil {
		t.Fatal(err)
	}
	if names(got) != "[data-testid=search] #search button.old" {
		t.Fatalf("lookup order = %q", names(got))
	}
	known, err := s.Known(ctx, "https://www.shop.example/anything", 0)
	if err != nil {
		t.Fatal(err)
	}
	if names(known) != "[data-testid=search] #search" {
		t.Fatalf("known = %q, want the two with a positive score", names(known))
	}
	if known[0].Role != "button" || known[0].Name != "Search" {
		t.Errorf("identity not normalised: %q %q", known[0].Role, known[0].Name)
	}
}

func TestPathScope(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	s := New(db, Options{Now: func() time.Time { return t0 }})
	for _, o := range []Observation{
		{Domain: "shop.example", Role: "link", Name: "Cart", Selector: "#cart"},
		{Domain: "shop.example", Path: "https://shop.example/product/123/?ref=x", Role: "button", Name: "Add to cart", Selector: "#add"},
		{Domain: "shop.example", Path: "/checkout", Role: "button", Name: "Pay", Selector: "#pay"},
		{Domain: "mail.shop.example", Role: "button", Name: "Send", Selector: "#send"},
	} {
		if _, err := s.Record(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	known, err := s.Known(ctx, "https://shop.example/product/987?x=1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(known); got != "#add #cart" && got != "#cart #add" {
		t.Fatalf("on a product page: %q, want #cart and #add", got)
	}
	known, err = s.Known(ctx, "https://mail.shop.example/inbox", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(known); got != "#cart #send" && got != "#send #cart" {
		t.Fatalf("on mail.shop.example: %q, want the site-wide #cart and #send", got)
	}
}

func TestBadInput(t *testing.T) {
	db := badgertest.OpenMemory(t)
	defer db.Close()
	s := New(db, Options{})
	for _, c := range []struct {
		o    Observation
		want string
	}{
		{Observation{Domain: "a.com", Name: "Go", Selector: "#go"}, "invalid selector: the element's role is empty (button, link, textbox, ...)"},
		{Observation{Domain: "a.com", Role: "button", Selector: "#go"}, "invalid selector: the element's accessible name is empty"},
		{Observation{Domain: "a.com", Role: "button", Name: "Go"}, "invalid selector: the selector is empty"},
		{Observation{Role: "button", Name: "Go", Selector: "#go"}, "invalid selector: domain: empty domain"},
	} {
		_, err := s.Record(context.Background(), c.o)
		if err == nil || !errors.Is(err, engine.ErrInvalid) || err.Error() != c.want {
			t.Errorf("%+v: err = %v, want %q", c.o, err, c.want)
		}
	}
}

func TestPutAndCheck(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openDisk(t, dir)
	s := New(db, Options{Now: func() time.Time { return t0 }})
	in := Selector{Domain: "Shop.Example", Path: "/p/77", Role: "Button", Name: "Buy  now", Selector: "#buy",
		Successes: 5, Failures: 1, LastSuccess: t0.Add(-time.Hour)}
	got, err := s.Put(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if got.Domain != "shop.example" || got.Path != "/p/*" || got.Role != "button" || got.Name != "Buy now" || !got.FirstSeen.Equal(t0) {
		t.Fatalf("put normalised to %+v", got)
	}
	// Recording after a Put continues from its counts.
	rec, err := s.Record(ctx, Observation{Domain: "shop.example", Path: "/p/1", Role: "button", Name: "buy now", Selector: "#buy"})
	if err != nil || rec.Successes != 6 || rec.Failures != 1 || rec.Score() != 4 {
		t.Fatalf("record after put: %+v %v", rec, err)
	}
	db.Close()
	db = openDisk(t, dir)
	defer db.Close()
	s = New(db, Options{})
	all, err := s.List(ctx, "shop.example")
	if err != nil || len(all) != 1 || all[0].Successes != 6 {
		t.Fatalf("after reopening: %+v %v", all, err)
	}
	for _, c := range []struct {
		sl   Selector
		want string
	}{
		{Selector{Domain: "a.com", Role: "button", Name: "Go", Selector: "#go"}, "invalid selector: a selector needs at least one success or failure"},
		{Selector{Domain: "a.com", Role: "button", Name: "Go", Selector: "#go", Successes: -1, Failures: 2}, "invalid selector: successes -1 and failures 2 must not be negative"},
		{Selector{Domain: "a.com", Name: "Go", Selector: "#go", Successes: 1}, "invalid selector: the element's role is empty (button, link, textbox, ...)"},
	} {
		if err := Check(c.sl); err == nil || err.Error() != c.want {
			t.Errorf("Check(%+v) = %v, want %q", c.sl, err, c.want)
		}
		if _, err := s.Put(ctx, c.sl); err == nil || !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("Put(%+v) = %v, want an invalid-selector error", c.sl, err)
		}
	}
}

func TestCachedSelectorsFollowWrites(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	a := New(db, Options{Now: func() time.Time { return t0 }})
	b := New(db, Options{Now: func() time.Time { return t0 }})
	o := Observation{Domain: "a.example", Role: "button", Name: "Go", Selector: "#go"}
	if _, err := b.Record(ctx, o); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Known(ctx, "https://a.example/", 0); err != nil || len(got) != 1 {
		t.Fatalf("first read: %+v %v", got, err)
	}
	o.Failed = true
	if _, err := b.Record(ctx, o); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Known(ctx, "https://a.example/", 0); err != nil || len(got) != 0 {
		t.Fatalf("after another store recorded a failure: %+v %v", got, err)
	}
	if _, err := b.Put(ctx, Selector{Domain: "a.example", Role: "button", Name: "Go", Selector: "#go", Successes: 9}); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Known(ctx, "https://a.example/", 0); len(got) != 1 || got[0].Successes != 9 {
		t.Fatalf("after a put: %+v", got)
	}
	if err := db.DropPrefix(ctx, []byte("site/a.example/")); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.List(ctx, "a.example"); len(got) != 0 {
		t.Fatalf("after forgetting the site: %+v", got)
	}
}

// A path scope goes into the selector's key: one over MaxPath is bad input
// naming the limit, never a store error, and nothing is written.
func TestLongPathRefused(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	s := New(db, Options{Now: func() time.Time { return t0 }})
	long := "/" + strings.Repeat("a", 70000)
	_, err := s.Record(ctx, Observation{Domain: "shop.example", Path: long, Role: "button", Name: "Pay", Selector: "#pay"})
	if !engine.IsInvalid(err) || !strings.Contains(err.Error(), "path is 70001 characters long (at most 1000)") {
		t.Fatalf("Record with a 70k path = %v", err)
	}
	_, err = s.Put(ctx, Selector{Domain: "shop.example", Path: long, Role: "button", Name: "Pay", Selector: "#pay", Successes: 1})
	if !engine.IsInvalid(err) {
		t.Fatalf("Put with a 70k path = %v", err)
	}
	if got, err := s.List(ctx, "shop.example"); err != nil || len(got) != 0 {
		t.Fatalf("after the refused writes: %v, %v", got, err)
	}
}
