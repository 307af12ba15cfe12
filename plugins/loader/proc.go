package loader

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/plugins/builtin"
	"github.com/engine-dev/engine/plugins/shared"
)

// proc is one running plugin subprocess.
type proc struct {
	c      candidate
	client *plugin.Client
	cmd    *exec.Cmd // its Process is set once the plugin started
	rpc    plugin.ClientProtocol
	hlog   hclog.Logger
	stderr *tailBuffer // the end of what the plugin wrote to stderr

	startTimeout time.Duration

	mu     sync.Mutex
	dead   error // why the process is gone, once it is
	killed bool
}

var versionRE = regexp.MustCompile(`Plugin version: (\d+), Client versions: \[([\d ]*)\]`)

// label names the plugin in errors: `browser plugin "chromedp" (builtin)`.
func (c candidate) label(kind string) string {
	where := c.source
	if c.path != "" {
		where = c.path
	}
	if kind == "" {
		return fmt.Sprintf("plugin %q (%s)", c.name, where)
	}
	return fmt.Sprintf("%s plugin %q (%s)", kind, c.name, where)
}

// command is how the plugin is started: built-ins re-run engine-agent
// with argv[0] "engine-agent" (so a testscript test binary dispatches to the
// agent too), externals run their executable.
func (c candidate) command(o Options) (*exec.Cmd, *plugin.SecureConfig, error) {
	if c.source == SourceBuiltin {
		self, sc, err := o.self()
		if err != nil {
			return nil, nil, fmt.Errorf("finding the engine-agent binary for built-in plugin %q: %w", c.name, err)
		}
		return &exec.Cmd{Path: self, Args: []string{"engine-agent", builtin.Command, c.kind, c.name}}, sc, nil
	}
	var sc *plugin.SecureConfig
	if f := o.checksums(); f != "" {
		var err error
		if sc, err = secureConfig(f, c.path); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", c.label(""), err)
		}
	}
	return exec.Command(c.path), sc, nil
}

// start launches the plugin and completes the handshake.
func start(ctx context.Context, o Options, c candidate) (*proc, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd, secure, err := c.command(o)
	if err != nil {
		return nil, err
	}
	setProcAttr(cmd)
	hlog := newPluginLogger(o.Logger, c.name)
	stderr := &tailBuffer{max: stderrTail}
	cfg := &plugin.ClientConfig{
		HandshakeConfig:  shared.Handshake,
		VersionedPlugins: shared.HostPluginSets(),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hlog,
		StartTimeout:     o.startTimeout(),
		Stderr:           stderr,
		GRPCDialOptions:  shared.DialOptions(),
	}
	cfg.SecureConfig = secure
	client := plugin.NewClient(cfg)
	p := &proc{c: c, client: client, cmd: cmd, hlog: hlog, stderr: stderr, startTimeout: o.startTimeout()}
	rpc, err := client.Client()
	if err != nil {
		p.kill()
		return nil, p.startError(err)
	}
	p.rpc = rpc
	return p, nil
}

// startError explains a failed start.
func (p *proc) startError(err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, plugin.ErrChecksumsDoNotMatch):
		return fmt.Errorf("%s: refusing to start: its sha256 does not match the pinned checksum: %w", p.c.label(""), ErrChecksum)
	case versionRE.MatchString(msg):
		m := versionRE.FindStringSubmatch(msg)
		return fmt.Errorf("%s: plugin speaks protocol version %s, this engine speaks version %s: %w",
			p.c.label(""), m[1], strings.ReplaceAll(strings.TrimSpace(m[2]), " ", ", "), ErrVersionMismatch)
	case strings.Contains(msg, "plugin exited before we could connect"),
		strings.Contains(msg, "Failed to read any lines from plugin's stdout"):
		return fmt.Errorf("%s: exited at start, before its handshake%s", p.c.label(""), p.stderrNote())
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return fmt.Errorf("%s: handshake failed: no handshake within %v (is it an engine plugin for protocol version %d?)%s", p.c.label(""), p.startTimeout, shared.ProtocolVersion, p.stderrNote())
	case strings.Contains(msg, "Unrecognized remote plugin message"):
		// go-plugin follows the line it got with a page of generic advice;
		// the line itself is what says what went wrong.
		_, got, _ := strings.Cut(msg, "Unrecognized remote plugin message: ")
		got, _, _ = strings.Cut(got, "\n")
		return fmt.Errorf("%s: handshake failed (is it an engine plugin for protocol version %d?): it printed %q instead%s", p.c.label(""), shared.ProtocolVersion, got, p.stderrNote())
	}
	return fmt.Errorf("%s: starting: %w%s", p.c.label(""), err, p.stderrNote())
}

// stderrNote is the end of the plugin's stderr for an error message, or "".
// Read it after the plugin is gone, when go-plugin has drained the pipe.
func (p *proc) stderrNote() string {
	if s := strings.TrimSpace(p.stderr.String()); s != "" {
		return "; its stderr ends with:\n" + s
	}
	return ""
}

// dispense returns the kind's client on the running process.
func (p *proc) dispense(kind string) (any, error) {
	raw, err := p.rpc.Dispense(kind)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.c.label(kind), err)
	}
	return raw, nil
}

// describeAny asks the plugin what it is: a browser, else an LLM.
func (p *proc) describeAny(ctx context.Context) (shared.Info, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	raw, err := p.dispense(shared.KindBrowser)
	if err != nil {
		return shared.Info{}, err
	}
	info, err := raw.(*shared.BrowserClient).Describe(ctx)
	if shared.IsUnimplemented(err) {
		raw, err = p.dispense(shared.KindLLM)
		if err != nil {
			return shared.Info{}, err
		}
		info, err = raw.(*shared.ModelClient).Describe(ctx)
	}
	if err != nil {
		return shared.Info{}, fmt.Errorf("%s: Describe: %v", p.c.label(""), err)
	}
	return info, nil
}

// checkInfo checks a Describe answer against the kind asked for and the
// negotiated protocol version.
func (p *proc) checkInfo(kind string, info shared.Info) error {
	if info.Kind != kind {
		return fmt.Errorf("%s is a %q plugin, not a %s plugin", p.c.label(""), info.Kind, kind)
	}
	if nv := p.client.NegotiatedVersion(); info.ProtocolVersion != nv {
		return fmt.Errorf("%s: plugin describes protocol version %d but handshook version %d: %w",
			p.c.label(kind), info.ProtocolVersion, nv, ErrVersionMismatch)
	}
	return nil
}

// call runs one RPC with the per-call timeout and turns transport failures
// into the host's errors: a timeout kills the plugin, a dead plugin fails
// this and every later call.
func (p *proc) call(ctx context.Context, kind, method string, timeout time.Duration, f func(context.Context) error) error {
	p.mu.Lock()
	dead := p.dead
	p.mu.Unlock()
	if dead != nil {
		return fmt.Errorf("%s: %s: %w", p.c.label(kind), method, dead)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := f(cctx)
	if err == nil {
		return nil
	}
	if _, ok := engine.AsActionError(err); ok {
		return err
	}
	if _, ok := shared.IsRetryable(err); ok && ctx.Err() == nil && cctx.Err() == nil {
		// The plugin's own answer (the provider failed for now), not a
		// broken connection, although its code may be UNAVAILABLE.
		return fmt.Errorf("%s: %s: %w", p.c.label(kind), method, err)
	}
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %s: %w", p.c.label(kind), method, ctx.Err())
	case pastDeadline(ctx):
		// The caller's own deadline, which the plugin saw and acted on
		// before the caller's timer fired: the caller's error, and the
		// plugin is fine.
		return fmt.Errorf("%s: %s: %w", p.c.label(kind), method, context.DeadlineExceeded)
	case cctx.Err() == context.DeadlineExceeded || pastDeadline(cctx):
		p.markDead(fmt.Errorf("killed after a call timed out: %w", ErrTimeout))
		p.kill()
		return fmt.Errorf("%s: %s timed out after %v; the plugin was killed: %w", p.c.label(kind), method, timeout, ErrTimeout)
	case shared.IsTransport(err) || p.exitedSoon(err):
		p.markDead(fmt.Errorf("the plugin process died: %w", ErrPluginDied))
		p.kill()
		return fmt.Errorf("%s: %s: the plugin process died mid-call (%v): %w", p.c.label(kind), method, err, ErrPluginDied)
	}
	return fmt.Errorf("%s: %s: %w", p.c.label(kind), method, err)
}

// pastDeadline: the call's deadline has passed even if its context does
// not say so yet. On a loaded machine the plugin (which got the deadline)
// can cancel the stream before the host's own timer fires, and the call
// fails with CANCEL instead of DeadlineExceeded.
func pastDeadline(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d.Add(-20*time.Millisecond))
}

// exitedSoon reports whether the process has exited, giving go-plugin a
// moment to notice when the error does not look like the plugin's own
// answer (a crash can surface as Canceled or Internal before Unavailable).
func (p *proc) exitedSoon(err error) bool {
	if p.client.Exited() {
		return true
	}
	var ce *shared.CallError
	if errors.As(err, &ce) && ce.Code == codes.Unknown {
		return false // the plugin answered with an error
	}
	for i := 0; i < 10; i++ {
		time.Sleep(20 * time.Millisecond)
		if p.client.Exited() {
			return true
		}
	}
	return false
}

func (p *proc) markDead(err error) {
	p.mu.Lock()
	if p.dead == nil {
		p.dead = err
	}
	p.mu.Unlock()
}

// kill ends the process at once (SIGKILL, no grace period: a hung plugin
// would not answer anyway) and releases go-plugin's resources.
func (p *proc) kill() {
	p.mu.Lock()
	if p.killed {
		p.mu.Unlock()
		return
	}
	p.killed = true
	p.mu.Unlock()
	expectExit(p.hlog)
	pid := p.pid()
	killGroup(pid)
	p.release(pid)
}

// release lets go-plugin clean up (it waits for the plugin's stdout and
// stderr to close) within a bound: the plugin's process group is killed
// when that takes too long, and a process that left the group and keeps
// the pipes open is given up on rather than waited for.
func (p *proc) release(pid int) {
	done := make(chan struct{})
	go func() {
		p.client.Kill()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-time.After(releaseWait):
		killGroup(pid)
	}
	select {
	case <-done:
	case <-time.After(releaseWait):
		p.hlog.Warn("plugin output still open after its process group was killed; not waiting for it", "pid", pid)
	}
}

// releaseWait bounds each wait in release; go-plugin's own graceful stop
// takes up to 2s.
const releaseWait = 5 * time.Second

// stop ends the process gracefully: go-plugin closes the connection and
// waits up to 2s for the plugin to exit before killing it.
func (p *proc) stop() {
	p.mu.Lock()
	if p.killed {
		p.mu.Unlock()
		return
	}
	p.killed = true
	p.mu.Unlock()
	expectExit(p.hlog)
	pid := p.pid()
	p.release(pid)
	// Whatever the plugin left running in its group goes with it.
	killGroup(pid)
}

// pid is the plugin process's id (0 when it never started).
func (p *proc) pid() int {
	if p.cmd != nil && p.cmd.Process != nil {
		return p.cmd.Process.Pid
	}
	return 0
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// stderrTail is how much of a plugin's stderr an error quotes.
const stderrTail = 2048
