package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engine-dev/engine/engine/api"
)

// ServeStdio serves MCP on r and w (a host that spawned this process: its
// stdin and stdout) until r ends, which is how a host stops its server, or
// ctx does. Every request read before r ended is answered first: a client
// that writes its requests and closes its end gets all its answers.
func ServeStdio(ctx context.Context, c *api.Client, opts Options, r io.Reader, w io.Writer) error {
	p := &pending{}
	p.cond = sync.NewCond(&p.mu)
	in := &countingReader{r: r, p: p}
	out := &countingWriter{w: w, p: p}
	stop := context.AfterFunc(ctx, p.wake)
	defer stop()
	err := New(c, opts).Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: out})
	if err != nil && ctx.Err() == nil && (errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed)) {
		return nil
	}
	return err
}

// pending counts the requests read and the answers written.
type pending struct {
	mu                 sync.Mutex
	cond               *sync.Cond
	requests, answered int
	woken              bool
}

func (p *pending) add(requests, answered int) {
	p.mu.Lock()
	p.requests += requests
	p.answered += answered
	p.mu.Unlock()
	p.cond.Broadcast()
}

func (p *pending) wake() {
	p.mu.Lock()
	p.woken = true
	p.mu.Unlock()
	p.cond.Broadcast()
}

// drain waits until every request read has its answer, or until nothing
// more can be answered (ctx ended, stdout failed).
func (p *pending) drain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.answered < p.requests && !p.woken {
		p.cond.Wait()
	}
}

// message is what counting needs of a JSON-RPC message: a request has an
// id and a method, an answer an id and no method.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// lines splits what is written into it into newline-delimited messages and
// counts the requests (or answers) among them.
type lines struct {
	buf []byte
}

// count returns the requests and the answers among the messages that b
// completes. A cancelled request counts as answered: it may get none.
func (l *lines) count(b []byte) (requests, answers int) {
	l.buf = append(l.buf, b...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return requests, answers
		}
		var m message
		if json.Unmarshal(l.buf[:i], &m) == nil {
			switch {
			case m.Method == "notifications/cancelled":
				answers++
			case len(m.ID) == 0 || string(m.ID) == "null":
			case m.Method != "":
				requests++
			default:
				answers++
			}
		}
		l.buf = l.buf[i+1:]
	}
}

// countingReader is stdin: at its end it waits for the answers of the
// requests it gave before it says so.
type countingReader struct {
	r io.Reader
	p *pending
	l lines
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if n > 0 {
		c.p.add(c.l.count(b[:n]))
	}
	if err == io.EOF {
		c.p.drain()
	}
	return n, err
}

// countingWriter is stdout, counting the answers written.
type countingWriter struct {
	w  io.Writer
	p  *pending
	mu sync.Mutex
	l  lines
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	if err != nil {
		c.p.wake() // nothing more can be answered: stop waiting for it
	}
	c.mu.Lock()
	_, a := c.l.count(b[:n])
	c.mu.Unlock()
	c.p.add(0, a)
	return n, err
}

func (c *countingWriter) Close() error { return nil }
