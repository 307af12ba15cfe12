package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api/problem"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/kv"
)

// manifestFile reads the run's manifest.json.
func manifestFile(t *testing.T, dir string) run.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m run.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func answerWith(name string, args map[string]any) policy {
	return func(string, string) (string, map[string]any) { return name, args }
}

// Every way a run ends completes it in the registry with its reason and
// leaves its manifest and artifacts (with a final screenshot when the
// browser can still take one), and every failed step says what happened.
func TestEveryEndCompletesTheRun(t *testing.T) {
	ctx := context.Background()
	giveUpOnBlank := func(_, msg string) (string, map[string]any) {
		if strings.Contains(msg, "URL: about:blank") {
			return "finish", map[string]any{"answer": "the page is blank", "success": false}
		}
		return "back", map[string]any{}
	}
	var caseDB kv.Store // the running case's store, for setups that serve it their own way
	cases := []struct {
		name      string
		setup     func(c *Config, b *shop, m *fakeModel)
		status    run.Status
		reason    string // prefix
		finalURL  string
		final     bool // final.png expected
		stepError string
	}{
		{"back from the first page to about:blank", func(c *Config, b *shop, m *fakeModel) { m.p = giveUpOnBlank },
			run.Failed, "gave_up: the page is blank", "about:blank", true, "gave up: the page is blank"},
		{"finishing on about:blank", func(c *Config, b *shop, m *fakeModel) {
			m.p = func(s, msg string) (string, map[string]any) {
				if strings.Contains(msg, "URL: about:blank") {
					return "finish", map[string]any{"answer": "left", "success": true}
				}
				return "back", map[string]any{}
			}
		}, run.Completed, "", "about:blank", true, ""},
		// The navigation policy refuses file:// (a failed step each time), so
		// a model that insists ends on the guardrail, on the page it was on.
		{"a model that keeps navigating to file:///etc/passwd", func(c *Config, b *shop, m *fakeModel) {
			m.p = answerWith("navigate", map[string]any{"url": "file:///etc/passwd"})
		}, run.Failed, ReasonRepeatedAction, "http://shop.test/", true, ""},
		// The browser lands on its error page by itself (a connection that
		// failed): a page the run can be on and end on.
		{"chromium's error page", func(c *Config, b *shop, m *fakeModel) {
			c.MaxSteps = 2
			m.p = func(string, string) (string, map[string]any) {
				b.page = "url:chrome-error://chromewebdata/"
				return "wait", map[string]any{"millis": 1}
			}
		}, run.Failed, ReasonMaxSteps, "chrome-error://chromewebdata/", true, ""},
		{"giving up without an answer", func(c *Config, b *shop, m *fakeModel) {
			m.p = answerWith("finish", map[string]any{"answer": "", "success": false})
		}, run.Failed, "gave_up", "http://shop.test/", true, "gave up: (no answer given)"},
		{"an LLM error without a message", func(c *Config, b *shop, m *fakeModel) { m.err = errors.New("") },
			run.Failed, "llm_failed: *errors.errorString with no message", "http://shop.test/", true, ""},
		{"the browser dies mid-action", func(c *Config, b *shop, m *fakeModel) {
			m.p = func(s, msg string) (string, map[string]any) {
				b.dead = true // the plugin process is gone by the time the action runs
				return naive(s, msg)
			}
		}, run.Failed, ReasonBrowserFailed + ": plugin died", "http://shop.test/", false, "the browser failed: plugin died"},
		{"memory fails in a step", func(c *Config, b *shop, m *fakeModel) {
			var updates atomic.Int32
			c.Memory = memWrapped(t, caseDB, func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					// Step 1's progress update goes through, step 2's fails.
					if strings.HasSuffix(r.URL.Path, "/progress") && updates.Add(1) == 2 {
						problem.Write(w, problem.New(http.StatusInternalServerError, "disk on fire"))
						return
					}
					h.ServeHTTP(w, r)
				})
			})
		}, run.Failed, "memory: disk on fire", "http://shop.test/", true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := openDisk(t)
			caseDB = db
			b := newShop()
			m := &fakeModel{p: naive}
			cfg := config(t, db, b, m)
			var steps []StepInfo
			cfg.OnStep = func(si StepInfo) { steps = append(steps, si) }
			tc.setup(&cfg, b, m)
			res := mustRun(t, cfg)
			man, err := run.New(db, run.Options{}).Get(ctx, res.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if man.Status != tc.status || res.Status != tc.status || !strings.HasPrefix(res.Reason, tc.reason) ||
				(tc.status == run.Failed && man.Reason != res.Reason) {
				t.Fatalf("registry %s %q, result %s %q; want %s %q", man.Status, man.Reason, res.Status, res.Reason, tc.status, tc.reason)
			}
			if man.FinalURL != tc.finalURL {
				t.Fatalf("final URL %q, want %q", man.FinalURL, tc.finalURL)
			}
			onDisk := manifestFile(t, res.Dir)
			if onDisk.Status != tc.status || onDisk.CompletedAt.IsZero() {
				t.Fatalf("manifest.json: %+v", onDisk)
			}
			want := []string{filepath.Join(res.Dir, ActionsFile), filepath.Join(res.Dir, ManifestFile)}
			if tc.final {
				want = append(want, filepath.Join(res.Dir, "final.png"))
			}
			for _, p := range want {
				if !slices.Contains(man.ArtifactPaths, p) {
					t.Errorf("artifact_paths %v lack %s", man.ArtifactPaths, p)
				}
				if _, err := os.Stat(p); err != nil {
					t.Error(err)
				}
			}
			for _, si := range steps {
				if !si.OK && !si.Skipped && strings.TrimSpace(si.Error) == "" {
					t.Errorf("step %d (%s) failed with no message", si.Step, si.Action)
				}
			}
			if tc.stepError != "" && !slices.ContainsFunc(steps, func(si StepInfo) bool { return si.Error == tc.stepError }) {
				t.Errorf("no step says %q: %+v", tc.stepError, steps)
			}
			if tc.status == run.Completed && len(res.Warnings) > 0 {
				t.Errorf("warnings: %v", res.Warnings)
			}
		})
	}
}

// Artifacts that cannot be written (the runs dir is a file) end the
// registered run as failed instead of leaving it running.
func TestArtifactsFailureCompletesTheRun(t *testing.T) {
	db := openDisk(t)
	cfg := config(t, db, newShop(), &fakeModel{p: naive})
	cfg.RunsDir = filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(cfg.RunsDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, cfg)
	man, err := run.New(db, run.Options{}).Get(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if man.Status != run.Failed || !strings.HasPrefix(man.Reason, "artifacts: ") || res.LLMCalls != 0 {
		t.Fatalf("%+v\n%+v", man, res)
	}
}

// A panic in the loop still completes the run, then goes on.
func TestPanicCompletesTheRun(t *testing.T) {
	db := openDisk(t)
	b := newShop()
	b.panicOn = engine.ActClick
	cfg := config(t, db, b, &fakeModel{p: naive})
	var id string
	cfg.OnStep = func(si StepInfo) { id = si.RunID }
	func() {
		defer func() {
			if p := recover(); p == nil {
				t.Fatal("the panic was swallowed")
			}
		}()
		_, _ = Run(context.Background(), cfg)
	}()
	ms, err := run.New(db, run.Options{}).List(context.Background(), run.Filter{})
	if err != nil || len(ms) != 1 {
		t.Fatalf("%v %+v (id %s)", err, ms, id)
	}
	if ms[0].Status != run.Failed || !strings.HasPrefix(ms[0].Reason, "panic: fake browser: click") {
		t.Fatalf("%+v", ms[0])
	}
}

// A bad run id is refused before anything is registered or written.
func TestBadRunIDsAreRefused(t *testing.T) {
	for _, id := range []string{"..", "../escape", "a/b", strings.Repeat("x", 300), ".hidden"} {
		db := openDisk(t)
		cfg := config(t, db, newShop(), &fakeModel{p: naive})
		base := t.TempDir()
		cfg.RunsDir = filepath.Join(base, "runs")
		cfg.RunID = id
		_, err := Run(context.Background(), cfg)
		if !engine.IsInvalid(err) {
			t.Fatalf("run id %q: %v, want invalid", id, err)
		}
		if ents, _ := os.ReadDir(base); len(ents) != 0 {
			t.Fatalf("run id %q wrote %v", id, ents)
		}
		if ms, _ := run.New(db, run.Options{}).List(context.Background(), run.Filter{}); len(ms) != 0 {
			t.Fatalf("run id %q registered %+v", id, ms)
		}
	}
	if _, err := ArtifactDir("/d/runs", ".."); err == nil {
		t.Fatal("ArtifactDir accepted ..")
	}
	if d, err := ArtifactDir("/d/runs/", "run_1"); err != nil || d != "/d/runs/run_1" {
		t.Fatalf("ArtifactDir = %q %v", d, err)
	}
}

// The run records the process that runs it, and each memory phase beats
// its heartbeat.
func TestOwnerAndHeartbeat(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t)
	cfg := config(t, db, newShop(), &fakeModel{p: naive})
	var tick atomic.Int64
	t0 := time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)
	cfg.Now = func() time.Time { return t0.Add(time.Duration(tick.Add(1)) * time.Second) }
	var beats []time.Time
	cfg.OnStep = func(si StepInfo) {
		m, err := run.New(db, run.Options{}).Get(ctx, si.RunID)
		if err != nil {
			t.Error(err)
			return
		}
		if m.Status != run.Running || m.Owner == nil || m.Owner.PID != os.Getpid() {
			t.Errorf("during the run: %s, owner %+v", m.Status, m.Owner)
		}
		beats = append(beats, m.HeartbeatAt)
	}
	res := mustRun(t, cfg)
	if len(beats) < 3 {
		t.Fatalf("%d steps", len(beats))
	}
	for i := 1; i < len(beats); i++ {
		if !beats[i].After(beats[i-1]) {
			t.Fatalf("heartbeat did not advance at step %d: %v", i+1, beats)
		}
	}
	m, _ := run.New(db, run.Options{}).Get(ctx, res.RunID)
	if m.Owner == nil || *m.Owner != run.Self() {
		t.Fatalf("owner %+v, want %+v", m.Owner, run.Self())
	}
}
