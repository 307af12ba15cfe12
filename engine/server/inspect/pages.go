package inspect

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/session"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// lessonsPerPage is how many lessons a page of the Lessons page lists.
const lessonsPerPage = 100

// lessonsView is the Lessons page.
type lessonsView struct {
	Domain, Category string
	Tier             int
	Categories       []lesson.Category
	Lessons          []lesson.Lesson
	Next             string // URL of the next page, "" on the last
	Back             string // this page's URL, where a delete returns
	Deleted          string // the lesson just deleted
	Approved         string // the quarantined lesson just approved
	Rejected         string // the quarantined lesson just rejected
	// Quarantined are the lessons held out of every prompt (their text
	// failed the screen), shown above the first page with their reasons.
	Quarantined []lesson.Lesson
}

func (in *Inspector) lessonsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := lessonsView{Domain: strings.TrimSpace(q.Get("domain")), Category: q.Get("category"),
		Categories: lesson.Categories, Deleted: q.Get("deleted"), Approved: q.Get("approved"), Rejected: q.Get("rejected")}
	f := api.LessonFilter{Domain: v.Domain, Limit: lessonsPerPage, Cursor: q.Get("cursor")}
	if v.Category != "" {
		f.Category = lesson.Category(v.Category)
	}
	if t := q.Get("tier"); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil {
			in.fail(w, r, engine.Invalidf("tier", "%q is not 1 or 2", t))
			return
		}
		v.Tier, f.Tier = n, n
	}
	p, err := in.c.Lessons(r.Context(), f)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	v.Lessons = p.Lessons
	if q.Get("cursor") == "" {
		if v.Quarantined, err = in.c.QuarantinedLessons(r.Context()); err != nil {
			in.fail(w, r, err)
			return
		}
	}
	keep := url.Values{}
	for _, k := range []string{"domain", "tier", "category", "cursor"} {
		if q.Get(k) != "" {
			keep.Set(k, q.Get(k))
		}
	}
	v.Back = "/lessons"
	if len(keep) > 0 {
		v.Back += "?" + keep.Encode()
	}
	if p.Next != "" {
		keep.Set("cursor", p.Next)
		v.Next = "/lessons?" + keep.Encode()
	}
	in.render(w, r, http.StatusOK, "lessons", view{Title: "Lessons", Active: "lessons", Data: v})
}

// deleteLesson removes a lesson through the API and returns to the page
// the form was on.
func (in *Inspector) deleteLesson(w http.ResponseWriter, r *http.Request) {
	in.lessonAction(w, r, "deleted", in.c.RemoveLesson)
}

// approveLesson releases a quarantined lesson (a person read it).
func (in *Inspector) approveLesson(w http.ResponseWriter, r *http.Request) {
	in.lessonAction(w, r, "approved", func(ctx context.Context, id string) error {
		_, err := in.c.ApproveLesson(ctx, id)
		return err
	})
}

// rejectLesson deletes a quarantined lesson.
func (in *Inspector) rejectLesson(w http.ResponseWriter, r *http.Request) {
	in.lessonAction(w, r, "rejected", in.c.RejectLesson)
}

// lessonAction runs a form's action on lesson {id} through the API, after
// the CSRF check, and returns to the page the form was on with the done
// notice (done=id).
func (in *Inspector) lessonAction(w http.ResponseWriter, r *http.Request, done string, do func(context.Context, string) error) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if !in.checkCSRF(r) {
		in.fail(w, r, forbidden("the form's CSRF token is missing or stale: reload the page and try again"))
		return
	}
	id := r.PathValue("id")
	if err := do(r.Context(), id); err != nil {
		in.fail(w, r, err)
		return
	}
	back := r.PostFormValue("back")
	if !strings.HasPrefix(back, "/lessons") {
		back = "/lessons"
	}
	u, err := url.Parse(back)
	if err != nil || u.Host != "" || u.Scheme != "" {
		u = &url.URL{Path: "/lessons"}
	}
	q := u.Query()
	q.Set(done, id)
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
}

// factsView is the Facts page.
type factsView struct {
	Domain        string
	Facts         []fact.Fact
	MinConfidence float64
}

func (in *Inspector) factsPage(w http.ResponseWriter, r *http.Request) {
	v := factsView{Domain: strings.TrimSpace(r.URL.Query().Get("domain"))}
	fs, err := in.c.Facts(r.Context(), v.Domain, false)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	v.Facts, v.MinConfidence = fs.Facts, fs.MinConfidence
	in.render(w, r, http.StatusOK, "facts", view{Title: "Facts", Active: "facts", Data: v})
}

// selectorsView is the Selectors page.
type selectorsView struct {
	Domain    string
	Selectors []selector.Selector
}

func (in *Inspector) selectorsPage(w http.ResponseWriter, r *http.Request) {
	v := selectorsView{Domain: strings.TrimSpace(r.URL.Query().Get("domain"))}
	ss, err := in.c.Selectors(r.Context(), api.SelectorFilter{Domain: v.Domain})
	if err != nil {
		in.fail(w, r, err)
		return
	}
	v.Selectors = ss.Selectors
	in.render(w, r, http.StatusOK, "selectors", view{Title: "Selectors", Active: "selectors", Data: v})
}

// trajectoriesView is the Trajectories page.
type trajectoriesView struct {
	Domain       string
	Trajectories []trajectory.Trajectory
}

func (in *Inspector) trajectoriesPage(w http.ResponseWriter, r *http.Request) {
	v := trajectoriesView{Domain: strings.TrimSpace(r.URL.Query().Get("domain"))}
	ts, err := in.c.Trajectories(r.Context(), v.Domain)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	v.Trajectories = ts.Trajectories
	in.render(w, r, http.StatusOK, "trajectories", view{Title: "Trajectories", Active: "trajectories", Data: v})
}

// sessionsView is the Sessions page.
type sessionsView struct {
	Domain   string
	Sessions []session.Session
}

func (in *Inspector) sessionsPage(w http.ResponseWriter, r *http.Request) {
	v := sessionsView{Domain: strings.TrimSpace(r.URL.Query().Get("domain"))}
	ss, err := in.c.Sessions(r.Context(), session.Filter{Domain: v.Domain})
	if err != nil {
		in.fail(w, r, err)
		return
	}
	v.Sessions = ss
	in.render(w, r, http.StatusOK, "sessions", view{Title: "Sessions", Active: "sessions", Data: v})
}
