package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/agent"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/archive"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/forget"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/memctx"
	"github.com/engine-dev/engine/engine/memory/plan"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/session"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

func TestInvalidErrorMessages(t *testing.T) {
	cause := errors.New("boom")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{engine.Invalid("lesson", "the lesson text is empty"), "invalid lesson: the lesson text is empty"},
		{engine.Invalidf("run", "mode %q: use step or planner", "x"), `invalid run: mode "x": use step or planner`},
		{engine.Invalidf("fact", "domain: %w", cause), "invalid fact: domain: boom"},
		{engine.MarkInvalid(cause), "boom"},
		{&engine.InvalidError{Problem: "p", Err: cause}, "p: boom"},
		{fmt.Errorf("x.json: %w", engine.Invalid("fact", "the key is empty")), "x.json: invalid fact: the key is empty"},
	} {
		if tc.err.Error() != tc.want {
			t.Errorf("Error() = %q, want %q", tc.err, tc.want)
		}
		if !errors.Is(tc.err, engine.ErrInvalid) || !engine.IsInvalid(tc.err) {
			t.Errorf("%q: not ErrInvalid", tc.err)
		}
		if errors.Is(tc.err, engine.ErrNotFound) {
			t.Errorf("%q: is ErrNotFound", tc.err)
		}
		var ie *engine.InvalidError
		if !errors.As(tc.err, &ie) {
			t.Errorf("%q: not an *InvalidError", tc.err)
		}
	}
	if !errors.Is(engine.Invalidf("fact", "domain: %w", cause), cause) {
		t.Error("Invalidf does not wrap its %w operand")
	}
	if engine.MarkInvalid(nil) != nil {
		t.Error("MarkInvalid(nil) != nil")
	}
	if errors.Is(cause, engine.ErrInvalid) {
		t.Error("a plain error is ErrInvalid")
	}
}

func TestNotFoundSentinels(t *testing.T) {
	for _, s := range []error{lesson.ErrNotFound, run.ErrNotFound, plan.ErrNotFound, trajectory.ErrNotFound} {
		wrapped := fmt.Errorf("get x: %w", s)
		if !errors.Is(wrapped, engine.ErrNotFound) || !errors.Is(wrapped, s) {
			t.Errorf("%q: not ErrNotFound and itself", wrapped)
		}
		if errors.Is(wrapped, engine.ErrInvalid) {
			t.Errorf("%q is ErrInvalid", wrapped)
		}
	}
	if errors.Is(run.ErrNotFound, lesson.ErrNotFound) {
		t.Error("the stores' sentinels are one value")
	}
	if got := run.ErrNotFound.Error(); got != "no such run" {
		t.Errorf("run.ErrNotFound = %q", got)
	}
}

// TestEveryStoreBadInputIsErrInvalid feeds each store and parser input it
// refuses and checks the one classification the CLI relies on; and a
// lookup of an unknown id, for ErrNotFound.
func TestEveryStoreBadInputIsErrInvalid(t *testing.T) {
	ctx := context.Background()
	db := badgertest.OpenMemory(t)
	defer db.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"format": "nope"`), 0o644); err != nil {
		t.Fatal(err)
	}
	lessons := lesson.New(db, lesson.Options{})
	mem := archive.New(memory.New(db, memory.Options{}), archive.Options{})
	invalid := map[string]func() error{
		"lesson":          func() error { _, _, err := lessons.Record(ctx, lesson.Lesson{}, ""); return err },
		"lesson category": func() error { _, err := lesson.ParseCategory("nope"); return err },
		"lesson action log": func() error {
			_, err := lesson.ParseActionLog(strings.NewReader("not json\n"), "a.jsonl")
			return err
		},
		"lesson memory.json": func() error { _, err := lesson.ReadFile(strings.NewReader("{"), "m.json"); return err },
		"fact": func() error {
			_, err := fact.New(db, fact.Options{}).Observe(ctx, fact.Observation{Domain: "a.com", Type: "timing"})
			return err
		},
		"selector": func() error {
			_, err := selector.New(db, selector.Options{}).Record(ctx, selector.Observation{Domain: "a.com"})
			return err
		},
		"trajectory": func() error {
			_, err := trajectory.New(db, trajectory.Options{}).Record(ctx, trajectory.Trajectory{Domain: "a.com"})
			return err
		},
		"session":    func() error { _, err := session.New(db, session.Options{}).Record(ctx, session.Session{}); return err },
		"run":        func() error { _, err := run.New(db, run.Options{}).Start(ctx, run.Start{}); return err },
		"run status": func() error { _, err := run.ParseStatus("done"); return err },
		"plan":       func() error { _, err := plan.New(db, plan.Options{}).Add(ctx, " ", plan.Iteration{}); return err },
		"memctx": func() error {
			_, err := memctx.New(memctx.Sources{}, memctx.Options{}).Build(ctx, memctx.Request{URL: "http://", Goal: "x"})
			return err
		},
		"archive malformed": func() error { _, _, err := mem.Read(filepath.Join(dir, "bad.json")); return err },
		"archive missing":   func() error { _, _, err := mem.Read(filepath.Join(dir, "missing.json")); return err },
		"forget":            func() error { _, err := forget.Count(ctx, mem.Memory, "-"); return err },
		"agent":             func() error { _, err := agent.Run(ctx, agent.Config{}); return err },
	}
	for name, f := range invalid {
		err := f()
		if !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s: err = %v, want engine.ErrInvalid", name, err)
		}
		if errors.Is(err, engine.ErrNotFound) {
			t.Errorf("%s: %v is also ErrNotFound", name, err)
		}
	}

	notFound := map[string]func() error{
		"lesson": func() error { _, err := lessons.Get(ctx, "lnope"); return err },
		"run":    func() error { _, err := run.New(db, run.Options{}).Get(ctx, "nope"); return err },
		"plan":   func() error { _, err := plan.New(db, plan.Options{}).Get(ctx, "nope"); return err },
		"trajectory": func() error {
			_, err := trajectory.New(db, trajectory.Options{}).Get(ctx, "a.com", "tnope")
			return err
		},
	}
	for name, f := range notFound {
		err := f()
		if !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("%s: err = %v, want engine.ErrNotFound", name, err)
		}
		if errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s: %v is also ErrInvalid", name, err)
		}
	}
}
