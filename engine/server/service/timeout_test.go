package service_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/server/service"
)

// stalling serves a handler that calls before, then blocks until the
// request ends or the test does: a server that stopped answering.
func stalling(t *testing.T, listen string, before func(w http.ResponseWriter, r *http.Request)) (*running, string) {
	t.Helper()
	release := make(chan struct{})
	dir := t.TempDir()
	r := serve(t, dir, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		before(w, r)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), service.Options{Listen: listen})
	t.Cleanup(func() { close(release) }) // before the server stops (cleanups run last first)
	return r, dir
}

// wantTimeout fails unless err is the *TimeoutError of a request to
// server.
func wantTimeout(t *testing.T, err error, server, method, path string, d time.Duration) {
	t.Helper()
	var te *service.TimeoutError
	if !errors.As(err, &te) || te.Server != server || te.Method != method || te.Path != path || te.Timeout != d {
		t.Fatalf("got %v (%T), want a timeout of %s %s on %s", err, err, method, path, server)
	}
	if want := "memory server at " + server + " did not answer " + method + " " + path + " within " + d.String(); err.Error() != want && !strings.HasSuffix(err.Error(), ": "+want) {
		t.Fatalf("message %q, want it to end with %q", err.Error(), want)
	}
}

// A server that never answers, on the socket and on TCP: the request fails
// with a *TimeoutError naming the server, where without a timeout it
// would wait for as long as the server is silent.
func TestTimeoutSilentServer(t *testing.T) {
	const d = 300 * time.Millisecond
	r, dir := stalling(t, "127.0.0.1:0", func(http.ResponseWriter, *http.Request) {})
	unix := dial(t, dir).WithTimeout(d)
	_, err := unix.HTTP.Get(unix.BaseURL + "/v1/lessons")
	wantTimeout(t, err, r.SocketPath(), "GET", "/v1/lessons", d)

	remote, err := service.DialRemote("http://"+r.Addr().String(), r.Token())
	if err != nil {
		t.Fatal(err)
	}
	defer remote.CloseIdleConnections()
	remote = remote.WithTimeout(d)
	_, err = remote.HTTP.Get(remote.BaseURL + "/v1/health")
	wantTimeout(t, err, "http://"+r.Addr().String(), "GET", "/v1/health", d)
}

// A response that stalls part way: the bytes that came are read, then the
// read that waits for more fails with a *TimeoutError.
func TestTimeoutStalledBody(t *testing.T) {
	const d = 300 * time.Millisecond
	r, dir := stalling(t, "", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "first part\n")
		w.(http.Flusher).Flush()
	})
	c := dial(t, dir).WithTimeout(d)
	resp, err := c.HTTP.Get(c.BaseURL + "/v1/export")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if string(b) != "first part\n" {
		t.Fatalf("read %q before the stall", b)
	}
	wantTimeout(t, err, r.SocketPath(), "GET", "/v1/export", d)
}

// An upload the server stops reading (the socket's buffers fill, so the
// request is never all sent) fails with a *TimeoutError.
func TestTimeoutUploadNotRead(t *testing.T) {
	const d = 300 * time.Millisecond
	r, dir := stalling(t, "", func(http.ResponseWriter, *http.Request) {})
	c := dial(t, dir).WithTimeout(d)
	_, err := c.HTTP.Post(c.BaseURL+"/v1/import", "application/json", bytes.NewReader(make([]byte, 32<<20)))
	wantTimeout(t, err, r.SocketPath(), "POST", "/v1/import", d)
}

// slowSource is a request body whose bytes come after a pause: a caller
// reading its upload from a slow pipe.
type slowSource struct {
	pause time.Duration
	r     io.Reader
	slept bool
}

func (s *slowSource) Read(p []byte) (int, error) {
	if !s.slept {
		s.slept = true
		time.Sleep(s.pause)
	}
	return s.r.Read(p)
}

// The time the caller takes (a slow upload source, a pause between reads
// of a response) is not the server's silence: a request whose caller is
// slower than the timeout, with a server that answers at once, succeeds.
func TestTimeoutCountsOnlyTheServer(t *testing.T) {
	// The server's own share (an echo) must stay inside d on a loaded
	// machine under -race; the caller's pauses exceed it by half.
	const d = 2 * time.Second
	const pause = d + d/2
	dir := t.TempDir()
	serve(t, dir, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
		w.(http.Flusher).Flush()
		io.WriteString(w, " and more")
	}), service.Options{})
	c := dial(t, dir).WithTimeout(d)

	req, err := http.NewRequest("POST", c.BaseURL+"/v1/import", &slowSource{pause: pause, r: strings.NewReader("uploaded slowly")})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatalf("an upload from a slow source: %v", err)
	}
	defer resp.Body.Close()
	first := make([]byte, len("uploaded slowly"))
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	time.Sleep(pause) // the caller dwells on what it read
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(first)+string(rest) != "uploaded slowly and more" {
		t.Fatalf("after a pause between reads: %q, %v", string(first)+string(rest), err)
	}
}
