package lesson

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/keyspace"
)

// The learning gates, over the action-log shapes a run can leave: a lesson
// comes only from a browser-side failure followed by a different browser
// action that worked.
func TestLearnGates(t *testing.T) {
	const (
		cookie  = `{"step":1,"action":"click","ref":"e5","ok":false,"error":"another element would receive the click: div#cookie","url":"https://shop.example/","origin":"browser"}`
		accept  = `{"step":2,"action":"click","ref":"e9","ok":true,"url":"https://shop.example/"}`
		escape  = `{"step":2,"action":"press","value":"Escape","ok":true,"url":"https://shop.example/"}`
		back    = `{"step":2,"action":"back","ok":true,"url":"https://shop.example/"}`
		notIn   = `{"step":1,"action":"fill","ref":"e3","value":"x","ok":false,"error":"element is not an input","url":"https://shop.example/","origin":"browser"}`
		badRef  = `{"step":1,"action":"click","ref":"Europe…","ok":false,"error":"\"Europe…\" is not a snapshot ref (refs look like e37)","url":"https://shop.example/","origin":"engine"}`
		oldRef  = `{"step":1,"action":"click","ref":"Europe…","ok":false,"error":"\"Europe…\" is not a snapshot ref (refs look like e37)","url":"https://shop.example/"}`
		oldNoEl = `{"step":1,"action":"click","ok":false,"error":"no element named \"Buy now\" on this page (use a ref or a name from the list)","url":"https://shop.example/"}`
		oldRec  = `{"step":1,"action":"fill","ref":"e3","value":"x","ok":false,"error":"element is not an input","url":"https://shop.example/"}`
		tool    = `{"step":2,"action":"invalid_tool_call","ok":false,"tool_error":"unknown tool \"teleport\": call one of click, fill","url":"https://shop.example/"}`
		toolOK  = `{"step":1,"action":"invalid_tool_call","ok":false,"tool_error":"malformed arguments for fill","url":"https://shop.example/"}`
		finish  = `{"step":2,"action":"finish","value":"done","ok":true,"url":"https://shop.example/"}`
		typeBad = `{"step":2,"action":"type","ref":"e3","value":"x","ok":false,"error":"element is detached from the page","url":"https://shop.example/","origin":"browser"}`
		typeOK  = `{"step":3,"action":"type","ref":"e3","value":"x","ok":true,"url":"https://shop.example/"}`
		design  = `{"step":1,"command":"playwright-cli fill e37 padel rackets","execution_result":"error","stderr":"Error: too many arguments: expected 2, received 3"}`
		designR = `{"step":2,"command":"playwright-cli type padel rackets","execution_result":"ok"}`
		retry   = `{"step":2,"action":"fill","ref":"e4","value":"x","ok":true,"url":"https://shop.example/"}`
	)
	for _, c := range []struct {
		name string
		log  []string
		want []string // the learned lessons' texts (a use of a seed: its text)
	}{
		{"browser failure, then the same verb on another element", []string{cookie, accept}, nil},
		{"browser failure, then press Escape: a use of the Escape seed", []string{cookie, escape},
			[]string{"If an overlay or popup is blocking an element, press Escape to dismiss it before interacting with elements behind it."}},
		{"browser failure, then back that worked", []string{notIn, back},
			[]string{`If fill fails with "element is not an input", try back instead.`}},
		{"the engine's argument check (origin engine), then back", []string{badRef, back}, nil},
		{"an old log's unknown ref (no origin), then back", []string{oldRef, back}, nil},
		{"an old log's unknown element name, then a click", []string{oldNoEl, accept}, nil},
		{"an old log's browser failure (no origin) is still learned", []string{oldRec, escape},
			[]string{`If fill fails with "element is not an input", try press Escape instead.`}},
		{"browser failure, then an invalid tool call, then success", []string{cookie, tool, accept}, nil},
		{"an invalid tool call, then success", []string{toolOK, accept}, nil},
		{"browser failure, then the model's answer", []string{notIn, finish}, nil},
		{"browser failure, then a recovery that failed", []string{notIn, typeBad}, nil},
		{"the failed recovery's own recovery (same verb) teaches nothing", []string{notIn, typeBad, typeOK}, nil},
		{"browser failure, then a retry of the same verb", []string{notIn, retry}, nil},
		{"the design's shape: a use of the fill seed", []string{design, designR},
			[]string{"If fill fails, click(ref) to focus the input, then type(text) to enter text."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			actions, err := ParseActionLog(strings.NewReader(strings.Join(c.log, "\n")+"\n"), "actions.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			learned, err := e.s.Learn(context.Background(), actions, "")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range learned {
				got = append(got, l.Lesson.Lesson)
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("learned %q, want %q", got, c.want)
			}
		})
	}
}

// Where a record's origin comes from: the record's own field, else the
// shape and message; a value that is neither is bad input.
func TestActionOrigin(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"action":"click","ok":false,"error":"whatever","origin":"engine"}`, OriginEngine},
		{`{"action":"click","ok":false,"error":"\"x\" is not a snapshot ref (refs look like e37)","origin":"browser"}`, OriginBrowser},
		{`{"action":"click","ok":false,"error":"\"x\" is not a snapshot ref (refs look like e37)"}`, OriginEngine},
		{`{"action":"click","ok":false,"error":"no element has ref e99 (take a snapshot and use one of its refs)"}`, OriginEngine},
		{`{"action":"navigate","ok":false,"tool_error":"navigation to http://10.0.0.1/ blocked: private address"}`, OriginEngine},
		{`{"action":"click","ok":false,"error":"element is not visible"}`, OriginBrowser},
		{`{"command":"playwright-cli click e5","execution_result":"error","stderr":"no element has ref e5"}`, OriginBrowser},
		{`{"command":"finish done","execution_result":"ok"}`, OriginEngine},
	} {
		a, err := ParseActionLog(strings.NewReader(c.line), "log")
		if err != nil || len(a) != 1 || a[0].Origin != c.want {
			t.Errorf("%s: %+v %v, want origin %s", c.line, a, err, c.want)
		}
	}
	_, err := ParseActionLog(strings.NewReader(`{"action":"click","ok":false,"error":"x y","origin":"page"}`), "log")
	if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), `log:1: origin "page" is neither browser nor engine`) {
		t.Fatalf("bad origin: %v", err)
	}
}

// A learned pattern keeps a placeholder where a value was, and is recalled
// when the failure comes again with other values.
func TestLearnedPatternPlaceholders(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	actions, err := ParseActionLog(strings.NewReader(
		`{"action":"click","ref":"e5","ok":false,"error":"timeout after 5000ms waiting for \"Search\"","url":"https://a.example/","origin":"browser"}`+"\n"+
			`{"action":"press","value":"Enter","ok":true,"url":"https://a.example/"}`+"\n"), "log")
	if err != nil {
		t.Fatal(err)
	}
	learned, err := e.s.Learn(ctx, actions, "")
	if err != nil || len(learned) != 1 {
		t.Fatalf("learn: %+v %v", learned, err)
	}
	if l := learned[0].Lesson; l.ErrorPattern != "timeout after <n> waiting for <text>" ||
		l.Lesson != `If click fails with "timeout after <n> waiting for <text>", try press Enter instead.` {
		t.Fatalf("learned %+v", l)
	}
	got, err := e.s.RecallError(ctx, "click e12", `Timeout after 300ms waiting for "Go"`, "www.a.example")
	if err != nil || len(got) == 0 || got[0].ID != learned[0].Lesson.ID {
		t.Fatalf("recall with other values: %+v %v", got, err)
	}
	// Learning the same failure with other values is a use of the same
	// lesson, not a second lesson.
	actions[0].Error = `timeout after 10ms waiting for "Buy"`
	again, err := e.s.Learn(ctx, actions, "")
	if err != nil || len(again) != 1 || again[0].Created || again[0].Lesson.UseCount != 2 {
		t.Fatalf("second learn: %+v %v", again, err)
	}
}

// The same log learned twice counts once, however it is spaced; another
// log of the same pattern counts again; forgetting the site forgets that
// the log was learned.
func TestLearnIsIdempotent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	log := `{"step":1,"action":"fill","ref":"e3","value":"x","ok":false,"error":"element is not an input","url":"https://shop.example/","origin":"browser"}` + "\n" +
		`{"step":2,"action":"click","ref":"e3","ok":true,"url":"https://shop.example/"}` + "\n"
	learn := func(log string) []Learned {
		t.Helper()
		actions, err := ParseActionLog(strings.NewReader(log), "log")
		if err != nil {
			t.Fatal(err)
		}
		out, err := e.s.Learn(ctx, actions, "")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := learn(log)
	if len(first) != 1 || !first[0].Created {
		t.Fatalf("first learn: %+v", first)
	}
	respaced := strings.ReplaceAll(strings.ReplaceAll(log, `,"ok"`, `, "ok"`), `"step":2,`, "\"step\": 2 ,")
	for _, again := range []string{log, respaced} {
		if got := learn(again); len(got) != 0 {
			t.Fatalf("the same log learned again: %+v", got)
		}
	}
	if n := len(e.eventsNamed(event.LessonLogSkipped)); n != 2 {
		t.Fatalf("%d %s events, want 2", n, event.LessonLogSkipped)
	}
	l, err := e.s.Get(ctx, first[0].Lesson.ID)
	if err != nil || l.UseCount != 1 {
		t.Fatalf("after the same log three times: %+v %v", l, err)
	}
	// Another run (another step) that saw the same thing is another use.
	other := strings.ReplaceAll(log, `"step":2`, `"step":7`)
	if got := learn(other); len(got) != 1 || got[0].Created || got[0].Lesson.UseCount != 2 {
		t.Fatalf("another log: %+v", got)
	}
	// Forgetting the site forgets the lesson and the log: it teaches again.
	if _, err := e.s.ForgetSite(ctx, "shop.example"); err != nil {
		t.Fatal(err)
	}
	if err := e.db.DropPrefix(ctx, keyspace.SitePrefix("shop.example")); err != nil {
		t.Fatal(err)
	}
	if got := learn(log); len(got) != 1 || !got[0].Created {
		t.Fatalf("after forget: %+v", got)
	}
}
