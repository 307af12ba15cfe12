package loader

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/plugins/internal/testplugin"
	"github.com/engine-dev/engine/plugins/shared"
)

// syncBuffer is a log sink the plugin's log goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// externalDir makes a plugin dir with engine-plugin-NAME scripts that run
// this test binary as the test plugin in the given modes.
func externalDir(t *testing.T, modes map[string]string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, mode := range modes {
		script := fmt.Sprintf("#!/bin/sh\n%s=%s exec %q \"$@\"\n", testplugin.Env, mode, self)
		if err := os.WriteFile(filepath.Join(dir, ExternalPrefix+name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func testOptions(t *testing.T, dir string) (Options, *syncBuffer) {
	logs := &syncBuffer{}
	return Options{
		PluginDir: dir,
		NoPath:    true,
		Logger:    slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}, logs
}

// alive reports whether a process with this pid still exists.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still running", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func writeRules(t *testing.T, rules string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(p, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPluginBuiltinScriptedSubprocess(t *testing.T) {
	ctx := context.Background()
	opts, logs := testOptions(t, "")
	rules := writeRules(t, `{"rules": [
		{"step": 1, "tool_calls": [{"name": "navigate", "arguments": {"url": "http://shop.test/"}}]},
		{"last_contains": "not an input", "system_contains": "Tips from previous experience", "text": "using the tip",
		 "tool_calls": [{"name": "click", "arguments": {"ref": "e12"}}], "times": 1},
		{"step": 3, "text": "done"}
	]}`)
	m, err := OpenModel(ctx, "scripted", ModelOptions{Options: opts, RulesFile: rules})
	if err != nil {
		t.Fatal(err)
	}
	pid := m.Pid()
	if pid == 0 || pid == os.Getpid() {
		t.Fatalf("plugin pid %d: not a subprocess", pid)
	}
	if got := m.Info(); got.Name != "scripted" || got.Kind != shared.KindLLM || got.ProtocolVersion != 1 {
		t.Fatalf("Info = %+v", got)
	}
	tools := []engine.Tool{{Name: "click", Description: "click an element", Parameters: []byte(`{"type":"object"}`)}}
	r1, err := m.Complete(ctx, engine.ModelRequest{System: "You drive a browser.", Messages: []engine.Message{{Role: "user", Content: "buy a racket"}}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if len(r1.ToolCalls) != 1 || r1.ToolCalls[0].Name != "navigate" || r1.ToolCalls[0].Arguments != `{"url":"http://shop.test/"}` || r1.ToolCalls[0].ID == "" {
		t.Fatalf("step 1 = %+v", r1)
	}
	if r1.Usage.PromptTokens <= 0 || r1.Usage.CompletionTokens <= 0 {
		t.Fatalf("step 1 usage = %+v", r1.Usage)
	}
	msgs := []engine.Message{
		{Role: "user", Content: "buy a racket"},
		{Role: "assistant", ToolCalls: r1.ToolCalls},
		{Role: "tool", ToolCallID: r1.ToolCalls[0].ID, Content: "fill e7 failed: element is not an input"},
	}
	r2, err := m.Complete(ctx, engine.ModelRequest{System: "You drive a browser.\nTips from previous experience:\n- click e12 first", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Text != "using the tip" || len(r2.ToolCalls) != 1 || r2.ToolCalls[0].Arguments != `{"ref":"e12"}` {
		t.Fatalf("step 2 = %+v", r2)
	}
	if r2.Usage.PromptTokens <= r1.Usage.PromptTokens {
		t.Fatalf("a longer prompt should cost more tokens: %d then %d", r1.Usage.PromptTokens, r2.Usage.PromptTokens)
	}
	if _, err := m.Complete(ctx, engine.ModelRequest{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	_, err = m.Complete(ctx, engine.ModelRequest{Messages: []engine.Message{{Role: "tool", Content: "clicked e12"}}})
	if err == nil || !strings.Contains(err.Error(), `no rule matches step 4`) || !strings.Contains(err.Error(), `clicked e12`) {
		t.Fatalf("unmatched step: err = %v", err)
	}
	// A provider error is not a dead plugin: the next call still works.
	if !errors.Is(err, err) || errors.Is(err, ErrPluginDied) {
		t.Fatalf("unmatched step should not kill the plugin: %v", err)
	}
	m.Close()
	waitGone(t, pid)
	_ = logs
}

func TestPluginScriptedMissingRules(t *testing.T) {
	t.Setenv(EnvRules, "")
	opts, _ := testOptions(t, "")
	_, err := OpenModel(context.Background(), "scripted", ModelOptions{Options: opts})
	if err == nil || !strings.Contains(err.Error(), "no rules file") {
		t.Fatalf("err = %v", err)
	}
	_, err = OpenModel(context.Background(), "scripted", ModelOptions{Options: opts, RulesFile: writeRules(t, `{"rules": [{"step": 1}]}`)})
	if err == nil || !strings.Contains(err.Error(), "gives neither text, tool_calls nor error") {
		t.Fatalf("err = %v", err)
	}
}

func TestPluginNotFoundListsAvailable(t *testing.T) {
	dir := externalDir(t, map[string]string{"echo": "echo"})
	opts, _ := testOptions(t, dir)
	_, err := OpenModel(context.Background(), "nosuch:model", ModelOptions{Options: opts})
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	for _, want := range []string{`no llm plugin named "nosuch"`, "scripted", "echo (" + dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	_, err = OpenBrowser(context.Background(), "nosuch", BrowserOptions{Options: opts})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "chromedp") {
		t.Fatalf("browser: err = %v", err)
	}
	// Find says the same without starting anything, and finds built-in
	// and external plugins.
	if err := Find(shared.KindBrowser, "nosuch", opts); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `no browser plugin named "nosuch" (available: chromedp, static`) {
		t.Errorf("Find(browser nosuch) = %v", err)
	}
	for _, c := range []struct{ kind, name string }{{shared.KindBrowser, "static"}, {shared.KindLLM, "scripted"}, {shared.KindLLM, "echo"}} {
		if err := Find(c.kind, c.name, opts); err != nil {
			t.Errorf("Find(%s %s) = %v", c.kind, c.name, err)
		}
	}
}

func TestPluginExternalAndLogs(t *testing.T) {
	dir := externalDir(t, map[string]string{"echo": "echo"})
	opts, logs := testOptions(t, dir)
	ctx := context.Background()
	m, err := OpenModel(ctx, "echo:any-model", ModelOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	resp, err := m.Complete(ctx, engine.ModelRequest{Messages: []engine.Message{{Role: "user", Content: "ping 42"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "echo: ping 42" {
		t.Fatalf("resp = %+v", resp)
	}
	// The plugin's hclog line on stderr arrives in our log under its name.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), `msg="complete called"`) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	out := logs.String()
	if !strings.Contains(out, `msg="complete called"`) || !strings.Contains(out, "plugin=echo") || !strings.Contains(out, `last="ping 42"`) {
		t.Fatalf("plugin log not routed under its name:\n%s", out)
	}

	// Unpinned, it is listed by its file and not run; asked to, it is run.
	infos, err := List(ctx, ListOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range infos {
		if i.Name == "echo" && (i.Kind != "" || i.NotStarted == "" || i.Path != filepath.Join(dir, "engine-plugin-echo")) {
			t.Errorf("unpinned echo listed as %+v", i)
		}
	}
	infos, err = List(ctx, ListOptions{Options: opts, Describe: true})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, i := range infos {
		if i.Name == "echo" {
			found = true
			if i.Kind != shared.KindLLM || i.Version != "0.0.1" || i.Source != SourcePluginDir || i.Path != filepath.Join(dir, "engine-plugin-echo") || i.Error != "" {
				t.Errorf("echo listed as %+v", i)
			}
		}
	}
	if !found {
		t.Fatalf("echo not listed: %+v", infos)
	}
}

func TestPluginCrashMidCall(t *testing.T) {
	dir := externalDir(t, map[string]string{"crashy": "crash"})
	opts, _ := testOptions(t, dir)
	ctx := context.Background()
	m, err := OpenModel(ctx, "crashy", ModelOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	pid := m.Pid()
	_, err = m.Complete(ctx, engine.ModelRequest{Messages: []engine.Message{{Role: "user", Content: "boom"}}})
	if !errors.Is(err, ErrPluginDied) {
		t.Fatalf("err = %v, want ErrPluginDied", err)
	}
	if !strings.Contains(err.Error(), `llm plugin "crashy"`) || !strings.Contains(err.Error(), "died mid-call") {
		t.Fatalf("error does not say what died: %v", err)
	}
	waitGone(t, pid)
	start := time.Now()
	_, err = m.Complete(ctx, engine.ModelRequest{})
	// Known dead: the call fails at once instead of waiting for a timeout
	// (the bound is far below the default call timeout, far above a
	// loaded machine's scheduling noise).
	if !errors.Is(err, ErrPluginDied) || time.Since(start) > 10*time.Second {
		t.Fatalf("call after the crash: err = %v after %v", err, time.Since(start))
	}
	// The host carries on: another plugin starts fine.
	m2, err := OpenModel(ctx, "scripted", ModelOptions{Options: opts, RulesFile: writeRules(t, `{"rules":[{"text":"ok"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	m2.Close()
}

func TestPluginHangTimesOutAndIsKilled(t *testing.T) {
	dir := externalDir(t, map[string]string{"hangs": "hang"})
	opts, _ := testOptions(t, dir)
	opts.CallTimeout = 300 * time.Millisecond
	ctx := context.Background()
	m, err := OpenModel(ctx, "hangs", ModelOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	pid := m.Pid()
	start := time.Now()
	_, err = m.Complete(ctx, engine.ModelRequest{Messages: []engine.Message{{Role: "user", Content: "wait"}}})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "timed out after 300ms; the plugin was killed") {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("timeout took %v", d)
	}
	waitGone(t, pid)
}

func TestPluginContextCancellation(t *testing.T) {
	dir := externalDir(t, map[string]string{"hangs": "hang"})
	opts, _ := testOptions(t, dir)
	m, err := OpenModel(context.Background(), "hangs", ModelOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = m.Complete(ctx, engine.ModelRequest{})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want the caller's context error", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("cancellation took %v", d)
	}
}

func TestPluginVersionMismatch(t *testing.T) {
	dir := externalDir(t, map[string]string{"future": "version2"})
	opts, _ := testOptions(t, dir)
	_, err := OpenModel(context.Background(), "future", ModelOptions{Options: opts})
	if !errors.Is(err, ErrVersionMismatch) {
		t.Fatalf("err = %v, want ErrVersionMismatch", err)
	}
	if !strings.Contains(err.Error(), "plugin speaks protocol version 2, this engine speaks version 1") {
		t.Fatalf("error does not name both versions: %v", err)
	}
}

func TestPluginHandshakeGarbage(t *testing.T) {
	dir := externalDir(t, map[string]string{"junk": "garbage"})
	opts, _ := testOptions(t, dir)
	// Garbage on stdout fails the handshake as soon as it is read, long
	// before this start timeout.
	opts.StartTimeout = 60 * time.Second
	start := time.Now()
	_, err := OpenModel(context.Background(), "junk", ModelOptions{Options: opts})
	if err == nil || !strings.Contains(err.Error(), "handshake failed") || !strings.Contains(err.Error(), "hello, I am not a plugin") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("handshake failure took %v", d)
	}
}

func TestPluginWrongKind(t *testing.T) {
	dir := externalDir(t, map[string]string{"echo": "echo", "liar": "badkind"})
	opts, _ := testOptions(t, dir)
	_, err := OpenBrowser(context.Background(), "echo", BrowserOptions{Options: opts})
	if err == nil || !strings.Contains(err.Error(), "does not serve the Browser service") {
		t.Fatalf("err = %v", err)
	}
	_, err = OpenModel(context.Background(), "liar", ModelOptions{Options: opts})
	if err == nil || !strings.Contains(err.Error(), `is a "browser" plugin, not a llm plugin`) {
		t.Fatalf("err = %v", err)
	}
}

func TestPluginChecksum(t *testing.T) {
	dir := externalDir(t, map[string]string{"echo": "echo"})
	opts, _ := testOptions(t, dir)
	bin := filepath.Join(dir, "engine-plugin-echo")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	sums := filepath.Join(t.TempDir(), "SHA256SUMS")

	write := func(content string) {
		if err := os.WriteFile(sums, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts.Checksums = sums

	write(hex.EncodeToString(sum[:]) + "  engine-plugin-echo\n")
	m, err := OpenModel(context.Background(), "echo", ModelOptions{Options: opts})
	if err != nil {
		t.Fatalf("pinned and matching: %v", err)
	}
	m.Close()

	bad := sha256.Sum256([]byte("something else"))
	write("# pinned\n" + hex.EncodeToString(bad[:]) + " *" + bin + "\n")
	_, err = OpenModel(context.Background(), "echo", ModelOptions{Options: opts})
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "does not match the pinned checksum") {
		t.Fatalf("mismatch: err = %v", err)
	}

	write(hex.EncodeToString(sum[:]) + "  engine-plugin-other\n")
	_, err = OpenModel(context.Background(), "echo", ModelOptions{Options: opts})
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "not pinned") {
		t.Fatalf("unlisted: err = %v", err)
	}

	// Built-ins are part of the engine binary and need no entry.
	m, err = OpenModel(context.Background(), "scripted", ModelOptions{Options: opts, RulesFile: writeRules(t, `{"rules":[{"text":"ok"}]}`)})
	if err != nil {
		t.Fatalf("built-in with a checksum file: %v", err)
	}
	m.Close()
}

func TestPluginBrowserCrashAndActionErrors(t *testing.T) {
	dir := externalDir(t, map[string]string{"tb": "browser"})
	opts, _ := testOptions(t, dir)
	ctx := context.Background()
	b, err := OpenBrowser(ctx, "tb", BrowserOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = b.Navigate(ctx, "ftp://nowhere")
	if ae, ok := engine.AsActionError(err); !ok || ae.Code != engine.CodeNavigation || ae.Message != "cannot load ftp://nowhere" {
		t.Fatalf("navigate: err = %#v", err)
	}
	if err := b.Navigate(ctx, "http://x.test/"); err != nil {
		t.Fatal(err)
	}
	snap, err := b.Snapshot(ctx)
	if err != nil || snap.URL != "http://x.test/" || len(snap.Elements) != 1 || snap.Elements[0].Ref != "e1" {
		t.Fatalf("snapshot = %+v, %v", snap, err)
	}
	err = b.Act(ctx, engine.Action{Kind: engine.ActClick, Ref: "e9"})
	if ae, ok := engine.AsActionError(err); !ok || ae.Code != engine.CodeStaleRef || ae.Message != "stale ref e9" {
		t.Fatalf("act: err = %#v", err)
	}
	pid := b.Pid()
	err = b.Act(ctx, engine.Action{Kind: engine.ActClick, Ref: "e1", Value: "crash"})
	if !errors.Is(err, ErrPluginDied) {
		t.Fatalf("crash: err = %v", err)
	}
	waitGone(t, pid)
	if err := b.Close(); err != nil {
		t.Fatalf("Close after a crash: %v", err)
	}
}

// scriptDir makes a plugin dir with one engine-plugin-NAME shell script.
func scriptDir(t *testing.T, name, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ExternalPrefix+name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readPid waits for a plugin script to write a child's pid into path.
func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A plugin that starts a child and then never handshakes: the start times
// out, and the engine neither waits for the child (which holds the plugin's
// stdout and stderr open) nor leaves it running.
func TestPluginChildNeverHandshakes(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"hangs", "sleep 300 &\necho $! > \"$PIDFILE\"\necho 'starting up' >&2\nsleep 300\n", "no handshake within"},
		{"junk", "sleep 300 &\necho $! > \"$PIDFILE\"\necho 'hello, I am not a plugin'\nsleep 300\n", "hello, I am not a plugin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "child.pid")
			t.Setenv("PIDFILE", pidFile)
			opts, _ := testOptions(t, scriptDir(t, tc.name, tc.body))
			opts.StartTimeout = time.Second
			start := time.Now()
			_, err := OpenModel(context.Background(), tc.name, ModelOptions{Options: opts})
			if err == nil || !strings.Contains(err.Error(), "handshake failed") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v", err)
			}
			// The child sleeps 300 s: returning long before means nobody
			// waited for it.
			if d := time.Since(start); d > 60*time.Second {
				t.Fatalf("OpenModel returned after %v", d)
			}
			waitGone(t, readPid(t, pidFile))
		})
	}
}

// A plugin that exits at start says why: its own stderr is in the error.
func TestPluginExitAtStartQuotesStderr(t *testing.T) {
	dir := scriptDir(t, "broken", "echo 'error while loading shared libraries: libfoo.so.1' >&2\nexit 127\n")
	opts, _ := testOptions(t, dir)
	_, err := OpenModel(context.Background(), "broken", ModelOptions{Options: opts})
	if err == nil || !strings.Contains(err.Error(), "exited at start") || !strings.Contains(err.Error(), "libfoo.so.1") {
		t.Fatalf("err = %v", err)
	}
}

// Closing a plugin ends what it left running in its process group.
func TestPluginCloseKillsItsChildren(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	t.Setenv("PIDFILE", pidFile)
	dir := scriptDir(t, "parent", fmt.Sprintf("sleep 300 >/dev/null 2>&1 &\necho $! > \"$PIDFILE\"\n%s=echo exec %q \"$@\"\n", testplugin.Env, self))
	opts, _ := testOptions(t, dir)
	m, err := OpenModel(context.Background(), "parent", ModelOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	child := readPid(t, pidFile)
	if !alive(child) {
		t.Fatal("the plugin's child is not running")
	}
	m.Close()
	waitGone(t, child)
}
