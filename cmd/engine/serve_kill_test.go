package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/archive"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/server/service"
)

// hang separates "happened" from "hung": never a performance claim.
const hang = 60 * time.Second

// engineCmd is engine-agent (this test binary, which TestMain runs as
// engine-agent when its argv[0] is engine-agent: every engine command,
// serve and mcp included) on dataDir, with no ENGINE_* variable of the
// caller's (no ENGINE_SERVER in particular).
func engineCmd(t testing.TB, dataDir string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := &exec.Cmd{Path: exe, Args: append([]string{"engine-agent"}, args...)}
	for _, v := range os.Environ() {
		if !strings.HasPrefix(v, "ENGINE_") {
			cmd.Env = append(cmd.Env, v)
		}
	}
	cmd.Env = append(cmd.Env, "ENGINE_DATA_DIR="+dataDir)
	return cmd
}

// serveProc is a running `engine serve`, stopped (killed) and waited for
// when the test ends.
type serveProc struct {
	cmd     *exec.Cmd
	serving string // the line saying what it serves
	mu      sync.Mutex
	stderr  bytes.Buffer
	lines   chan string   // stderr, line by line, until it closes
	exited  chan struct{} // closed once Wait returned
	err     error         // Wait's error, set before exited closes
}

// startServe starts `engine serve [args]` on dataDir and waits until it
// says it serves (it prints that once its socket is in place).
func startServe(t *testing.T, dataDir string, args ...string) *serveProc {
	t.Helper()
	return startServeCmd(t, engineCmd(t, dataDir, append([]string{"serve"}, args...)...))
}

// startServeCmd is startServe of a prepared `engine serve` command.
func startServeCmd(t *testing.T, cmd *exec.Cmd) *serveProc {
	t.Helper()
	p := &serveProc{cmd: cmd, lines: make(chan string, 64), exited: make(chan struct{})}
	out, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.mu.Lock()
			p.stderr.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default: // nobody waits for lines any more
			}
		}
	}()
	go func() {
		<-scanned // Wait closes the pipe: read it all first
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.exited
	})
	deadline := time.After(hang)
	for {
		select {
		case l := <-p.lines:
			if strings.HasPrefix(l, "engine: serving ") {
				p.serving = l
				return p
			}
		case <-p.exited:
			t.Fatalf("engine serve exited before serving: %v\n%s", p.err, p.log())
		case <-deadline:
			t.Fatalf("engine serve did not serve within %v\n%s", hang, p.log())
		}
	}
}

func (p *serveProc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// wait waits for the process to end.
func (p *serveProc) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-p.exited:
		return p.err
	case <-time.After(hang):
		t.Fatalf("engine serve did not end\n%s", p.log())
		return nil
	}
}

// exportOf is an export document of n lessons of ~1 KB each.
func exportOf(t *testing.T, prefix string, n int) []byte {
	t.Helper()
	d := archive.Document{Format: archive.Format, Version: archive.Version, ExportedAt: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	// ~1 KB a lesson, split between the text (over 600 characters a lesson
	// is quarantined as not advice) and the error pattern.
	text := strings.Repeat("dismiss the cookie banner before clicking anything under it; ", 9)
	pad := strings.Repeat("x", 420)
	for i := range n {
		d.Lessons = append(d.Lessons, lesson.Lesson{Lesson: fmt.Sprintf("%s(%d)", text, i), Category: lesson.ErrorRecovery,
			FailedCommand: "click", ErrorPattern: fmt.Sprintf("%s %d %s", prefix, i, pad), UseCount: 1,
			CreatedAt: "2026-03-01", LastUsed: "2026-03-01", Source: lesson.SourceLearned, TriggeredDomains: []string{}})
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A real `engine serve` SIGKILLed while clients record lessons through it:
// (a) every client, those blocked on an answer the server never gave
// included, fails at once with a "went away" error; (b) the socket it left
// is stale, so `engine query lessons` opens the data dir itself and lists
// every acknowledged lesson; (c) a new `engine serve` on the data dir
// replaces the stale socket and serves every acknowledged lesson.
func TestServeKilled(t *testing.T) {
	dir := t.TempDir()
	srv := startServe(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*hang)
	defer cancel()
	sc, err := service.Dial(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.CloseIdleConnections()
	c := api.NewClient(sc.HTTP, sc.BaseURL, api.ClientOptions{})

	// ~1 MB of memory, so an export is more than the socket's buffers hold.
	const held = 1000
	if _, err := c.Import(ctx, exportOf(t, "held", held), "held", true); err != nil {
		t.Fatal(err)
	}

	// Writers record new lessons as fast as they are acknowledged.
	const writers, killAfter = 4, 200
	var (
		mu     sync.Mutex
		acked  = map[string]string{} // id → pattern
		enough = make(chan struct{})
		wg     sync.WaitGroup
		failed = make(chan error, writers)
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				pat := fmt.Sprintf("acked %d-%d", w, i)
				r, err := c.RecordLesson(ctx, lesson.Lesson{Lesson: "retry after the spinner", Category: lesson.ErrorRecovery,
					FailedCommand: "fill", ErrorPattern: pat})
				if err != nil {
					failed <- err
					return
				}
				mu.Lock()
				acked[r.Lesson.ID] = pat
				if len(acked) == killAfter {
					close(enough)
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-enough:
	case <-time.After(hang):
		t.Fatalf("the server acknowledged too few writes\n%s", srv.log())
	}

	// Two clients blocked on the server: a reader that stopped reading an
	// export (whose handler now waits to write the rest, holding its share
	// of the handler's lock) and an import (an exclusive route) that waits
	// behind it for an answer that never comes. From then on the writers'
	// requests wait behind the import.
	exp, err := sc.HTTP.Get(sc.BaseURL + "/v1/export")
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Body.Close()
	if exp.StatusCode != http.StatusOK {
		t.Fatalf("export: %s", exp.Status)
	}
	if _, err := io.CopyN(io.Discard, exp.Body, 64<<10); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan struct{})
	blockedErr := make(chan error, 1)
	go func() {
		tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { close(wrote) }})
		_, err := c.Import(tctx, exportOf(t, "blocked", 10), "blocked", true)
		blockedErr <- err
	}()
	select {
	case <-wrote:
	case err := <-blockedErr:
		t.Fatalf("the import was answered while an export held the lock: %v", err)
	case <-time.After(hang):
		t.Fatal("the import was not sent")
	}

	if err := srv.cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	killedAt := time.Now()
	if err := srv.wait(t); err == nil {
		t.Fatal("engine serve exited 0 after SIGKILL")
	}

	// (a) Every client fails, with the server named as gone.
	wantGone := func(who string, err error) {
		t.Helper()
		if !errors.Is(err, service.ErrServerGone) || !strings.Contains(err.Error(), "memory server at "+service.SocketPath(dir)+" went away") {
			t.Errorf("%s: %v, want a went-away error naming the socket", who, err)
		}
	}
	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()
	select {
	case <-writersDone:
	case <-time.After(hang):
		t.Fatal("a writer hangs on the killed server")
	}
	close(failed)
	for err := range failed {
		wantGone("writer", err)
	}
	select {
	case err := <-blockedErr:
		wantGone("the blocked import", err)
	case <-time.After(hang):
		t.Fatal("the import blocked on the killed server hangs")
	}
	_, err = io.Copy(io.Discard, exp.Body)
	wantGone("the export reader", err)
	mu.Lock()
	t.Logf("%d lessons acknowledged; the clients failed %v after the kill", len(acked), time.Since(killedAt))
	mu.Unlock()

	// (b) The socket is still there, and stale: a command opens the data
	// dir itself.
	if fi, err := os.Lstat(service.SocketPath(dir)); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("the killed server's socket: %v %v", fi, err)
	}
	if _, err := service.Dial(ctx, dir); !errors.Is(err, service.ErrNotServed) {
		t.Fatalf("Dial after the kill: %v, want ErrNotServed", err)
	}
	q := engineCmd(t, dir, "query", "lessons", "--json")
	var qerr bytes.Buffer
	q.Stderr = &qerr
	out, err := q.Output()
	if err != nil {
		t.Fatalf("engine query lessons on the killed server's data dir: %v\n%s", err, &qerr)
	}
	var listed []lesson.Lesson
	if err := json.Unmarshal(out, &listed); err != nil {
		t.Fatalf("engine query lessons --json: %v\n%s", err, out)
	}
	byID := map[string]lesson.Lesson{}
	blocked := 0
	for _, l := range listed {
		byID[l.ID] = l
		if strings.HasPrefix(l.ErrorPattern, "blocked ") {
			blocked++
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for id, pat := range acked {
		if l, ok := byID[id]; !ok || l.ErrorPattern != pat {
			t.Errorf("embedded: acknowledged lesson %s (%s) missing", id, pat)
		}
	}
	if blocked != 0 && blocked != 10 {
		t.Errorf("embedded: %d of the blocked import's 10 lessons: half written", blocked)
	}

	// (c) A new server replaces the stale socket and holds every
	// acknowledged lesson.
	srv2 := startServe(t, dir)
	c2 := dialClient(t, ctx, dir)
	served := map[string]bool{}
	heldN := 0
	if _, err := c2.EachLesson(ctx, api.LessonFilter{Category: lesson.ErrorRecovery}, 0, func(l lesson.Lesson) error {
		served[l.ID] = true
		if strings.HasPrefix(l.ErrorPattern, "held ") {
			heldN++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for id, pat := range acked {
		if !served[id] {
			t.Errorf("served: acknowledged lesson %s (%s) missing", id, pat)
		}
	}
	if heldN != held {
		t.Errorf("served: %d of the %d imported lessons", heldN, held)
	}
	if !strings.Contains(srv2.log(), "replacing stale socket") {
		t.Errorf("the new server did not say it replaced the stale socket:\n%s", srv2.log())
	}
	if err := srv2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv2.wait(t); err != nil {
		t.Errorf("engine serve after SIGTERM: %v\n%s", err, srv2.log())
	}
	if _, err := os.Lstat(service.SocketPath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket after a clean stop: %v", err)
	}
}

// dialClient is an API client of dataDir's server.
func dialClient(t *testing.T, ctx context.Context, dataDir string) *api.Client {
	t.Helper()
	sc, err := service.Dial(ctx, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sc.CloseIdleConnections)
	return api.NewClient(sc.HTTP, sc.BaseURL, api.ClientOptions{})
}
