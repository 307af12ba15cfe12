package loader

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/plugins/shared"
)

// BrowserOptions configure OpenBrowser.
type BrowserOptions struct {
	Options
	// ChromiumPath is the browser binary (chromedp). Default:
	// $ENGINE_CHROMIUM, then chromium, chromium-browser, google-chrome on PATH.
	ChromiumPath string
	// Headed shows a window instead of running headless.
	Headed bool
	// DebugURL attaches to an already running Chrome (its
	// --remote-debugging-port address, e.g. http://127.0.0.1:9222) instead
	// of starting one; chromedp only.
	DebugURL string
	// MaxTreeBytes and MaxTextBytes bound a snapshot (0: the plugin's
	// default, 64 KiB and 16 KiB).
	MaxTreeBytes, MaxTextBytes int
	// Extra are further plugin-specific options, sent as they are.
	Extra map[string]string
	// OpenTimeout bounds Open, which launches the browser. Default 60s.
	OpenTimeout time.Duration
}

// Browser is a browser plugin running as a subprocess. It implements
// engine.Browser; Close kills the subprocess.
type Browser struct {
	p       *proc
	rpc     *shared.BrowserClient
	info    shared.Info
	timeout time.Duration
}

var _ engine.Browser = (*Browser)(nil)

// OpenBrowser starts the browser plugin name and opens its browser.
func OpenBrowser(ctx context.Context, name string, opts BrowserOptions) (*Browser, error) {
	c, err := opts.find(shared.KindBrowser, name)
	if err != nil {
		return nil, err
	}
	p, err := start(ctx, opts.Options, c)
	if err != nil {
		return nil, err
	}
	b, err := openBrowser(ctx, p, opts)
	if err != nil {
		p.kill()
		return nil, err
	}
	return b, nil
}

func openBrowser(ctx context.Context, p *proc, opts BrowserOptions) (*Browser, error) {
	raw, err := p.dispense(shared.KindBrowser)
	if err != nil {
		return nil, err
	}
	rpc := raw.(*shared.BrowserClient)
	rpc.MaxTreeBytes, rpc.MaxTextBytes = opts.MaxTreeBytes, opts.MaxTextBytes
	b := &Browser{p: p, rpc: rpc, timeout: opts.CallTimeout}
	if b.timeout <= 0 {
		b.timeout = 60 * time.Second
	}
	err = p.call(ctx, shared.KindBrowser, "Describe", opts.startTimeout(), func(ctx context.Context) error {
		var err error
		b.info, err = rpc.Describe(ctx)
		return err
	})
	if shared.IsUnimplemented(err) {
		return nil, fmt.Errorf("%s does not serve the Browser service (is it an LLM plugin?)", p.c.label(""))
	}
	if err != nil {
		return nil, err
	}
	if err := p.checkInfo(shared.KindBrowser, b.info); err != nil {
		return nil, err
	}
	options := map[string]string{}
	for k, v := range opts.Extra {
		options[k] = v
	}
	chromium := opts.ChromiumPath
	if chromium == "" {
		chromium = os.Getenv(EnvChromium)
	}
	if chromium != "" {
		options[shared.OptChromiumPath] = absPath(chromium)
	}
	if opts.Headed {
		options[shared.OptHeadless] = "false"
	}
	if opts.DebugURL != "" {
		options[shared.OptDebugURL] = opts.DebugURL
	}
	if opts.MaxTreeBytes > 0 {
		options["max_tree_bytes"] = strconv.Itoa(opts.MaxTreeBytes)
	}
	if opts.MaxTextBytes > 0 {
		options["max_text_bytes"] = strconv.Itoa(opts.MaxTextBytes)
	}
	// Opening launches the browser itself, which can take a while on a
	// cold machine.
	openTimeout := opts.OpenTimeout
	if openTimeout <= 0 {
		openTimeout = 60 * time.Second
	}
	if err := p.call(ctx, shared.KindBrowser, "Open", openTimeout, func(ctx context.Context) error {
		return rpc.Open(ctx, options)
	}); err != nil {
		return nil, err
	}
	return b, nil
}

// Info is the plugin's Describe answer.
func (b *Browser) Info() shared.Info { return b.info }

// Navigate implements engine.Browser.
func (b *Browser) Navigate(ctx context.Context, url string) error {
	if err := shared.CheckAction("the URL", url); err != nil {
		return err
	}
	return b.p.call(ctx, shared.KindBrowser, "Navigate", b.timeout, func(ctx context.Context) error {
		return b.rpc.Navigate(ctx, url)
	})
}

// Snapshot implements engine.Browser.
func (b *Browser) Snapshot(ctx context.Context) (*engine.Snapshot, error) {
	var s *engine.Snapshot
	err := b.p.call(ctx, shared.KindBrowser, "Snapshot", b.timeout, func(ctx context.Context) error {
		var err error
		s, err = b.rpc.Snapshot(ctx)
		return err
	})
	return s, err
}

// Act implements engine.Browser.
func (b *Browser) Act(ctx context.Context, a engine.Action) error {
	if err := shared.CheckAction("the value of "+string(a.Kind), a.Value); err != nil {
		return err
	}
	t := b.timeout
	if a.Kind == engine.ActWait && a.Millis > 0 {
		t += time.Duration(a.Millis) * time.Millisecond
	}
	return b.p.call(ctx, shared.KindBrowser, "Act", t, func(ctx context.Context) error {
		return b.rpc.Act(ctx, a)
	})
}

// Screenshot implements engine.Browser.
func (b *Browser) Screenshot(ctx context.Context) ([]byte, error) {
	var png []byte
	err := b.p.call(ctx, shared.KindBrowser, "Screenshot", b.timeout, func(ctx context.Context) error {
		var err error
		png, err = b.rpc.Screenshot(ctx)
		return err
	})
	return png, err
}

// Close asks the plugin to close its browser (closeTimeout at most), then ends the
// subprocess. It is safe to call more than once; an error only says the
// plugin could not close cleanly; the process is gone either way.
func (b *Browser) Close() error {
	var err error
	b.p.mu.Lock()
	gone := b.p.dead != nil || b.p.killed
	b.p.mu.Unlock()
	if !gone {
		err = b.p.call(context.Background(), shared.KindBrowser, "Close", closeTimeout, func(ctx context.Context) error {
			return b.rpc.CloseBrowser(ctx)
		})
	}
	b.p.stop()
	return err
}

// closeTimeout bounds a browser's clean close. Chromium closes in well under
// a second; the bound is for a machine so loaded that it does not, and past
// it the plugin's whole process group is killed, so nothing is left either way.
const closeTimeout = 20 * time.Second

// Pid is the plugin process's id, 0 once it is gone.
func (b *Browser) Pid() int { return b.p.pid() }
