package redact

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// lessonLike and trajectoryLike have the shape of lesson.Lesson and
// trajectory.Trajectory: what one memory write carries.
type lessonLike struct {
	ID, Lesson, Category, FailedCommand, ErrorPattern, Domain string
	UseCount                                                  int
	CreatedAt, LastUsed, Source                               string
	TriggeredDomains                                          []string
	Helped                                                    int
	Quarantine                                                string
}

type stepLike struct {
	Action, Role, Name, Selector, Value, URL string
	Verified, Secret                         bool
	InputType                                string
}

type trajectoryLike struct {
	ID, Domain, Goal, Template string
	Params                     []struct{ Name, Value string }
	Steps                      []stepLike
	RunID                      string
	DurationMs                 int64
	RecordedAt, ExpiresAt      time.Time
	Runs                       int
}

func benchLesson() lessonLike {
	return lessonLike{ID: "l-7f3a9c2e1b4d", Lesson: benign[7], Category: "error_recovery", FailedCommand: "click",
		ErrorPattern: "element is covered by <div class=\"autocomplete\">", Domain: "shop.example.com", UseCount: 3,
		CreatedAt: "2026-11-20", LastUsed: "2026-11-23", Source: "learned", TriggeredDomains: []string{"shop.example.com", "www.example.org"}}
}

func benchTrajectory() trajectoryLike {
	t := trajectoryLike{ID: "t-2c4e6a8b0d1f", Domain: "shop.example.com", Goal: "Buy blue shoes size 42",
		Template: "Buy {1} size {2}", Params: []struct{ Name, Value string }{{"1", "blue shoes"}, {"2", "42"}},
		RunID: "run-20261123-1a2b3c", DurationMs: 8123, RecordedAt: time.Now(), ExpiresAt: time.Now(), Runs: 2}
	for i := range 10 {
		t.Steps = append(t.Steps, stepLike{Action: "click", Role: "button", Name: fmt.Sprintf("Add to cart %d", i),
			Selector: fmt.Sprintf("#product-%d > button.add", i), Value: "blue shoes",
			URL: fmt.Sprintf("http://127.0.0.1:8080/item.html?id=%d&sort=price", i), Verified: true})
	}
	return t
}

func BenchmarkString(b *testing.B) {
	log := strings.Repeat(`{"role":"assistant","content":"I will click e37 (the Search button) on http://127.0.0.1:8080/search?q=shoes, then type 42 into the size field."}`+"\n", 4096/140+1)[:4096]
	for _, c := range []struct{ name, text string }{
		{"benign-lesson", benign[7]},
		{"email", "If the form asks for a contact, type bob.smith@example.com and press Enter."},
		{"secrets-lesson", "Log in with password=hunter2 and card " + visa + " then call +1 415 555 2671."},
		{"llm-log-4KiB", log},
	} {
		r := New(Options{})
		r.Add(password)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				r.String(c.text)
			}
		})
	}
}

func BenchmarkValue(b *testing.B) {
	r := New(Options{})
	r.Add(password)
	b.Run("lesson", func(b *testing.B) {
		b.ReportAllocs()
		l := benchLesson()
		for b.Loop() {
			c := l
			r.Value(&c)
		}
	})
	b.Run("trajectory-10-steps", func(b *testing.B) {
		b.ReportAllocs()
		t := benchTrajectory()
		for b.Loop() {
			c := t
			r.Value(&c)
		}
	})
}

// BenchmarkPasswordPhrasesHostile: many password words whose values are
// looked for in vain cost time linear in the text (ns/byte stays flat as
// the text grows).
func BenchmarkPasswordPhrasesHostile(b *testing.B) {
	for _, unit := range []string{"password:", "password for ", "password \"", "the password is "} {
		for _, n := range []int{1000, 10000} {
			s := strings.Repeat(unit, n)
			b.Run(fmt.Sprintf("%s×%d", strings.TrimSpace(unit), n), func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					passwordPhrases(s)
				}
			})
		}
	}
}
