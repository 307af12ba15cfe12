package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/fingerprint"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/memctx"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// memoryPhase is a step's visit to memory: attribution for the previous
// step, the manifest's progress, then one context request for this step
// (memctx builds it, as `engine query context` does): the memory block,
// the site's tips when the domain changed (Trigger B) and, after a failure
// on the page's side, the tips for its error (Trigger A) that the message
// appends to the error. Nothing is opened or closed.
func (r *runner) memoryPhase(ctx context.Context, step int) (*memctx.Result, error) {
	host, _ := domain.Host(r.page.URL)
	changed := host != r.lastHost
	r.lastHost = host
	m, err := r.mem.UpdateRun(ctx, r.res.RunID, api.RunProgress{CurrentURL: r.red.String(r.page.URL), TurnCount: step - 1})
	if err != nil {
		return nil, err
	}
	r.art.writeManifest(m, r.red)
	if r.cfg.NoMemory || host == "" {
		return nil, nil
	}
	r.attribute()
	mc, err := r.mem.Context(ctx, r.traced(r.contextRequest(step, changed)))
	if err != nil {
		return nil, err
	}
	r.keepShown(mc)
	if step == 1 && r.cfg.Replay && mc.Match != nil {
		r.startReplay(mc.Match)
	}
	if r.replay != nil {
		if err := r.replayLookup(ctx); err != nil {
			return nil, err
		}
	}
	return mc, nil
}

// keepShown keeps what a step's context showed, for Trigger A's message,
// attribution and selector failures: the error tips, the lessons (with
// how each recovers), the selectors, the facts and the reference
// trajectory.
func (r *runner) keepShown(mc *memctx.Result) {
	r.lastTips = mc.ErrorTips
	r.shownSelectors = mc.Selectors
	r.shownFacts = mc.Facts
	r.shownLessons = mc.Lessons
	for i, id := range mc.Lessons {
		if _, ok := r.recovery[id]; !ok && i < len(mc.LessonTexts) {
			if r.recovery == nil {
				r.recovery = map[string]lesson.Recovery{}
			}
			r.recovery[id] = lesson.RecoveryOf(mc.LessonTexts[i])
		}
	}
	r.shownTrajectory, r.shownSteps = "", nil
	if mc.Match != nil {
		r.shownTrajectory, r.shownSteps = mc.Match.Trajectory.ID, mc.Match.Steps
	}
}

// traced is req with the run's ranking of reference trajectories
// (Config.TraceScoring, Config.TraceTTLDays), so every context a run or a
// session asks for picks the same one.
func (r *runner) traced(req memctx.Request) api.ContextRequest {
	return api.ContextRequest{Request: req, Weighted: r.cfg.TraceScoring, TraceTTLDays: r.cfg.TraceTTLDays}
}

// contextRequest is the step's state as memory is told it: the page, the
// goal, whether the domain was just entered, and the last command and its
// error when it failed on the page's side (lastCommand is "" otherwise:
// tips about the page are no help with the model's own mistake).
func (r *runner) contextRequest(step int, entered bool) memctx.Request {
	req := memctx.Request{URL: r.red.String(r.page.URL), Goal: r.goal, Step: step, Budget: r.cfg.Budget, SkipDomainTips: !entered}
	if r.lastErr != "" && r.lastCommand != "" {
		req.LastCommand, req.LastError = r.red.String(r.lastCommand), r.red.String(r.lastErr)
	}
	return req
}

// selectorFailed records a failure of the selector memory offered for
// rec's element, when the action failed on the page's side: a stale
// selector's score drops. A failure of engine origin (a ref or name the
// page does not have, a malformed action) says nothing about the selector.
func (r *runner) selectorFailed(ctx context.Context, rec record) error {
	if rec.Origin != lesson.OriginBrowser || rec.Role == "" || rec.Name == "" || !run.WebURL(rec.URL) {
		return nil
	}
	for _, s := range r.shownSelectors {
		if !strings.EqualFold(s.Role, rec.Role) || oneLine(s.Name) != oneLine(rec.Name) {
			continue
		}
		obs := api.SelectorObservation{Domain: rec.URL, Path: s.Path, Role: s.Role, Name: s.Name, Selector: s.Selector, Failed: true}
		r.red.Value(&obs)
		_, err := r.mem.RecordSelector(ctx, obs)
		return err
	}
	return nil
}

// attribution is what one step showed, what its action used of it, and
// whether it counts as help.
type attribution struct {
	step       int
	lessons    []string
	lessonUsed []bool // the action followed lessons[i] (lesson.UsedBy)
	trajectory string
	trajUsed   bool // the action is a step of the reference trajectory
	selectors  []memctx.Shown
	selUsed    []bool // selectors[i]'s element is the action's
	facts      []memctx.ShownFact
	factUsed   []bool // facts[i] names what the action did
	ok         bool
	host       string
	why        string // why the memory shown is not credited; "" when it is
}

// attribute notes what the previous step's action did with the memory its
// context showed: which lessons, selectors and facts and whether the
// reference trajectory it used (lesson.UsedBy, usedSelector, usedFact,
// usedStep), and whether they helped:
// its action succeeded after they were shown, and it was not the model's
// recovery from its own mistake (a failure of engine origin: an unknown
// ref or name, a malformed action). The credit itself waits for the end of
// the run (credit): only a successful run credits memory.
func (r *runner) attribute() {
	if len(r.actions) == 0 {
		return
	}
	last := &r.actions[len(r.actions)-1]
	if last.attributed || (len(last.Lessons) == 0 && last.Trajectory == "" && len(last.selectors) == 0 && len(last.facts) == 0) {
		return
	}
	last.attributed = true
	host, _ := domain.Host(last.URL)
	a := attribution{step: last.Step, lessons: last.Lessons, trajectory: last.Trajectory, ok: last.OK, host: host,
		selectors: last.selectors, selUsed: make([]bool, len(last.selectors))}
	for i, s := range last.selectors {
		a.selUsed[i] = usedSelector(s, *last)
	}
	a.lessonUsed = make([]bool, len(last.Lessons))
	for i, id := range last.Lessons {
		a.lessonUsed[i] = r.recovery[id].FollowedBy(engineKind(last.Action), last.Name, last.Value)
	}
	a.facts, a.factUsed = last.facts, make([]bool, len(last.facts))
	for i, f := range last.facts {
		a.factUsed[i] = usedFact(f, *last)
	}
	a.trajUsed = last.Trajectory != "" && usedStep(last.refSteps, *last)
	if !last.OK && !last.Replayed && last.Origin == lesson.OriginBrowser && last.Trajectory != "" &&
		last.Step >= 1 && last.Step <= len(last.refSteps) && usedStep(last.refSteps[last.Step-1:last.Step], *last) {
		// The reference's step at this position failed on the page: the
		// site no longer is as the trajectory recorded it.
		why := fmt.Sprintf("step %d failed: %s", last.Step, last.Error)
		if c := fingerprint.Compare(stepChecked(last.refSteps[last.Step-1]), last.checked); c != "" {
			why += "; " + c
		}
		r.markStale(last.URL, last.Trajectory, last.Step, why)
	}
	if !last.OK && last.Origin == lesson.OriginBrowser && last.checked.Page != "" {
		// The lessons shown before an action that failed on the page: a
		// site-bound one that recommends it goes stale if its page changed
		// (the store decides, at the run's end).
		for _, id := range last.Lessons {
			r.lessonFails = append(r.lessonFails, lesson.PageFailure{ID: id, Action: last.Action, Element: clip(r.red.String(oneLine(last.Name)), 200),
				Path: r.red.String(last.checked.Path), Page: last.checked.Page})
		}
	}
	switch {
	case !last.OK:
		a.why = "the action failed"
	case last.afterEngine:
		a.why = "the action recovered from an engine-side failure"
	}
	r.attributions = append(r.attributions, a)
}

// stepChecked is what a trajectory step was checked against when it was
// recorded (empty fingerprints for a step recorded before them).
func stepChecked(st trajectory.Step) engine.Checked {
	return engine.Checked{Path: st.Path, Fingerprint: st.Fingerprint, Page: st.Page}
}

// usedSelector reports whether rec's action used the shown selector: it
// acted on the selector's element (role, case aside, and accessible name,
// spacing aside).
func usedSelector(s memctx.Shown, rec record) bool {
	return rec.Role != "" && strings.EqualFold(s.Role, rec.Role) && oneLine(s.Name) == oneLine(rec.Name)
}

// usedFact reports whether rec's action used the shown fact: the fact's
// key or value names the action's element (its accessible name, 3
// characters or more, case and spacing aside) or, for a key press without
// one, says "press" and the key.
func usedFact(f memctx.ShownFact, rec record) bool {
	text := strings.ToLower(oneLine(f.Key + " " + f.Value))
	if n := strings.ToLower(oneLine(rec.Name)); len(n) >= 3 {
		return strings.Contains(text, n)
	}
	return rec.Name == "" && rec.Action == string(engine.ActPress) && rec.Value != "" &&
		strings.Contains(text, "press "+strings.ToLower(oneLine(rec.Value)))
}

// usedStep reports whether rec's action followed the reference
// trajectory: it is one of its steps (the same verb on the same element;
// a step without an element matches by verb alone).
func usedStep(steps []trajectory.Step, rec record) bool {
	for _, st := range steps {
		if st.Action == rec.Action && strings.EqualFold(st.Role, rec.Role) && oneLine(st.Name) == oneLine(rec.Name) {
			return true
		}
	}
	return false
}

// tally counts one step that showed a memory: used when its action used
// it, helped when it was used and the step counts as help. It reports used.
func tally(c *engine.Counts, used, helps bool) bool {
	c.Shown++
	if used {
		c.Used++
		if helps {
			c.Helped++
		}
	}
	return used
}

// credit ends attribution: the lessons, selectors, facts and reference
// trajectory shown get their counts (shown; used: the next action followed
// it; helped: used by an action that helped, in a successful run) in one
// request per kind. A lesson is credited helped only when the action
// followed it, no longer for being shown before an action that worked.
// Every step that showed memory gets its attribution event {step,
// lessons, lessons_used, trajectory, ok, helped, selectors_shown,
// selectors_used, trajectory_used, facts_shown, facts_used[, why]}.
func (r *runner) credit(ctx context.Context) error {
	r.attribute()
	lessons := map[string]*lesson.Attribution{}
	var lessonOrder []string
	sels := map[string]*selector.Attribution{}
	var order []string
	facts := map[memctx.ShownFact]*fact.Attribution{}
	var factOrder []memctx.ShownFact
	trajs := map[string]*api.TrajectoryUse{}
	var trajOrder []string
	for _, a := range r.attributions {
		if a.why == "" && !r.res.Success {
			a.why = "the run did not succeed"
		}
		helped, lessonsUsed := []string{}, []string{}
		for i, id := range a.lessons {
			t := lessons[id]
			if t == nil {
				t = &lesson.Attribution{ID: id}
				lessons[id] = t
				lessonOrder = append(lessonOrder, id)
			}
			if tally(&t.Counts, a.lessonUsed[i], a.why == "") {
				lessonsUsed = append(lessonsUsed, id)
				if a.why == "" {
					helped = append(helped, id)
					r.res.Helped++
				}
			}
		}
		used := 0
		for i, s := range a.selectors {
			k := a.host + "\x00" + s.Path + "\x00" + s.Role + "\x00" + s.Name + "\x00" + s.Selector
			t := sels[k]
			if t == nil {
				t = &selector.Attribution{Domain: a.host, Path: s.Path, Role: s.Role, Name: s.Name, Selector: s.Selector}
				sels[k] = t
				order = append(order, k)
			}
			if tally(&t.Counts, a.selUsed[i], a.why == "") {
				used++
			}
		}
		factsUsed := 0
		for i, f := range a.facts {
			t := facts[f]
			if t == nil {
				t = &fact.Attribution{Domain: f.Domain, Type: f.Type, Key: f.Key, Value: f.Value}
				facts[f] = t
				factOrder = append(factOrder, f)
			}
			if tally(&t.Counts, a.factUsed[i], a.why == "") {
				factsUsed++
			}
		}
		if a.trajectory != "" && a.host != "" {
			t := trajs[a.trajectory]
			if t == nil {
				t = &api.TrajectoryUse{Domain: a.host, ID: a.trajectory}
				trajs[a.trajectory] = t
				trajOrder = append(trajOrder, a.trajectory)
			}
			tally(&t.Counts, a.trajUsed, a.why == "")
		}
		fields := map[string]any{"step": a.step, "lessons": a.lessons, "lessons_used": lessonsUsed, "trajectory": a.trajectory, "ok": a.ok, "helped": helped,
			"selectors_shown": len(a.selectors), "selectors_used": used, "trajectory_used": a.trajUsed,
			"facts_shown": len(a.facts), "facts_used": factsUsed}
		if a.why != "" {
			fields["why"] = a.why
		}
		r.emit("attribution", fields)
	}
	r.attributions = nil
	if len(lessonOrder) > 0 {
		in := api.LessonAttribution{}
		for _, id := range lessonOrder {
			in.Lessons = append(in.Lessons, *lessons[id])
		}
		if _, err := r.mem.AttributeLessons(ctx, in); err != nil {
			return err
		}
	}
	if len(order) > 0 {
		in := api.SelectorAttribution{}
		for _, k := range order {
			if s := sels[k]; s.Domain != "" {
				in.Selectors = append(in.Selectors, *s)
			}
		}
		r.red.Value(&in)
		if len(in.Selectors) > 0 {
			if _, err := r.mem.AttributeSelectors(ctx, in); err != nil {
				return err
			}
		}
	}
	if len(factOrder) > 0 {
		in := api.FactAttribution{}
		for _, f := range factOrder {
			in.Facts = append(in.Facts, *facts[f])
		}
		r.red.Value(&in)
		if _, err := r.mem.AttributeFacts(ctx, in); err != nil {
			return err
		}
	}
	if len(trajOrder) > 0 {
		in := api.TrajectoryAttribution{}
		for _, id := range trajOrder {
			in.Trajectories = append(in.Trajectories, *trajs[id])
		}
		if _, err := r.mem.AttributeTrajectories(ctx, in); err != nil {
			return err
		}
	}
	return nil
}

// warn records a problem after the run that does not change its outcome.
func (r *runner) warn(what string, err error) {
	r.res.Warnings = append(r.res.Warnings, what+": "+err.Error())
	r.emit("post_run_error", map[string]any{"error": what + ": " + err.Error()})
}

// wrapUp is the run's last visit to memory: post-run learning, then the
// registry's completion and the session. A learning failure is a warning
// and never keeps the run from being completed; a completion that fails
// is tried once more. Should that fail too, the process exits with the
// run stored as running, and readers show it as crashed because its owner
// is gone.
func (r *runner) wrapUp(ctx context.Context) {
	if !r.cfg.NoMemory {
		if err := r.learn(ctx); err != nil {
			r.warn("post-run learning", err)
		}
	}
	if err := r.completeRun(ctx); err != nil {
		if err := r.completeRun(ctx); err != nil {
			r.warn("recording the run's end in the registry", err)
		}
	}
}

// learn is post-run learning: lessons from the action log (every run); on
// success the trajectory, the selectors that worked and the facts
// observed.
func (r *runner) learn(ctx context.Context) error {
	host, _ := domain.Host(r.cfg.StartURL)
	if err := r.credit(ctx); err != nil {
		return err
	}
	if err := r.sendStale(ctx); err != nil {
		return err
	}
	log, err := r.actionLog()
	if err != nil {
		return err
	}
	learned, err := r.mem.Learn(ctx, host, log)
	if err != nil {
		return err
	}
	if err := r.sendLessonPages(ctx, learned); err != nil {
		return err
	}
	for _, l := range learned {
		if l.Created {
			r.res.LessonsLearned++
		} else {
			r.res.LessonsUsed++
		}
	}
	if r.res.Success {
		return r.recordSuccess(ctx)
	}
	return nil
}

// sendLessonPages tells memory, in one request, the page each site-bound
// lesson was learned (again) on — the page of its failing step — and the
// shown lessons whose action then failed on the page (see
// lesson.MarkPages).
func (r *runner) sendLessonPages(ctx context.Context, learned []lesson.Learned) error {
	in := lesson.PageMarks{Failed: r.lessonFails}
	for _, l := range learned {
		if l.Lesson.Domain == "" {
			continue
		}
		for _, a := range r.actions {
			if a.Step == l.Step && !a.OK && a.checked.Page != "" {
				in.Checked = append(in.Checked, lesson.PageCheck{ID: l.Lesson.ID, Path: r.red.String(a.checked.Path), Page: a.checked.Page})
				break
			}
		}
	}
	r.lessonFails = nil
	if len(in.Checked) == 0 && len(in.Failed) == 0 {
		return nil
	}
	if _, err := r.mem.MarkLessonPages(ctx, in); err != nil {
		// A page memory cannot take (a path too long): the lessons stay as
		// they were; the run's learning goes on.
		if ctx.Err() != nil {
			return err
		}
		r.warn("recording the lessons' pages", err)
	}
	return nil
}

// completeRun completes the run in the registry (its manifest mirrored to
// manifest.json) and records its session. A session that cannot be
// recorded is a warning: the run is completed.
func (r *runner) completeRun(ctx context.Context) error {
	summary := fmt.Sprintf("%d steps, %d errors, %d LLM calls, %d tokens", r.res.Steps, r.res.Errors, r.res.LLMCalls, r.res.Usage.Total())
	if r.res.Replayed > 0 {
		summary += fmt.Sprintf(", %d steps replayed", r.res.Replayed)
	}
	reason := r.res.Reason
	if r.res.Success {
		reason = ""
	}
	done, err := r.mem.CompleteRun(ctx, r.res.RunID, api.RunCompletion{
		Success: &r.res.Success, FinalURL: r.red.String(r.res.FinalURL), Summary: summary, Result: r.red.String(r.res.Answer),
		Reason: r.red.String(reason), TurnCount: r.res.Steps, ArtifactPaths: r.art.paths(), NoSession: true,
		Replay: r.replayed,
	})
	if err != nil {
		return err
	}
	m := &done.Run
	r.art.writeManifest(m, r.red)
	if !r.cfg.NoMemory {
		sess := m.Session()
		if r.res.Answer != "" {
			sess.Outcome = r.res.Answer
		}
		for _, p := range []*string{&sess.Goal, &sess.Outcome, &sess.FinalURL} {
			*p = r.red.String(*p)
		}
		if _, err := r.mem.RecordSession(ctx, sess); err != nil {
			r.warn("recording the session", err)
		}
	}
	return nil
}

// actionLog is the action log as lesson learning reads it: the records of
// actions.jsonl (the engine's own action records), every one of them, so
// that the run's learning and engine learn on its actions.jsonl read the
// same log (learned once: lesson.LogDigest).
func (r *runner) actionLog() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, a := range r.logged {
		if err := enc.Encode(a); err != nil { // the engine's action record, which learning reads
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// recordSuccess records what a successful run teaches: its trajectory,
// the selectors that found its elements, and the facts it observed.
func (r *runner) recordSuccess(ctx context.Context) error {
	host, err := domain.Host(r.cfg.StartURL)
	if err != nil {
		return nil
	}
	var steps []trajectory.Step
	for i, a := range r.actions {
		if !a.OK {
			if i+1 < len(r.actions) && r.actions[i+1].OK && run.WebURL(a.URL) && a.Origin == lesson.OriginBrowser {
				// A failure on the page's side that the next action
				// recovered from: a quirk of the site (a page without a
				// site has none; an argument the engine refused is the
				// model's mistake, not the site's).
				pat := lesson.ErrorPattern(a.Error)
				if pat != "" {
					// Told apart by what got in the way ("div#cookie-banner"),
					// so two different blockers do not contradict each other.
					if _, rest, ok := strings.Cut(a.Error, ": "); ok && len(strings.Fields(rest)) > 0 {
						pat += ": " + strings.Fields(rest)[0]
					}
					next := r.actions[i+1]
					obs := api.ObserveFact{Domain: a.URL, Type: fact.Quirk, Key: pat,
						Value: fmt.Sprintf("%s fails here (%s); %s worked", a.Action, clip(oneLine(a.Error), 80), describe(engineKind(next.Action), next.Name, shownValue(next)))}
					r.red.Value(&obs)
					obs.Path, obs.Page = r.red.String(a.checked.Path), a.checked.Page // the page it failed on
					if _, err := r.mem.ObserveFact(ctx, obs); err != nil {
						return err
					}
				}
			}
			continue
		}
		st := trajectory.Step{Action: a.Action, Role: a.Role, Name: a.Name, Value: a.Value, URL: a.URL, Verified: true,
			Path: a.checked.Path, Page: a.checked.Page, Fingerprint: a.checked.Fingerprint}
		if a.secret || r.red.String(a.Value) != a.Value {
			// Typed into a secret field, or holding what is never stored
			// (a secret shape, a contact): a step to fill in by hand, which
			// replay does not run.
			st.Secret, st.Value = true, trajectory.SecretPlaceholder
		}
		if a.Role != "" && a.Name != "" {
			st.Selector = SelectorOf(a.Role, a.Name)
			// Memory is per site: an element on about:blank or a data: page
			// belongs to none.
			if run.WebURL(a.URL) {
				obs := api.SelectorObservation{Domain: a.URL, Path: a.URL, Role: a.Role, Name: a.Name, Selector: st.Selector}
				r.red.Value(&obs)
				obs.Fingerprint, obs.Page = a.checked.Fingerprint, a.checked.Page // hashes, not page text
				if _, err := r.mem.RecordSelector(ctx, obs); err != nil {
					return err
				}
			}
		}
		steps = append(steps, st)
	}
	if len(steps) == 0 {
		return nil // nothing worked that a later run could follow
	}
	steps = append(steps, trajectory.Step{Action: ToolFinish, Value: r.res.Answer, URL: r.res.FinalURL, Verified: true})
	tr := trajectory.Trajectory{Domain: host, Goal: r.cfg.Goal, Steps: steps, RunID: r.res.RunID,
		DurationMs: r.cfg.Now().Sub(r.started).Milliseconds()}
	fps := make([][2]string, len(steps))
	for i, st := range steps {
		fps[i] = [2]string{st.Page, st.Fingerprint}
	}
	r.red.Value(&tr)
	tr.Domain, tr.RunID = host, r.res.RunID // identifiers
	// The fingerprints are hashes, not page text: kept as computed.
	for i, fp := range fps {
		tr.Steps[i].Page, tr.Steps[i].Fingerprint = fp[0], fp[1]
	}
	steps = tr.Steps
	t, err := r.mem.RecordTrajectory(ctx, tr)
	if err != nil {
		return err
	}
	r.res.TrajectoryID = t.ID
	// The way to the goal, as a pattern fact of the site.
	var flow []string
	for _, st := range steps {
		if st.Action != ToolFinish {
			flow = append(flow, describe(engineKind(st.Action), st.Name, st.Value))
		}
	}
	if len(flow) > 0 {
		// The site the run ended on, or the one it started on when it ended
		// on a page without a host (about:blank, data:).
		on := r.res.FinalURL
		if !run.WebURL(on) {
			on = host
		}
		obs := api.ObserveFact{Domain: on, Type: fact.Pattern, Key: "flow: " + t.Template, Value: clip(strings.Join(flow, " → "), 300)}
		r.red.Value(&obs)
		if _, err := r.mem.ObserveFact(ctx, obs); err != nil {
			return err
		}
	}
	return nil
}

// shownValue is rec's value as memory may be told it.
func shownValue(rec record) string {
	if rec.secret && rec.Value != "" {
		return Redacted
	}
	return rec.Value
}

// samePage reports whether two URLs name the same page, whatever their
// host and port (a site served on another port is the same site).
func samePage(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	pa, pb := ua.EscapedPath(), ub.EscapedPath()
	if pa == "" {
		pa = "/"
	}
	if pb == "" {
		pb = "/"
	}
	return pa == pb && ua.Query().Encode() == ub.Query().Encode()
}
