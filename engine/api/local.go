package api

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// Local serves h in this process and returns a client of it: real HTTP
// over in-memory connections, so a command that holds the data dir itself
// goes through exactly the requests, handlers and errors it would send a
// server. Close stops the server.
func Local(h http.Handler, opts ClientOptions) *LocalClient {
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			client, server := net.Pipe()
			select {
			case l.conns <- server:
				return client, nil
			case <-l.done:
				return nil, net.ErrClosed
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		MaxIdleConnsPerHost: 4,
	}
	return &LocalClient{
		Client: NewClient(&http.Client{Transport: tr}, "http://engine", opts),
		srv:    srv, tr: tr,
	}
}

// LocalClient is a Client of a handler in this process.
type LocalClient struct {
	*Client
	srv *http.Server
	tr  *http.Transport
}

// RoundTripper is the client's transport, for a caller that routes
// requests itself (engine/attach).
func (c *LocalClient) RoundTripper() http.RoundTripper { return c.tr }

// Close stops the in-process server (requests in flight are cut off).
func (c *LocalClient) Close() error {
	c.tr.CloseIdleConnections()
	return c.srv.Close()
}

// pipeListener hands the server side of in-memory connections to
// http.Server.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "engine" }
