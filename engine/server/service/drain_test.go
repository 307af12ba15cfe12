package service_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/server/service"
)

// heldBody is a request body the client's transport can only read once
// the handler has answered, as a body written after the headers meets a
// handler that refuses the request from its headers alone.
type heldBody struct {
	answered <-chan struct{}
	r        io.Reader
	waited   bool
}

func (b *heldBody) Read(p []byte) (int, error) {
	if !b.waited {
		<-b.answered
		b.waited = true
	}
	return b.r.Read(p)
}

// A handler that answers without reading the request body (a refusal
// from the headers: an unknown namespace, a missing token) is answered to
// a client that sends its body after its headers and asked to close the
// connection, as the unix-socket client does: the server reads the body
// first, so the client gets the answer, not "broken pipe" writing it.
func TestAnswerWithoutReadingTheBody(t *testing.T) {
	dir := t.TempDir()
	answered := make(chan struct{}, 1)
	refuse := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such namespace", http.StatusNotFound)
		answered <- struct{}{}
	})
	serve(t, dir, refuse, service.Options{})
	c := dial(t, dir)
	for i := range 20 {
		body := `{"lesson": "typo"}`
		req, err := http.NewRequest("POST", c.BaseURL+"/v1/lessons", &heldBody{answered: answered, r: strings.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = int64(len(body))
		resp, err := c.HTTP.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v; want the handler's 404", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), "no such namespace") {
			t.Fatalf("request %d: %d %q; want the handler's 404", i, resp.StatusCode, b)
		}
	}
}

// On a connection the client keeps, a request answered without reading
// its body leaves the next request on that connection whole: its context
// is live and it is answered.
func TestKeptConnectionAfterAnUnreadBody(t *testing.T) {
	dir := t.TempDir()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/refuse" {
			http.Error(w, "refused", http.StatusForbidden)
			return
		}
		if err := r.Context().Err(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	})
	srv := serve(t, dir, h, service.Options{})
	c, err := net.Dial("unix", srv.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i, want := range []string{"403 refused", "200 ok", "403 refused", "200 ok"} {
		path := "/refuse"
		if i%2 == 1 {
			path = "/next"
		}
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: engine\r\nContent-Type: application/json\r\nContent-Length: 18\r\n\r\n{\"lesson\": \"typo\"}", path)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d (%s): %v", i, path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b))); got != want {
			t.Fatalf("request %d (%s) on one connection: %q, want %q", i, path, got, want)
		}
	}
}
