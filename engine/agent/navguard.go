package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/agent/navpolicy"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/runfiles"
)

// ReasonNavigationBlocked stops a run whose page went where the navigation
// policy does not allow and could not be brought back.
const ReasonNavigationBlocked = "navigation_blocked"

// The navigation guard (engine/agent/navpolicy decides, this enforces) works from
// snapshot URLs, so it holds for every browser plugin:
//
//   - a navigate the model asks for is checked before anything is loaded
//     (checkNavigate);
//   - after every action that ran, the page is looked at (checkLanded): on a
//     page the policy refuses (a link, a form, a redirect took it there)
//     the browser goes back, and the action failed with the reason. That
//     snapshot is the next step's, so it costs nothing extra;
//   - every other snapshot is checked too (observe): a page that moved by
//     itself (the start URL's redirect, a timed redirect) is left the same
//     way, and told to the model as a note.
//
// A refused page has been loaded by the time the engine sees its URL; only
// the typed navigate is stopped before any request.
type navGuard struct {
	policy  *navpolicy.Policy
	pending *engine.Snapshot // taken by checkLanded, used by the next observe
}

// blockedLeft is the error of an action that took the page where it may
// not go: the policy's reason and where the page was brought back to.
type blockedLeft struct {
	*navpolicy.BlockedError
	back string
}

func (e *blockedLeft) Error() string {
	return fmt.Sprintf("%s (the page went there; went back to %s)", e.BlockedError.Error(), e.back)
}

// checkNavigate refuses a navigate to a URL the policy does not allow.
func (r *runner) checkNavigate(ctx context.Context, c call) error {
	if c.Kind != engine.ActNavigate {
		return nil
	}
	return r.nav.policy.Check(ctx, c.Value)
}

// checkLanded looks at the page after an action ran. On a refused page it
// leaves it (back, else the page the action was taken on) and returns why;
// when the page cannot be left the run stops.
func (r *runner) checkLanded(ctx context.Context) error {
	s, err := r.cfg.Browser.Snapshot(ctx)
	if err != nil {
		return nil // the next step's snapshot reports it
	}
	bad := r.nav.policy.CheckLanded(ctx, s.URL)
	if bad == nil {
		r.nav.pending = s
		return nil
	}
	var be *navpolicy.BlockedError
	errors.As(bad, &be)
	back, lerr := r.leave(ctx, r.page.URL)
	if lerr != nil {
		r.stopBlocked(ctx, be, lerr)
		return be
	}
	r.nav.pending = back
	return &blockedLeft{BlockedError: be, back: back.URL}
}

// observe is the snapshot of a step: the one checkLanded took, or a fresh
// one. A fresh one on a refused page (it moved by itself) is left, counted
// as an error and told to the model; nil, nil when the run stopped.
func (r *runner) observe(ctx context.Context) (*engine.Snapshot, error) {
	if s := r.nav.pending; s != nil {
		r.nav.pending = nil
		return s, nil
	}
	s, err := r.cfg.Browser.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	bad := r.nav.policy.CheckLanded(ctx, s.URL)
	if bad == nil {
		return s, nil
	}
	var be *navpolicy.BlockedError
	errors.As(bad, &be)
	r.log(record{Record: runfiles.Record{Step: r.res.Steps, Action: "navigation_blocked", OK: false, ToolError: be.Error(), Origin: lesson.OriginEngine, URL: s.URL}})
	r.res.Errors++
	r.onStep(StepInfo{Step: r.res.Steps, Error: be.Error()})
	if r.page.URL == "" {
		// The start page itself went there: nowhere allowed to go back to.
		r.stopBlocked(ctx, be, fmt.Errorf("the start URL %s went there", r.cfg.StartURL))
		return nil, nil
	}
	back, lerr := r.leave(ctx, r.page.URL)
	if lerr != nil {
		r.stopBlocked(ctx, be, lerr)
		return nil, nil
	}
	r.notes = append(r.notes, fmt.Sprintf("IMPORTANT - The page went to %s by itself (a redirect) and was left: %s. You are back on %s.", s.URL, be.Error(), back.URL))
	if r.res.Errors >= r.cfg.MaxErrors {
		r.stop(false, ReasonMaxErrors)
	}
	return back, nil
}

// leave brings the browser from a refused page back to an allowed one:
// back in its history, else to safe (a page that was allowed, "" for
// none). It returns the snapshot of where it ended.
func (r *runner) leave(ctx context.Context, safe string) (*engine.Snapshot, error) {
	try := func(move func() error) (*engine.Snapshot, error) {
		if err := move(); err != nil {
			return nil, err
		}
		s, err := r.cfg.Browser.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		if err := r.nav.policy.CheckLanded(ctx, s.URL); err != nil {
			return nil, err
		}
		return s, nil
	}
	s, err := try(func() error { return r.cfg.Browser.Act(ctx, engine.Action{Kind: engine.ActBack}) })
	if err == nil || safe == "" || ctx.Err() != nil {
		return s, err
	}
	return try(func() error { return r.cfg.Browser.Navigate(ctx, safe) })
}

// stopBlocked stops a run whose page could not be brought back.
func (r *runner) stopBlocked(ctx context.Context, be *navpolicy.BlockedError, why error) {
	r.stopFailed(ctx, fmt.Sprintf("%s: %s; could not leave the page: %v", ReasonNavigationBlocked, be.Error(), why))
}

// blocked records an action the navigation policy refused, or that took
// the page where the policy does not allow. The reason goes to the model
// as a failed action; it is logged as a tool_error, not an error, so that
// no lesson is learned from the run's own policy, and it is kept out of
// the trajectory.
func (r *runner) blocked(step int, rec record, desc string, err error) bool {
	msg := err.Error()
	rec.OK, rec.ToolError, rec.Origin = false, msg, lesson.OriginEngine
	r.log(rec)
	r.res.Errors++
	r.lastDesc, r.lastErr, r.lastCommand, r.lastOK = desc, msg, "", false
	r.pushRecent(desc + " → error: " + msg)
	r.onStep(StepInfo{Step: step, Action: desc, Error: msg, Replayed: rec.Replayed})
	if r.res.Errors >= r.cfg.MaxErrors {
		r.stop(false, ReasonMaxErrors)
	}
	r.shownLessons = nil
	return false
}
