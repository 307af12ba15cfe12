package inspect_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
)

// findChromium finds chromium as plugins/chromedp.FindChromium does:
// ENGINE_CHROMIUM, else the usual names on PATH.
func findChromium() (string, error) {
	if p := os.Getenv("ENGINE_CHROMIUM"); p != "" {
		_, err := os.Stat(p)
		return p, err
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on PATH")
}

// browser is a headless chromium tab that records every console error,
// uncaught exception and error log entry (a CSP violation, a failed load).
type browser struct {
	ctx   context.Context
	mu    sync.Mutex
	probs []string
	shots string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path, err := findChromium()
	if err != nil {
		t.Skipf("no chromium: %v (set ENGINE_CHROMIUM)", err)
	}
	// The profile is ours alone; chromium helpers may still write into it
	// for a moment after exit, so it is removed best-effort.
	profile, err := os.MkdirTemp("", "inspect-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(profile) })
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.UserDataDir(profile),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1366, 900),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-first-run", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	b := &browser{shots: os.Getenv("ENGINE_INSPECT_SHOTS")}
	if b.shots == "" {
		b.shots = t.TempDir()
	} else if err := os.MkdirAll(b.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	// Bounds a hung browser, not a performance claim.
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelT)
	b.ctx = ctx
	// Console errors, uncaught exceptions and error entries of the browser
	// log (a CSP violation, a resource that failed to load).
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError || m.Type == "assert" {
				b.mu.Lock()
				b.probs = append(b.probs, m.String())
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// open loads url, waits for the page's main element, and fails the test
// on any console error the load caused.
func (b *browser) open(t *testing.T, url string) {
	t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("main"))); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	b.noProblems(t, url)
}

// noProblems fails on console errors seen so far. Events arrive
// asynchronously; a round trip to the page after the load lets those of
// the load come in first.
func (b *browser) noProblems(t *testing.T, where string) {
	t.Helper()
	chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.readyState`))
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.probs) > 0 {
		t.Errorf("%s: console errors:\n%s", where, strings.Join(b.probs, "\n"))
		b.probs = nil
	}
}

// shot saves a full-page screenshot of the current page as name.png.
func (b *browser) shot(t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// ids returns the data-id of each row the selector matches.
func (b *browser) ids(t *testing.T, rows string) []string {
	t.Helper()
	ids, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`[...document.querySelectorAll(%q)].map(r => r.dataset.id)`, rows)))
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestInBrowser(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	w.fill(t)
	b := newBrowser(t)

	// Every page loads without a console error; each is saved as a picture.
	// On a 1280 px wide screen no page is wider than the screen: a wide
	// table scrolls inside its box instead of pushing its last columns off
	// the page.
	if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct{ path, name string }{
		{"/", "runs"}, {"/lessons", "lessons"}, {"/facts", "facts"}, {"/selectors", "selectors"},
		{"/trajectories", "trajectories"}, {"/sessions", "sessions"}, {"/runs/run_cold", "run"}, {"/runs/run_fork", "run-planner"},
	} {
		b.open(t, w.srv.URL+p.path)
		over, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if over > 0 {
			t.Errorf("%s is %d px wider than a 1280 px screen", p.path, over)
		}
		outside, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`[...document.querySelectorAll("table")].filter(t => !t.parentElement.classList.contains("wide")).length`))
		if err != nil {
			t.Fatal(err)
		}
		if outside > 0 {
			t.Errorf("%s: %d tables outside a scrolling box", p.path, outside)
		}
		b.shot(t, p.name)
	}

	// The rows shown are the API's.
	b.open(t, w.srv.URL+"/lessons")
	if got, want := b.ids(t, "#lessons tbody tr"), w.apiLessons(t, api.LessonFilter{}); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("lesson rows %v, API %v", got, want)
	}
	var runs []string
	if _, err := w.c.EachRun(ctx, runFilter{}, "", 0, func(m runManifest) error { runs = append(runs, m.RunID); return nil }); err != nil {
		t.Fatal(err)
	}
	b.open(t, w.srv.URL+"/runs")
	if got := b.ids(t, "#runs tbody tr"); strings.Join(got, ",") != strings.Join(runs, ",") {
		t.Errorf("run rows %v, API %v", got, runs)
	}

	// Filtering through the form.
	b.open(t, w.srv.URL+"/lessons")
	if err := chromedp.Do(b.ctx,
		chromedp.SetValue(chromedp.CSS(`select[name=tier]`), "2"),
		chromedp.SendKeys(chromedp.CSS(`input[name=domain]`), "shop.example"),
		chromedp.Click(chromedp.CSS(`form.filter button[type=submit]`)),
		// The value attribute is the server's: the filtered page is there.
		chromedp.WaitVisible(chromedp.CSS(`input[name=domain][value="shop.example"]`)),
	); err != nil {
		t.Fatal(err)
	}
	b.noProblems(t, "filtered lessons")
	filtered := w.apiLessons(t, api.LessonFilter{Tier: 2, Domain: "shop.example"})
	if got := b.ids(t, "#lessons tbody tr"); len(filtered) == 0 || strings.Join(got, ",") != strings.Join(filtered, ",") {
		t.Errorf("filtered rows %v, API %v", got, filtered)
	}
	b.shot(t, "lessons-filtered")

	// Deleting a lesson through the page removes it from memory.
	row := fmt.Sprintf(`tr[data-id=%q]`, w.siteLesson)
	if err := chromedp.Do(b.ctx,
		chromedp.Click(chromedp.CSS(row+` details summary`)),
		chromedp.Click(chromedp.CSS(row+` button.danger`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)),
	); err != nil {
		t.Fatal(err)
	}
	b.noProblems(t, "delete")
	if _, err := w.c.Lesson(ctx, w.siteLesson); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("lesson after the page deleted it: %v", err)
	}
	if got := b.ids(t, "#lessons tbody tr"); strings.Contains(strings.Join(got, ","), w.siteLesson) {
		t.Errorf("rows after delete: %v", got)
	}

	// The run page shows its screenshots, loaded from the run's folder.
	b.open(t, w.srv.URL+"/runs/run_cold")
	for _, img := range []string{`img#final-shot`, `#step-3 img.shot`} {
		if err := chromedp.Do(b.ctx, chromedp.ScrollIntoView(chromedp.CSS(img))); err != nil {
			t.Fatalf("%s: %v", img, err)
		}
		width, err := chromedp.Run(b.ctx, chromedp.Poll[int](fmt.Sprintf(`(() => { const i = document.querySelector(%q); return i && i.complete && i.naturalWidth; })()`, img)))
		if err != nil {
			t.Fatalf("%s: %v", img, err)
		}
		if want := map[bool]int{true: 320, false: 64}[img == `img#final-shot`]; width != want {
			t.Errorf("%s: natural width %d, want %d", img, width, want)
		}
	}
	b.noProblems(t, "run page")
	t.Logf("screenshots in %s", b.shots)
}
