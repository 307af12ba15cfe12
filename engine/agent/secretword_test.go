package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// naiveFor is naive on a shop where the search is q and the first result
// is named first: what it reads is mapped back to the padel search and
// what it types and clicks forward to q and first.
func naiveFor(q, first string) policy {
	return func(system, msg string) (string, map[string]any) {
		msg = strings.ReplaceAll(strings.ReplaceAll(msg, q, "padel rackets"), first, "Padel Racket Pro 3000")
		name, args := naive(system, msg)
		for _, k := range []string{"text", "element", "answer"} {
			if s, ok := args[k].(string); ok {
				args[k] = strings.ReplaceAll(strings.ReplaceAll(s, "padel rackets", q), "Padel Racket Pro 3000", first)
			}
		}
		return name, args
	}
}

// A search that mentions passwords, and a result named after them, are
// ordinary text: the run records them as typed and clicked, and a later
// run replays the trajectory without a model call, under --approve never.
func TestSearchMentioningPasswordIsReplayed(t *testing.T) {
	const q, first = "reset password help", "Reset your password"
	db := openDisk(t)
	run := func(replay bool) *Result {
		b := newShop()
		b.firstName = first
		cfg := config(t, db, b, &fakeModel{p: naiveFor(q, first)})
		cfg.Goal = "search for " + q + " and open the first result"
		cfg.Approve, cfg.Replay = ApproveNever, replay
		return mustRun(t, cfg)
	}
	if res := run(false); !res.Success {
		t.Fatalf("cold: %+v", res)
	}
	tr, err := trajectory.New(db, trajectory.Options{}).List(context.Background(), "shop.test")
	if err != nil || len(tr) != 1 {
		t.Fatalf("%+v %v", tr, err)
	}
	typed := false
	for _, st := range tr[0].Steps {
		if st.Secret {
			t.Errorf("step %+v is secret", st)
		}
		typed = typed || st.Action == "type" && st.Value == q
	}
	if !typed {
		t.Errorf("the search is not recorded as typed: %+v", tr[0].Steps)
	}
	if res := run(true); !res.Success || res.LLMCalls != 0 || res.Replayed != 7 {
		t.Fatalf("replay: %+v", res)
	}
}

// A value typed into a password field is stored as the placeholder and
// never replayed: the next run of the same goal asks the model.
func TestPasswordFieldIsNeverReplayed(t *testing.T) {
	db := openDisk(t)
	run := func(replay bool) *Result {
		cfg := Config{Goal: "log in to the site", StartURL: "http://login.test/", Browser: &loginSite{}, Model: &fakeModel{p: logIn("plain words")},
			Memory: memOf(t, db), Approve: ApproveNever, RunsDir: t.TempDir(), Replay: replay}
		res := mustRun(t, cfg)
		if !res.Success {
			t.Fatalf("%+v", res)
		}
		return res
	}
	run(false)
	tr, err := trajectory.New(db, trajectory.Options{}).List(context.Background(), "login.test")
	if err != nil || len(tr) != 1 {
		t.Fatalf("%+v %v", tr, err)
	}
	if st := tr[0].Steps[0]; !st.Secret || st.Value != trajectory.SecretPlaceholder {
		t.Fatalf("stored step %+v", st)
	}
	if res := run(true); res.Replayed != 0 || res.LLMCalls == 0 {
		t.Fatalf("replayed a secret step: %+v", res)
	}
}
