package agent

import (
	"context"
	"fmt"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/fingerprint"
	"github.com/engine-dev/engine/engine/memory/memctx"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// replayState is a trajectory being replayed.
type replayState struct {
	id    string
	steps []trajectory.Step
	next  int
	// target is the element the next step acts on, found in the memory
	// phase (selector cache first); nil when the step has none or it was
	// not found.
	target   *engine.Element
	notFound string
	// known are memory's selectors for the next step's element that had
	// worked: stale when the element is not there.
	known []selector.Selector
}

// startReplay begins replaying m when it matches closely and every
// parameter is bound; else it says why not.
func (r *runner) startReplay(m *trajectory.Match) string {
	skip := func(fields map[string]any) string {
		r.emit("replay_skipped", fields)
		return fields["reason"].(string)
	}
	if m.Similarity < ReplayThreshold {
		return skip(map[string]any{"trajectory": m.Trajectory.ID, "similarity": m.Similarity, "reason": "similarity below threshold"})
	}
	for _, b := range m.Bindings {
		if !b.Bound {
			return skip(map[string]any{"trajectory": m.Trajectory.ID, "reason": fmt.Sprintf("parameter {%d} (%q) is not bound by the goal", b.Param, b.Recorded)})
		}
	}
	for _, s := range m.Steps {
		if s.Secret {
			return skip(map[string]any{"trajectory": m.Trajectory.ID, "reason": "a step enters a secret"})
		}
	}
	r.replay = &replayState{id: m.Trajectory.ID, steps: m.Steps}
	r.replayed = &run.Replay{Trajectory: m.Trajectory.ID}
	r.emit("replay_started", map[string]any{"trajectory": m.Trajectory.ID, "similarity": m.Similarity, "steps": len(m.Steps)})
	return ""
}

// replayLookup finds the next step's element, the selector cache first,
// then the recorded role and name. It runs in the memory phase.
func (r *runner) replayLookup(ctx context.Context) error {
	rs := r.replay
	rs.target, rs.notFound, rs.known = nil, "", nil
	if rs.next >= len(rs.steps) {
		return nil
	}
	st := rs.steps[rs.next]
	if st.Role == "" && st.Name == "" {
		return nil
	}
	sels, err := r.mem.LookupSelectors(ctx, r.page.URL, st.Role, st.Name)
	if err != nil {
		return err
	}
	for _, sel := range sels {
		if sel.Successes > 0 {
			rs.known = append(rs.known, sel)
		}
	}
	if st.Selector != "" {
		sels = append(sels, selectorOnly(st.Selector))
	}
	for _, sel := range sels {
		if role, name, ok := parseSelector(sel.Selector); ok {
			if e, ok := r.page.FindByName(role, name); ok {
				rs.target = &e
				return nil
			}
		}
	}
	if e, ok := r.page.FindByName(st.Role, st.Name); ok {
		rs.target = &e
		return nil
	}
	rs.notFound = fmt.Sprintf("the page has no %s %q", st.Role, st.Name)
	return nil
}

// replayStep runs the next trajectory step without the model. It returns
// false when replay handed over to the model (which then decides this
// step). A hand-over where the site diverged from the trajectory (every
// one but a run started on another page) marks the trajectory stale at
// the run's end; one because the step's element is gone also marks the
// selectors memory had for it stale, at once.
func (r *runner) replayStep(ctx context.Context, step int, mc *memctx.Result) bool {
	rs := r.replay
	handOver := func(why string, diverged bool) bool {
		at := rs.next + 1
		r.emit("replay_handover", map[string]any{"trajectory": rs.id, "at_step": at, "reason": why, "stale": diverged})
		r.notes = append(r.notes, fmt.Sprintf("Replay of the reference trajectory stopped at its step %d: %s. Continue the task from here.", at, why))
		r.replay = nil
		r.replayed.FellBackAt, r.replayed.Reason = at, clip(r.red.String(why), 500)
		if diverged {
			r.markStale(r.page.URL, rs.id, at, why)
		}
		return false
	}
	if rs.next >= len(rs.steps) {
		return handOver("the trajectory ended without finishing", true)
	}
	if r.cfg.Model == nil {
		// A replay-only run has nobody to hand over to.
		defer func() {
			if r.replay == nil && !r.stopped {
				r.stop(false, "replay_failed: no model to hand over to")
			}
		}()
	}
	st := rs.steps[rs.next]
	// Before: the page is the one the step ran on.
	if st.URL != "" && !samePage(st.URL, r.page.URL) {
		if rs.next == 0 {
			// Another start page is another task's, not a changed site.
			return handOver(fmt.Sprintf("the run starts on %s, the trajectory on %s", r.page.URL, st.URL), false)
		}
		return handOver(fmt.Sprintf("after step %d the page is %s, not %s as recorded", rs.next, r.page.URL, st.URL), true)
	}
	// What a model call would have cost here.
	est := memctx.Tokens(r.system) + memctx.Tokens(r.stepMessage(step, mc)) + 3 + 20
	if st.Action == ToolFinish {
		r.res.Answer = st.Value
		r.res.Replayed++
		r.replayed.Replayed++
		r.res.LLMCallsSaved++
		r.res.TokensSaved += est
		r.stop(true, ReasonFinished)
		r.onStep(StepInfo{Step: step, Action: "finish", OK: true, Replayed: true})
		r.replay = nil
		return true
	}
	c := call{Kind: engine.ActionKind(st.Action), Value: st.Value}
	if st.Role != "" || st.Name != "" {
		if rs.target == nil {
			if err := r.selectorsGone(ctx, rs.known); err != nil {
				r.stopFailed(ctx, fmt.Sprintf("memory: %v", err))
				return true
			}
			why := "the expected element is not there: " + rs.notFound
			if ch := fingerprint.Compare(stepChecked(st), r.page.checked("")); ch != "" {
				why += "; " + ch
			}
			return handOver(why, true)
		}
		c.Ref = rs.target.Ref
	}
	// What the step's element and page are checked against now, for the
	// reason should the step fail.
	now := r.page.checked(c.Ref)
	r.shownLessons, r.shownTrajectory, r.shownSteps = nil, rs.id, rs.steps
	if !r.perform(ctx, step, c, true) {
		if r.stopped {
			return true
		}
		why := "the step failed: " + r.lastErr
		if ch := fingerprint.Compare(stepChecked(st), now); ch != "" {
			why += "; " + ch
		}
		return handOver(why, true)
	}
	rs.next++
	r.replayed.Replayed++
	r.res.Replayed++
	r.res.LLMCallsSaved++
	r.res.TokensSaved += est
	return true
}

// markStale notes that trajectory id no longer holds from its step at
// (1-based), found on page, for the request at the run's end; a
// trajectory is marked once per run (its first divergence).
func (r *runner) markStale(page, id string, at int, why string) {
	host, err := domain.Host(page)
	if err != nil || !run.WebURL(page) {
		if host, err = domain.Host(r.cfg.StartURL); err != nil {
			return
		}
	}
	for _, m := range r.staleMarks {
		if m.ID == id {
			return
		}
	}
	r.staleMarks = append(r.staleMarks, trajectory.StaleMark{Domain: host, ID: id, Step: at, Reason: clip(r.red.String(oneLine(why)), 400)})
}

// selectorsGone records a failure of each selector memory had for an
// element the page no longer has: having worked before, each goes stale,
// with how the page differs from what the selector was last checked
// against ("the element is gone from /; the page changed: fingerprint
// 1a2b3c4d → 5e6f7a8b") as the reason.
func (r *runner) selectorsGone(ctx context.Context, known []selector.Selector) error {
	if !run.WebURL(r.page.URL) {
		return nil
	}
	now := r.page.checked("")
	for _, s := range known {
		var was engine.Checked
		if s.Checked != nil {
			was = *s.Checked
		}
		why := fingerprint.Change(was, now.Path, r.page.Elements, s.Role, s.Name)
		if why == "" {
			why = fmt.Sprintf("the page has no %s %q", s.Role, s.Name)
		}
		obs := api.SelectorObservation{Domain: r.page.URL, Path: s.Path, Role: s.Role, Name: s.Name, Selector: s.Selector,
			Failed: true, Reason: clip(oneLine(why), 400)}
		r.red.Value(&obs)
		if _, err := r.mem.RecordSelector(ctx, obs); err != nil {
			return err
		}
	}
	return nil
}

// sendStale marks the trajectories the run found no longer holding, in one
// request.
func (r *runner) sendStale(ctx context.Context) error {
	if len(r.staleMarks) == 0 {
		return nil
	}
	_, err := r.mem.MarkTrajectoriesStale(ctx, api.StaleTrajectories{Trajectories: r.staleMarks})
	r.staleMarks = nil
	return err
}
