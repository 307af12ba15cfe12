package loader

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	chromedpbrowser "github.com/engine-dev/engine/plugins/chromedp"
)

// The built-in chromedp browser, as the engine runs it: a subprocess (this
// test binary with argv "engine __plugin browser chromedp") driving a real
// chromium.

func needChromium(t *testing.T) {
	t.Helper()
	if _, err := chromedpbrowser.FindChromium(os.Getenv(EnvChromium)); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium is missing in CI: %v", err)
		}
		t.Skip(err)
	}
}

// ownChromiums gives the test its own TMPDIR, which the plugin subprocess
// inherits, so every chromium profile it makes (engine-chromium-PID-*) is
// under a directory only this test uses. Counting chromium processes by that
// profile path then sees this test's browsers and nobody else's: other test
// packages and other engines on the host run their own chromiums at the same
// time. It also keeps the orphan-profile sweep of another process's plugin
// from removing this test's leftovers.
func ownChromiums(t *testing.T) {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
}

// chromiums lists the pids of live chromium processes whose profile lies in
// this test's TMPDIR (see ownChromiums).
func chromiums(t *testing.T) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	marker := "--user-data-dir=" + filepath.Join(os.TempDir(), "engine-chromium-")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(string(cmdline), marker) {
			// A zombie has an empty cmdline, so this is a live process.
			out = append(out, pid)
		}
	}
	return out
}

// waitNoChromium waits until none of this test's chromium processes is
// left. Chromium dies with the plugin (PDEATHSIG), so this is quick; the
// generous bound only keeps a loaded machine from failing the test.
func waitNoChromium(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := chromiums(t)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromium processes left behind: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func shopServer(t *testing.T) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Shop</title><h1>Rackets</h1><input aria-label="Search"><button>Go</button>`)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestPluginChromedpSubprocess(t *testing.T) {
	needChromium(t)
	ownChromiums(t)
	ts := shopServer(t)
	opts, _ := testOptions(t, "")
	ctx := context.Background()
	b, err := OpenBrowser(ctx, "chromedp", BrowserOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	pid := b.Pid()
	if err := b.Navigate(ctx, ts.URL); err != nil {
		t.Fatal(err)
	}
	s, err := b.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Title != "Shop" || !strings.Contains(s.Tree, `textbox "Search" [ref=e`) {
		t.Fatalf("snapshot: %q\n%s", s.Title, s.Tree)
	}
	var button string
	for _, e := range s.Elements {
		if e.Role == "button" {
			button = e.Ref
		}
	}
	err = b.Act(ctx, engine.Action{Kind: engine.ActFill, Ref: button, Value: "x"})
	if ae, ok := engine.AsActionError(err); !ok || ae.Code != engine.CodeNotEditable || ae.Message != "element is not an input" {
		t.Fatalf("fill a button across the process boundary: %#v", err)
	}
	if len(chromiums(t)) == 0 {
		t.Fatal("no chromium is running for the plugin")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	waitNoChromium(t)
}

func TestPluginChromedpCrashLeavesNoChromium(t *testing.T) {
	needChromium(t)
	ownChromiums(t)
	ts := shopServer(t)
	opts, _ := testOptions(t, "")
	ctx := context.Background()
	b, err := OpenBrowser(ctx, "chromedp", BrowserOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Navigate(ctx, ts.URL); err != nil {
		t.Fatal(err)
	}
	if len(chromiums(t)) == 0 {
		t.Fatal("no chromium is running for the plugin")
	}
	// The plugin dies in the middle of a call.
	pid := b.Pid()
	time.AfterFunc(300*time.Millisecond, func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	start := time.Now()
	err = b.Act(ctx, engine.Action{Kind: engine.ActWait, Millis: 60000})
	if !errors.Is(err, ErrPluginDied) {
		t.Fatalf("err = %v, want ErrPluginDied", err)
	}
	// The wait would take a minute: returning well before it means the
	// crash, not the end of the action, ended the call.
	if time.Since(start) > 30*time.Second {
		t.Fatalf("the call noticed the crash only after %v", time.Since(start))
	}
	waitGone(t, pid)
	waitNoChromium(t)
	if _, err := b.Snapshot(ctx); !errors.Is(err, ErrPluginDied) {
		t.Fatalf("a call after the crash: %v", err)
	}
	// The killed plugin could not remove its profile; the next one does.
	leftover, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("engine-chromium-%d-*", pid)))
	if len(leftover) != 1 {
		t.Fatalf("profile of the killed plugin: %v", leftover)
	}
	b2, err := OpenBrowser(ctx, "chromedp", BrowserOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	b2.Close()
	if _, err := os.Stat(leftover[0]); !os.IsNotExist(err) {
		t.Fatalf("orphan profile %s not removed: %v", leftover[0], err)
	}
}

func TestPluginChromedpHangIsKilled(t *testing.T) {
	needChromium(t)
	ownChromiums(t)
	opts, _ := testOptions(t, "")
	// Long enough for a navigation on a loaded machine, short enough that
	// the hung snapshot below is killed soon.
	opts.CallTimeout = 5 * time.Second
	ctx := context.Background()
	b, err := OpenBrowser(ctx, "chromedp", BrowserOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	pid := b.Pid()
	// A page whose script never yields: the renderer hangs, so does the
	// snapshot.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>busy</title><button onclick="for(;;){}">Spin</button>`)
	}))
	defer ts.Close()
	if err := b.Navigate(ctx, ts.URL); err != nil {
		t.Fatal(err)
	}
	s, err := b.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = b.Act(ctx, engine.Action{Kind: engine.ActClick, Ref: s.Elements[0].Ref})
	_, err = b.Snapshot(ctx)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	waitGone(t, pid)
	waitNoChromium(t)
}

func TestPluginChromedpMissingChromium(t *testing.T) {
	opts, _ := testOptions(t, "")
	_, err := OpenBrowser(context.Background(), "chromedp", BrowserOptions{Options: opts, ChromiumPath: "/nonexistent/chromium"})
	if err == nil || !strings.Contains(err.Error(), "chromium /nonexistent/chromium") {
		t.Fatalf("err = %v", err)
	}
}
