// Package chromedp is the default browser backend: it drives Debian's
// chromium (headless, a fresh profile per run) through chromedp and the
// DevTools protocol.
//
// Refs are "e" + the node's backendDOMNodeId from Accessibility.getFullAXTree;
// they stay valid for one document, and acting on a ref from an earlier
// document gives a stale_ref ActionError. Clicks hit-test the click point,
// so a covered element gives "another element would receive the click: …".
//
// Options (OpenRequest.options): chromium_path, headless ("false" shows a
// window), debug_url (attach to a running Chrome instead of starting one),
// viewport ("1280x800"), nav_timeout (Go duration, default 30s),
// max_tree_bytes, max_text_bytes.
package chromedp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	dp "github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/plugins/shared"
)

// Version is the chromedp backend's version.
const Version = "1.0.0"

// Browser is one chromium with one tab.
type Browser struct {
	mu sync.Mutex // one call at a time: one tab, one sequence of actions

	allocCancel context.CancelFunc
	ctx         context.Context // the tab's chromedp context
	cancel      context.CancelFunc
	profile     string // temp --user-data-dir, removed at Close
	navTimeout  time.Duration
	bounds      shared.Bounds // of a snapshot

	// refs maps each backend node id handed out to the loader (document)
	// of the snapshot it came from.
	refs map[cdp.BackendNodeID]cdp.LoaderID
	// mainFrame is the tab's main frame id.
	mainFrame cdp.FrameID

	closed bool

	dialogMu sync.Mutex
	dialogs  []string
}

// New returns an unopened browser.
func New() *Browser {
	return &Browser{refs: map[cdp.BackendNodeID]cdp.LoaderID{}, bounds: shared.DefaultBounds(), navTimeout: 30 * time.Second}
}

// Capabilities of every full browser backend.
var Capabilities = []string{"navigate", "snapshot", "click", "fill", "type", "press", "select", "hover", "scroll", "wait", "back", "screenshot", "shadow-dom", "iframes"}

// Describe implements shared.Browser.
func (b *Browser) Describe() shared.Info {
	return shared.Info{
		Name:            "chromedp",
		Version:         Version,
		Kind:            shared.KindBrowser,
		Capabilities:    Capabilities,
		ProtocolVersion: shared.ProtocolVersion,
		Description:     "headless chromium through the DevTools protocol (default)",
	}
}

// FindChromium returns the browser binary: path when given, else the first
// of chromium, chromium-browser, google-chrome, google-chrome-stable on PATH.
func FindChromium(path string) (string, error) {
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("chromium %s: %w", path, err)
		}
		return path, nil
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium found on PATH (looked for chromium, chromium-browser, google-chrome): install it (apt-get install chromium, or scripts/install-deps.sh) or give its path with --chromium / ENGINE_CHROMIUM")
}

// SetSnapshotBounds implements shared.SnapshotBounds.
func (b *Browser) SetSnapshotBounds(maxTree, maxText int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bounds.Set(maxTree, maxText)
}

// Open starts chromium (or attaches to debug_url) and opens a tab.
func (b *Browser) Open(ctx context.Context, o map[string]string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx != nil {
		return errors.New("chromedp: already open")
	}
	if v := o["nav_timeout"]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("chromedp: nav_timeout: %w", err)
		}
		b.navTimeout = d
	}
	if err := b.bounds.Open(o, "chromedp"); err != nil {
		return err
	}
	w, h := 1280, 800
	if v := o[shared.OptViewport]; v != "" {
		if _, err := fmt.Sscanf(v, "%dx%d", &w, &h); err != nil {
			return fmt.Errorf("chromedp: viewport %q: want WIDTHxHEIGHT", v)
		}
	}

	var allocCtx context.Context
	if u := o[shared.OptDebugURL]; u != "" {
		allocCtx, b.allocCancel = remote.NewAllocator(context.Background(), u)
	} else {
		path, err := FindChromium(o[shared.OptChromiumPath])
		if err != nil {
			return err
		}
		removeOrphanProfiles()
		b.profile, err = os.MkdirTemp("", fmt.Sprintf("%s%d-", profilePrefix, os.Getpid()))
		if err != nil {
			return err
		}
		opts := execOptions(path, b.profile, w, h)
		if o[shared.OptHeadless] == "false" {
			opts = append(opts, dp.Flag("headless", false))
		}
		allocCtx, b.allocCancel = dp.NewExecAllocator(context.Background(), opts...)
	}
	b.ctx, b.cancel = dp.NewContext(allocCtx)

	// The first Do binds the browser to b.ctx, so it must not carry the
	// call's deadline; wait for it under the call's context instead.
	done := make(chan error, 1)
	go func() { done <- dp.Do(b.ctx) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil {
		err = b.handleDialogs()
	}
	if err == nil {
		// One tab per run: links and window.open that would open another
		// tab open in this one, so the agent sees where it went.
		_, err = dp.Call(b.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: singleTabJS})
	}
	if err == nil {
		var tree page.GetFrameTreeResult
		tree, err = dp.Call(b.ctx, page.GetFrameTree, cdp.Empty{})
		if err == nil {
			b.mainFrame = tree.FrameTree.Frame.ID
		}
	}
	if err != nil {
		b.closeLocked()
		return fmt.Errorf("chromedp: starting chromium: %w", err)
	}
	return nil
}

const singleTabJS = `(() => {
	document.addEventListener('click', e => {
		const a = e.target && e.target.closest ? e.target.closest('a[target], area[target]') : null;
		if (a && a.target && a.target !== '_self' && a.target !== '_top' && a.target !== '_parent') a.target = '_self';
	}, true);
	document.addEventListener('submit', e => {
		const f = e.target;
		if (f && f.target && f.target !== '_self') f.target = '_self';
	}, true);
	window.open = function(u) { if (u) { window.location.href = u; } return window; };
})();`

// handleDialogs accepts JavaScript dialogs (alert, confirm, prompt,
// beforeunload) as they open: an open dialog blocks the page and every
// call after it. Their messages show in the next snapshot's text.
func (b *Browser) handleDialogs() error {
	ctx := b.ctx
	return dp.Listen(ctx, func(ev any) {
		d, ok := ev.(*page.EventJavascriptDialogOpening)
		if !ok {
			return
		}
		b.dialogMu.Lock()
		b.dialogs = append(b.dialogs, fmt.Sprintf("[%s dialog, accepted] %s", d.Type, d.Message))
		b.dialogMu.Unlock()
		// Listen's callback must not block: answer from a goroutine.
		go func() {
			_, _ = dp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true, PromptText: d.DefaultPrompt})
		}()
	})
}

// takeDialogs returns the dialogs seen since the last snapshot.
func (b *Browser) takeDialogs() []string {
	b.dialogMu.Lock()
	defer b.dialogMu.Unlock()
	d := b.dialogs
	b.dialogs = nil
	return d
}

// callCtx derives a context for one call from the tab's context that also
// ends when the RPC's context ends (the tab itself lives on).
func (b *Browser) callCtx(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if b.ctx == nil || b.closed {
		return nil, nil, errors.New("chromedp: browser is not open")
	}
	cctx, cancel := context.WithCancel(b.ctx)
	if d, ok := ctx.Deadline(); ok {
		cctx, cancel = context.WithDeadline(b.ctx, d)
	}
	stop := context.AfterFunc(ctx, cancel)
	return cctx, func() { stop(); cancel() }, nil
}

// Navigate implements engine.Browser.
func (b *Browser) Navigate(ctx context.Context, url string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	cctx, cancel, err := b.callCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	return b.navigate(cctx, url)
}

func (b *Browser) navigate(ctx context.Context, url string) error {
	nctx, cancel := context.WithTimeout(ctx, b.navTimeout)
	defer cancel()
	err := dp.Do(nctx, dp.Navigate(url))
	var le *dp.LoadError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &le):
		return &engine.ActionError{Code: engine.CodeNavigation, Message: fmt.Sprintf("cannot load %s: %s", url, le.ErrorText)}
	case ctx.Err() == nil && nctx.Err() != nil:
		return &engine.ActionError{Code: engine.CodeTimeout, Message: fmt.Sprintf("page %s did not finish loading within %v", url, b.navTimeout)}
	case strings.Contains(err.Error(), "Cannot navigate to invalid URL"), strings.Contains(err.Error(), "invalid URL"):
		return &engine.ActionError{Code: engine.CodeNavigation, Message: fmt.Sprintf("cannot load %s: invalid URL", url)}
	}
	return err
}

// Screenshot implements engine.Browser: a PNG of the viewport, secret
// fields' text hidden (see secret.go).
func (b *Browser) Screenshot(ctx context.Context) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cctx, cancel, err := b.callCtx(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	// Secret fields' text is hidden while the picture is taken.
	defer maskSecrets(cctx)()
	// Right after a navigation that swapped the renderer process (leaving
	// an error page is one), chromium answers "Not attached to an active
	// page" until the new page is attached. That is a moment, not a fault:
	// try again a few times, within the call's deadline.
	for attempt := 1; ; attempt++ {
		res, err := dp.Call(cctx, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
		if err == nil {
			return res.Data, nil
		}
		if attempt == screenshotAttempts || !strings.Contains(err.Error(), "Not attached to an active page") {
			return nil, fmt.Errorf("chromedp: screenshot: %w", err)
		}
		select {
		case <-cctx.Done():
			return nil, fmt.Errorf("chromedp: screenshot: %w", err)
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		}
	}
}

// screenshotAttempts bounds the retries of a screenshot taken while the
// page is being swapped (about 1.5 s of waiting in all).
const screenshotAttempts = 8

// Close implements engine.Browser: it closes the tab, ends chromium and
// removes the profile. Safe to call more than once.
func (b *Browser) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closeLocked()
}

func (b *Browser) closeLocked() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if b.cancel != nil {
		b.cancel()
	}
	if b.allocCancel != nil {
		b.allocCancel() // waits for chromium to exit
	}
	if b.profile != "" {
		// Chromium's helper processes can still write into the profile for
		// a moment after the browser exits. What cannot be removed now goes
		// with the next start (removeOrphanProfiles).
		for i := 0; i < 20 && os.RemoveAll(b.profile) != nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// execOptions are the flags chromium is started with (headless unless the
// caller adds otherwise), shared by Open and Probe.
func execOptions(path, profile string, w, h int) []dp.ExecAllocatorOption {
	return append(dp.DefaultExecAllocatorOptions[:],
		dp.ExecPath(path),
		dp.UserDataDir(profile),
		dp.NoSandbox, // we run as root on CI machines
		dp.DisableGPU,
		dp.WindowSize(w, h),
		dp.Flag("disable-background-networking", true),
		dp.Flag("disable-component-update", true),
		dp.Flag("disable-sync", true),
		dp.Flag("disable-quic", true),
		dp.Flag("no-first-run", true),
		// No back/forward cache: "back" then always loads the page.
		dp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,BackForwardCache"),
	)
}

// ProbeResult is what Probe found.
type ProbeResult struct {
	Path    string `json:"path"`              // the chromium binary
	Version string `json:"version,omitempty"` // its product string, e.g. "Chrome/131.0.6778.85"; empty when it did not start
}

// Probe finds chromium as Open does (path, else PATH) and starts it
// headless with Open's flags, asks its version over the DevTools protocol
// and stops it, all within timeout. An error with a non-empty Path means
// chromium was found but did not start.
func Probe(ctx context.Context, path string, timeout time.Duration) (ProbeResult, error) {
	p, err := FindChromium(path)
	if err != nil {
		return ProbeResult{}, err
	}
	res := ProbeResult{Path: p}
	profile, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", profilePrefix, os.Getpid()))
	if err != nil {
		return res, err
	}
	defer func() {
		for i := 0; i < 20 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	allocCtx, allocCancel := dp.NewExecAllocator(ctx, execOptions(p, profile, 800, 600)...)
	defer allocCancel() // waits for chromium to exit
	bctx, bcancel := dp.NewContext(allocCtx)
	defer bcancel()
	err = dp.Do(bctx) // starts chromium
	if err == nil {
		var v browser.GetVersionResult
		v, err = dp.CallBrowser(bctx, browser.GetVersion, cdp.Empty{})
		res.Version = v.Product
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("did not start within %s: %w", timeout, err)
		}
		return res, fmt.Errorf("chromium %s: %w", p, err)
	}
	return res, nil
}

// profilePrefix names the temporary profiles: engine-chromium-PID-RANDOM,
// PID being the plugin process that made it.
const profilePrefix = "engine-chromium-"

// removeOrphanProfiles removes the profiles of plugin processes that are
// gone: a plugin killed by the engine (a hang, a crash) cannot clean up.
func removeOrphanProfiles() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), profilePrefix+"*-*"))
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), profilePrefix)
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(d)
		}
	}
}

// Profile is the temporary profile directory (empty when attached), for
// tests that look for leftover chromium processes.
func (b *Browser) Profile() string { return b.profile }
