package session

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/memory/internal/touch"
)

// A Session holds nothing a copy shares with it (the decoded sessions are
// handed out as copies): every field filled, a copy changed through and
// through, the original is as it was.
func TestSessionCopySharesNothing(t *testing.T) {
	var s, want Session
	touch.All(&s)
	touch.All(&want)
	c := s
	touch.All(&c)
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("changing a copy changed the session: %+v, want %+v", s, want)
	}
}

// Sessions read again are the ones stored, and a session recorded since
// is among them.
func TestRecentAgain(t *testing.T) {
	ctx := context.Background()
	st := New(openDisk(t), Options{})
	if _, err := st.Record(ctx, Session{Domain: "example.com", Goal: "g1", Success: true, Timestamp: t0}); err != nil {
		t.Fatal(err)
	}
	first, err := st.Recent(ctx, "example.com", 5)
	if err != nil || len(first) != 1 {
		t.Fatalf("%+v, %v", first, err)
	}
	want := first[0]
	touch.All(&first[0])
	again, err := st.Recent(ctx, "example.com", 5)
	if err != nil || len(again) != 1 || !reflect.DeepEqual(again[0], want) {
		t.Fatalf("read again: %+v, %v; want %+v", again, err, want)
	}
	if _, err := st.Record(ctx, Session{Domain: "example.com", Goal: "g2", Timestamp: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	again, err = st.Recent(ctx, "example.com", 5)
	if err != nil || len(again) != 2 || again[0].Goal != "g2" || !reflect.DeepEqual(again[1], want) {
		t.Fatalf("after a new session: %+v, %v", again, err)
	}
}
