package service_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/server/service"
)

// keptConn is a raw keep-alive connection to a server's socket.
type keptConn struct {
	net.Conn
	br *bufio.Reader
}

func dialKept(t *testing.T, sock string) *keptConn {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &keptConn{Conn: c, br: bufio.NewReader(c)}
}

// send writes one GET of path.
func (k *keptConn) send(t *testing.T, path string) {
	t.Helper()
	if _, err := io.WriteString(k, "GET "+path+" HTTP/1.1\r\nHost: engine\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
}

// answer reads one answer's status and body.
func (k *keptConn) answer() (string, error) {
	k.SetReadDeadline(time.Now().Add(deadline))
	resp, err := http.ReadResponse(k.br, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.Status + " " + string(b), err
}

// With MaxConns 2, two kept-alive connections take both slots: a third
// client's request waits (its connection is not accepted) while the first
// two are served, and is answered as soon as one of them closes.
func TestConnectionCap(t *testing.T) {
	dir := t.TempDir()
	srv := serve(t, dir, hello, service.Options{WatchInterval: -1, MaxConns: 2})
	a, b := dialKept(t, srv.SocketPath()), dialKept(t, srv.SocketPath())
	for _, k := range []*keptConn{a, b} {
		k.send(t, "/held")
		if got, err := k.answer(); err != nil || !strings.Contains(got, "hello /held") {
			t.Fatalf("a connection within the cap: %q, %v", got, err)
		}
	}
	c := dialKept(t, srv.SocketPath()) // the kernel queues it; the server does not take it
	c.send(t, "/third")
	third := make(chan string, 1)
	go func() {
		got, err := c.answer()
		if err != nil {
			got = err.Error()
		}
		third <- got
	}()
	// A full round trip on a served connection: the server is running, and
	// had it taken the third connection it would have answered it too.
	b.send(t, "/again")
	if got, err := b.answer(); err != nil || !strings.Contains(got, "hello /again") {
		t.Fatalf("a served connection at the cap: %q, %v", got, err)
	}
	select {
	case got := <-third:
		t.Fatalf("the connection past the cap was served while two were open: %q", got)
	default:
	}
	a.Close()
	if got := <-third; !strings.Contains(got, "hello /third") {
		t.Fatalf("the waiting connection after one closed: %q", got)
	}
}

// A cap under 1 is refused with the reason.
func TestConnectionCapRefusesNonsense(t *testing.T) {
	_, err := service.Open(t.Context(), t.TempDir(), hello, service.Options{MaxConns: -1})
	if err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Fatalf("MaxConns -1: %v", err)
	}
}
