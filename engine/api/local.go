package api

import (
	"net/http"

	"github.com/engine-dev/engine/engine/api/internal/inproc"
)

// Local serves h in this process and returns a client of it, so a command
// that holds the data dir itself goes through exactly the requests,
// handlers and errors it would send a server. Its transport calls h
// directly, with no connection in between: each request is served in a
// goroutine of its own, as a server would, and its response is handed
// back when the handler has finished or its output no longer fits a
// server's write buffer (or it flushes), so a streamed answer streams.
// Close stops it.
func Local(h http.Handler, opts ClientOptions) *LocalClient {
	tr := inproc.New(h)
	return &LocalClient{
		Client: NewClient(&http.Client{Transport: tr}, "http://engine", opts),
		tr:     tr,
	}
}

// LocalClient is a Client of a handler in this process.
type LocalClient struct {
	*Client
	tr *inproc.Transport
}

// RoundTripper is the client's transport, for a caller that routes
// requests itself (engine/server/attach).
func (c *LocalClient) RoundTripper() http.RoundTripper { return c.tr }

// Close stops serving: requests in flight are cut off (their contexts
// cancelled, their bodies closed, their answers' writes failing, as when a
// server closes its connections) and Close returns once their handlers
// have; later requests fail with net.ErrClosed.
func (c *LocalClient) Close() error {
	c.tr.Close()
	return nil
}
