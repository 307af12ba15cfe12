package host

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

// chromiums lists the pids of chromium processes started by the chromedp
// plugin (their profile is a temp dir named engine-chromium-*).
func chromiums(t *testing.T) map[int]bool {
	t.Helper()
	out := map[int]bool{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	marker := "--user-data-dir=" + filepath.Join(os.TempDir(), "engine-chromium-")
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
			out[pid] = true
		}
	}
	return out
}

func newChromiums(t *testing.T, before map[int]bool) []int {
	var pids []int
	for pid := range chromiums(t) {
		if !before[pid] {
			pids = append(pids, pid)
		}
	}
	return pids
}

func waitNoNewChromium(t *testing.T, before map[int]bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := newChromiums(t, before)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromium processes left behind: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
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
	before := chromiums(t)
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
	if len(newChromiums(t, before)) == 0 {
		t.Fatal("no chromium is running for the plugin")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	waitNoNewChromium(t, before)
}

func TestPluginChromedpCrashLeavesNoChromium(t *testing.T) {
	needChromium(t)
	before := chromiums(t)
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
	if len(newChromiums(t, before)) == 0 {
		t.Fatal("no chromium is running for the plugin")
	}
	// The plugin dies in the middle of a call.
	pid := b.Pid()
	time.AfterFunc(300*time.Millisecond, func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	start := time.Now()
	err = b.Act(ctx, engine.Action{Kind: engine.ActWait, Millis: 10000})
	if !errors.Is(err, ErrPluginDied) {
		t.Fatalf("err = %v, want ErrPluginDied", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("the call noticed the crash only after %v", time.Since(start))
	}
	waitGone(t, pid)
	waitNoNewChromium(t, before)
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
	before := chromiums(t)
	opts, _ := testOptions(t, "")
	opts.CallTimeout = 500 * time.Millisecond
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
	waitNoNewChromium(t, before)
}

func TestPluginChromedpMissingChromium(t *testing.T) {
	opts, _ := testOptions(t, "")
	_, err := OpenBrowser(context.Background(), "chromedp", BrowserOptions{Options: opts, ChromiumPath: "/nonexistent/chromium"})
	if err == nil || !strings.Contains(err.Error(), "chromium /nonexistent/chromium") {
		t.Fatalf("err = %v", err)
	}
}
