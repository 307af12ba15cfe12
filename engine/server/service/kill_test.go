package service_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/server/service"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger"
)

// kvHandler writes one key per POST /put?k=K and answers 200 only once the
// write has committed; GET /get?k=K reads it back. GET /block never answers
// (it calls blocked, then waits for the client to go).
func kvHandler(db kv.Store, blocked func()) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := []byte("k/" + r.URL.Query().Get("k"))
		switch {
		case r.Method == "POST" && r.URL.Path == "/put":
			err := db.Update(r.Context(), func(tx kv.Txn) error { return tx.Set(key, []byte("v"), 0) })
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			io.WriteString(w, "ok")
		case r.URL.Path == "/get":
			if _, err := kv.Get(r.Context(), db, key); err != nil {
				http.Error(w, err.Error(), 404)
				return
			}
			io.WriteString(w, "v")
		case r.URL.Path == "/block":
			blocked()
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	})
}

// The child of TestKilledServerLosesNoAcknowledgedWrite: a memory server
// over a real badger store, killed by its parent.
func killChild() {
	dir := os.Getenv("SERVICE_KILL_DIR")
	ctx := context.Background()
	db, err := badger.Open(ctx, filepath.Join(dir, "db"), badger.Options{LockTimeout: 10 * time.Second, GCInterval: -1})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	var once sync.Once
	h := kvHandler(db, func() { once.Do(func() { fmt.Println("blocked") }) })
	s, err := service.Open(ctx, dir, h, service.Options{})
	if err != nil {
		fmt.Println("serve:", err)
		os.Exit(3)
	}
	fmt.Println("ready")
	s.Serve(ctx)
	os.Exit(4) // never: the parent kills us
}

// A server SIGKILLed while clients write through it: every write it
// acknowledged is in the store when a new server opens the data dir
// (replacing the stale socket), and every client, including one blocked on
// a request the server never answered, gets a "went away" error at once.
func TestKilledServerLosesNoAcknowledgedWrite(t *testing.T) {
	if os.Getenv("SERVICE_KILL_DIR") != "" {
		killChild()
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledServerLosesNoAcknowledgedWrite$")
	cmd.Env = append(os.Environ(), "SERVICE_KILL_DIR="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(want string) {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok || l != want {
				t.Fatalf("child said %q (open: %v), want %q", l, ok, want)
			}
		case <-time.After(deadline):
			t.Fatalf("child did not say %q", want)
		}
	}
	expect("ready")

	c, err := service.Dial(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()

	// One client blocks on a request the server never answers.
	blockedErr := make(chan error, 1)
	go func() {
		resp, err := c.HTTP.Get(c.BaseURL + "/block")
		if err == nil {
			resp.Body.Close()
		}
		blockedErr <- err
	}()
	expect("blocked")

	// Writers POST keys as fast as they are acknowledged.
	const writers, killAfter = 4, 60
	var (
		mu       sync.Mutex
		acked    []string
		enough   = make(chan struct{})
		wg       sync.WaitGroup
		failures = make(chan error, writers)
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				k := fmt.Sprintf("%d-%d", w, i)
				resp, err := c.HTTP.Post(c.BaseURL+"/put?k="+k, "text/plain", nil)
				if err != nil {
					failures <- err
					return
				}
				body, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				if rerr != nil || resp.StatusCode != 200 || string(body) != "ok" {
					// An answer cut short by the kill is not an
					// acknowledgement.
					failures <- fmt.Errorf("put %s: %d %q %w", k, resp.StatusCode, body, rerr)
					return
				}
				mu.Lock()
				acked = append(acked, k)
				if len(acked) == killAfter {
					close(enough)
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-enough:
	case <-time.After(deadline):
		t.Fatal("the server acknowledged too few writes")
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	killed = true
	killedAt := time.Now()
	cmd.Wait()

	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()
	select {
	case <-writersDone:
	case <-time.After(deadline):
		t.Fatal("a writer hangs on the killed server")
	}
	close(failures)
	for err := range failures {
		if !errors.Is(err, service.ErrServerGone) || !strings.Contains(err.Error(), "went away") {
			t.Errorf("writer: %v, want a went-away error", err)
		}
	}
	select {
	case err := <-blockedErr:
		if !errors.Is(err, service.ErrServerGone) || !strings.Contains(err.Error(), service.SocketPath(dir)) {
			t.Errorf("blocked client: %v, want a went-away error naming the socket", err)
		}
	case <-time.After(deadline):
		t.Fatal("the client blocked on the killed server hangs")
	}
	t.Logf("%d writes acknowledged; clients failed %v after the kill", len(acked), time.Since(killedAt))

	// Nobody serves the data dir now: the socket is stale.
	if _, err := service.Dial(context.Background(), dir); !errors.Is(err, service.ErrNotServed) {
		t.Fatalf("Dial after the kill: %v", err)
	}

	// A new server on the same data dir replaces the stale socket and holds
	// every acknowledged write.
	db, err := badger.Open(context.Background(), filepath.Join(dir, "db"), badger.Options{LockTimeout: deadline, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var log logBuf
	r := serve(t, dir, kvHandler(db, func() {}), service.Options{Logger: log.logger()})
	c2 := dial(t, dir)
	mu.Lock()
	defer mu.Unlock()
	for _, k := range acked {
		if code, _ := get(t, c2, "/get?k="+k); code != 200 {
			t.Errorf("acknowledged write %s lost: %d", k, code)
		}
	}
	if !strings.Contains(log.String(), "replacing stale socket") {
		t.Errorf("log: %s", log.String())
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}
