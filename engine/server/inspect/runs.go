package inspect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/runfiles"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// runsPerPage is how many runs a page of the Runs page lists.
const runsPerPage = 50

// runRow is one run in the list: its manifest and what its files say.
type runRow struct {
	M        run.Manifest
	Sum      runfiles.Summary
	Duration time.Duration
	Kind     string // cold, warm or replay (see chartOf)
}

// runsView is the Runs page.
type runsView struct {
	Domain, Status string
	Statuses       []run.Status
	Runs           []runRow
	Charts         []chart
	Next           string
	Local          bool // run folders are readable here
}

func (in *Inspector) runsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := runsView{Domain: strings.TrimSpace(q.Get("domain")), Status: q.Get("status"),
		Statuses: []run.Status{run.Running, run.Completed, run.Failed, run.Crashed}, Local: in.opts.RunsDir != ""}
	f := run.Filter{Domain: v.Domain}
	if v.Status != "" {
		st, err := run.ParseStatus(v.Status)
		if err != nil {
			in.fail(w, r, err)
			return
		}
		f.Status = st
	}
	p, err := in.c.Runs(r.Context(), f, listing.Request{Limit: runsPerPage, Cursor: q.Get("cursor")})
	if err != nil {
		in.fail(w, r, err)
		return
	}
	for _, m := range p.Runs {
		row := runRow{M: m, Duration: runfiles.Duration(&m)}
		if dir, err := in.runDir(r.Context(), m.RunID); err == nil {
			if row.Sum, err = in.sums.Get(dir); err != nil {
				in.opts.Logger.Warn("inspector: run summary", "run", m.RunID, "err", err)
			}
		}
		v.Runs = append(v.Runs, row)
	}
	v.Charts = chartsOf(v.Runs)
	if p.Next != "" {
		keep := url.Values{"cursor": {p.Next}}
		if v.Domain != "" {
			keep.Set("domain", v.Domain)
		}
		if v.Status != "" {
			keep.Set("status", v.Status)
		}
		v.Next = "/runs?" + keep.Encode()
	}
	in.render(w, r, http.StatusOK, "runs", view{Title: "Runs", Active: "runs", Data: v})
}

// runDir is run id's folder, or an error when run files are not readable
// here.
func (in *Inspector) runDir(ctx context.Context, id string) (string, error) {
	dir := in.opts.RunsDir
	if in.opts.RunsDirOf != nil {
		dir = in.opts.RunsDirOf(ctx)
	}
	if dir == "" {
		return "", errors.New("the run's folder is on the memory server's machine")
	}
	return runfiles.Dir(dir, id)
}

// runView is a run's page.
type runView struct {
	M        *run.Manifest
	Duration time.Duration
	Sum      runfiles.Summary
	// Lineage: the runs this one continues (nearest first) and the runs
	// that continue it.
	Ancestors []run.Manifest
	Children  []run.Manifest
	Steps     []stepView
	More      bool   // the timeline was cut at maxSteps
	NoFiles   string // why there is no timeline
	Final     string // the final screenshot's file name, when there is one
	Plan      *api.PlanHistory
}

// stepView is one step of the timeline: the model call(s) made for it and
// the actions it ran.
type stepView struct {
	N       int
	Calls   []callView
	Actions []actionView
}

type callView struct {
	runfiles.Call
	// SameSystemAs is the step whose call had the same system prompt
	// (0: this one is shown).
	SameSystemAs int
}

type actionView struct {
	runfiles.Record
	Lessons    []shownLesson
	Trajectory *trajectory.Trajectory // the reference trajectory, when memory still holds it
	Shot       string                 // the screenshot's file name, when the file is in the folder
}

type shownLesson struct {
	ID     string
	Lesson *lesson.Lesson // nil: no longer in memory
}

// maxSteps bounds the timeline (a run's step limit is far below it).
const maxSteps = 5000

// maxAncestors bounds the ancestors followed, maxChildScan the runs searched for
// children.
const (
	maxAncestors = 20
	maxChildScan = 1000
)

func (in *Inspector) runPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	m, err := in.c.Run(ctx, id)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	v := runView{M: m, Duration: runfiles.Duration(m)}
	// Lineage.
	seen := map[string]bool{m.RunID: true}
	for p := m.ParentRunID; p != "" && !seen[p] && len(v.Ancestors) < maxAncestors; {
		seen[p] = true
		pm, err := in.c.Run(ctx, p)
		if err != nil {
			v.Ancestors = append(v.Ancestors, run.Manifest{RunID: p})
			break
		}
		v.Ancestors = append(v.Ancestors, *pm)
		p = pm.ParentRunID
	}
	if _, err := in.c.EachRun(ctx, run.Filter{}, "", maxChildScan, func(c run.Manifest) error {
		if c.ParentRunID == m.RunID {
			v.Children = append(v.Children, c)
		}
		return nil
	}); err != nil {
		in.fail(w, r, err)
		return
	}
	// Planner history.
	if p, err := in.c.Plan(ctx, id, 0); err == nil {
		v.Plan = p
	} else if !errors.Is(err, engine.ErrNotFound) {
		in.fail(w, r, err)
		return
	}
	// The timeline, from the run's folder.
	if err := in.timeline(r, &v); err != nil {
		v.NoFiles = err.Error()
	}
	in.render(w, r, http.StatusOK, "run", view{Title: "Run " + m.RunID, Active: "runs", Data: v})
}

// timeline fills v's steps from the run's action log and model calls.
func (in *Inspector) timeline(r *http.Request, v *runView) error {
	dir, err := in.runDir(r.Context(), v.M.RunID)
	if err != nil {
		return err
	}
	if f, _, err := runfiles.OpenFile(dir, runfiles.FinalShot); err == nil {
		f.Close()
		v.Final = runfiles.FinalShot
	}
	steps, more, err := runfiles.Records(dir, maxSteps)
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("the run left no action log (it was registered, not run by engine run)")
	}
	if err != nil && len(steps) == 0 {
		return err
	}
	v.More = more
	calls, _, cerr := runfiles.Calls(dir, maxSteps)
	if cerr != nil && !errors.Is(cerr, os.ErrNotExist) {
		in.opts.Logger.Warn("inspector: llm.jsonl", "run", v.M.RunID, "err", cerr)
	}
	v.Sum = runfiles.SummaryOf(steps, calls)
	mem := memoryCache{in: in, r: r, host: v.M.Domain, lessons: map[string]*lesson.Lesson{}, trajs: map[string]*trajectory.Trajectory{}}
	byN := map[int]*stepView{}
	var order []int
	at := func(n int) *stepView {
		if s, ok := byN[n]; ok {
			return s
		}
		byN[n] = &stepView{N: n}
		order = append(order, n)
		return byN[n]
	}
	lastSystem, lastSystemStep := "", 0
	for _, c := range calls {
		cv := callView{Call: c}
		if c.Request.System != "" && c.Request.System == lastSystem {
			cv.SameSystemAs = lastSystemStep
		} else {
			lastSystem, lastSystemStep = c.Request.System, c.Step
		}
		s := at(c.Step)
		s.Calls = append(s.Calls, cv)
	}
	for _, st := range steps {
		av := actionView{Record: st}
		for _, id := range st.Lessons {
			av.Lessons = append(av.Lessons, shownLesson{ID: id, Lesson: mem.lesson(id)})
		}
		if st.Trajectory != "" {
			av.Trajectory = mem.trajectory(st.Trajectory)
		}
		if name := st.ScreenshotName(); name != "" {
			if f, _, err := runfiles.OpenFile(dir, name); err == nil {
				f.Close()
				av.Shot = name
			}
		}
		s := at(st.Step)
		s.Actions = append(s.Actions, av)
	}
	slices.Sort(order)
	v.Steps = make([]stepView, 0, len(order))
	for _, n := range order {
		v.Steps = append(v.Steps, *byN[n])
	}
	return nil
}

// memoryCache looks up the lessons and trajectories a run was shown, once
// each per page.
type memoryCache struct {
	in      *Inspector
	r       *http.Request
	host    string
	lessons map[string]*lesson.Lesson
	trajs   map[string]*trajectory.Trajectory
}

func (c *memoryCache) lesson(id string) *lesson.Lesson {
	if l, ok := c.lessons[id]; ok {
		return l
	}
	l, err := c.in.c.Lesson(c.r.Context(), id)
	if err != nil {
		l = nil
	}
	c.lessons[id] = l
	return l
}

func (c *memoryCache) trajectory(id string) *trajectory.Trajectory {
	if t, ok := c.trajs[id]; ok {
		return t
	}
	var t *trajectory.Trajectory
	if c.host != "" {
		if got, err := c.in.c.Trajectory(c.r.Context(), c.host, id); err == nil {
			t = got
		}
	}
	c.trajs[id] = t
	return t
}

// runFile serves one file of a run's folder: only a regular file directly
// inside the folder found from the run id, by its name.
func (in *Inspector) runFile(w http.ResponseWriter, r *http.Request) {
	dir, err := in.runDir(r.Context(), r.PathValue("id"))
	if err != nil {
		in.fail(w, r, engine.NotFound(err.Error()))
		return
	}
	name := r.PathValue("name")
	ctype := ""
	switch strings.ToLower(filepath.Ext(name)) {
	case ".png":
		ctype = "image/png"
	case ".jsonl", ".json":
		ctype = "text/plain; charset=utf-8"
	default:
		in.fail(w, r, engine.NotFound(fmt.Sprintf("no file %q in the run's folder (only .png, .json and .jsonl are served)", name)))
		return
	}
	f, fi, err := runfiles.OpenFile(dir, name)
	if err != nil {
		in.fail(w, r, engine.NotFound(fmt.Sprintf("no file %q in the run's folder", name)))
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", ctype)
	http.ServeContent(w, r, "", fi.ModTime(), f)
}
