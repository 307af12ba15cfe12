package inproc_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/api/internal/inproc"
)

// localDo sends one request through a Transport to h.
func localDo(t *testing.T, h http.Handler, req *http.Request) (*http.Response, *inproc.Transport) {
	t.Helper()
	tr := inproc.New(h)
	t.Cleanup(tr.Close)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, tr
}

// A small answer comes whole, as a server sends it: status, header, a
// Content-Length, the body; the handler sees a server's request (path and
// query only, the body's length, no Host header).
func TestLocalWholeAnswer(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		if r.URL.String() != "/v1/x?a=1" || r.RequestURI != "/v1/x?a=1" || r.Host != "engine" || r.ContentLength != 5 ||
			r.Header.Get("Host") != "" || r.Header.Get("Engine-Run") != "r1" || string(b) != "hello" {
			t.Errorf("handler saw %s %s (URI %s, host %s, length %d, header %v, body %q)", r.Method, r.URL, r.RequestURI, r.Host, r.ContentLength, r.Header, b)
		}
		w.Header().Set("X-A", "b")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "short")
		w.Header().Set("X-Late", "not sent") // after the header: not part of the answer
	})
	req, _ := http.NewRequest(http.MethodPost, "http://engine/v1/x?a=1", strings.NewReader("hello"))
	req.Header.Set("Engine-Run", "r1")
	resp, _ := localDo(t, h, req)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != "short" || resp.StatusCode != http.StatusTeapot || resp.Status != "418 I'm a teapot" ||
		resp.ContentLength != 5 || resp.Header.Get("X-A") != "b" || resp.Header.Get("X-Late") != "" ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("got %s %v length %d body %q (%v)", resp.Status, resp.Header, resp.ContentLength, b, err)
	}
}

// An answer larger than a server's buffer, or flushed, is handed over
// before the handler ends and streams; its trailers come at its end.
func TestLocalStreamsAndTrailers(t *testing.T) {
	line := strings.Repeat("x", 100) + "\n"
	next := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "Engine-Events")
		w.Header().Set("Content-Type", "application/jsonl")
		io.WriteString(w, line)
		w.(http.Flusher).Flush()
		<-next // the client has the response and the first line
		for range 100 {
			io.WriteString(w, line) // past the buffer: streams
		}
		w.Header().Set("Engine-Events", `[{"event":"done"}]`)
	})
	req, _ := http.NewRequest(http.MethodGet, "http://engine/v1/stream", nil)
	resp, _ := localDo(t, h, req)
	defer resp.Body.Close()
	if _, ok := resp.Trailer["Engine-Events"]; !ok || resp.Header.Get("Trailer") != "" || resp.ContentLength != -1 {
		t.Errorf("header %v, trailer %v, length %d", resp.Header, resp.Trailer, resp.ContentLength)
	}
	first := make([]byte, len(line))
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != line {
		t.Fatalf("first line %q: %v", first, err)
	}
	close(next)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || len(rest) != 100*len(line) {
		t.Fatalf("read %d bytes: %v", len(rest), err)
	}
	if got := resp.Trailer.Get("Engine-Events"); got != `[{"event":"done"}]` {
		t.Errorf("trailer %q", got)
	}
}

// A request cancelled while its answer streams: the handler's context is
// cancelled, its writes fail, and the client reads the context's error, as
// over a connection.
func TestLocalCancelCutsTheHandlerOff(t *testing.T) {
	done := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("y"), 4096)
		for {
			if _, err := w.Write(chunk); err != nil {
				<-r.Context().Done()
				done <- err
				return
			}
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://engine/v1/export", nil)
	resp, _ := localDo(t, h, req)
	if _, err := io.CopyN(io.Discard, resp.Body, 64<<10); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := io.Copy(io.Discard, resp.Body); !errors.Is(err, context.Canceled) {
		t.Errorf("reading on after the cancel: %v, want context.Canceled", err)
	}
	resp.Body.Close()
	if err := <-done; err == nil {
		t.Error("the handler's write did not fail")
	}
}

// Closing an answer before its end cuts the handler off too.
func TestLocalBodyCloseCutsTheHandlerOff(t *testing.T) {
	done := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for {
			if _, err := w.Write(make([]byte, 4096)); err != nil {
				<-r.Context().Done()
				done <- err
				return
			}
		}
	})
	req, _ := http.NewRequest(http.MethodGet, "http://engine/v1/export", nil)
	resp, _ := localDo(t, h, req)
	if _, err := io.CopyN(io.Discard, resp.Body, 16<<10); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := <-done; err == nil {
		t.Error("the handler's write did not fail")
	}
}

// Close cuts off the requests in flight (their handlers return before it
// does) and refuses later ones.
func TestLocalCloseCutsOffRequestsInFlight(t *testing.T) {
	started, returned := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(returned)
		close(started)
		io.ReadAll(r.Body) // the client never ends the body: Close must cut it
		<-r.Context().Done()
	})
	tr := inproc.New(h)
	pr, pw := io.Pipe()
	defer pw.Close()
	req, _ := http.NewRequest(http.MethodPost, "http://engine/v1/import", pr)
	errc := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-started
	tr.Close()
	select {
	case <-returned:
	default:
		t.Error("Close returned before the handler in flight")
	}
	if err := <-errc; err == nil {
		t.Error("the request cut off by Close succeeded")
	}
	_, err := (&http.Client{Transport: tr}).Get("http://engine/v1/health")
	if !errors.Is(err, net.ErrClosed) {
		t.Errorf("a request after Close: %v, want net.ErrClosed", err)
	}
}

// A request body is read at most to its Content-Length.
func TestLocalBodyLimits(t *testing.T) {
	var got []byte
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, _ = io.ReadAll(r.Body) })
	req, _ := http.NewRequest(http.MethodPost, "http://engine/v1/x", strings.NewReader("0123456789"))
	req.ContentLength = 4
	resp, _ := localDo(t, h, req)
	resp.Body.Close()
	if string(got) != "0123" {
		t.Errorf("the handler read %q of a body of Content-Length 4", got)
	}
}

// A handler that panics fails its request; the transport goes on serving.
func TestLocalHandlerPanic(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/panic" {
			panic(http.ErrAbortHandler)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	tr := inproc.New(h)
	defer tr.Close()
	hc := &http.Client{Transport: tr}
	if resp, err := hc.Get("http://engine/v1/panic"); err == nil {
		resp.Body.Close()
		t.Errorf("a panicking handler answered %s", resp.Status)
	}
	resp, err := hc.Get("http://engine/v1/ok")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("%s, want 204", resp.Status)
	}
}
