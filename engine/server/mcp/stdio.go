package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engine-dev/engine/engine/api"
)

// ServeStdio serves MCP on r and w (a host that spawned this process: its
// stdin and stdout) until r ends, which is how a host stops its server, or
// ctx does. Every request read before r ended is answered first: a client
// that writes its requests and closes its end gets all its answers.
//
// Messages are one a line (the MCP stdio transport). A line that is not
// JSON is answered with a JSON-RPC parse error (-32700), and one that is
// JSON but no JSON-RPC message (or a batch, or longer than the SDK's
// sdk.DefaultMaxLineLength) with an invalid request error (-32600); either
// way serving goes on, and calls in flight are answered. (The SDK's stdio
// transport ends the session on the first such line.)
func ServeStdio(ctx context.Context, c *api.Client, opts Options, r io.Reader, w io.Writer) error {
	p := &pending{}
	p.cond = sync.NewCond(&p.mu)
	lw := &lockedWriter{w: w}
	in := &countingReader{r: newLineFilter(r, lw, sdk.DefaultMaxLineLength), p: p}
	out := &countingWriter{w: lw, p: p}
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

// lockedWriter is stdout shared by the SDK's answers and lineFilter's: the
// SDK writes each message, newline included, in one Write, so writes are
// whole lines that do not interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// lineFilter is stdin as the SDK reads it: only lines that hold one
// JSON-RPC message pass; every other non-blank line is answered on out
// with a JSON-RPC error and dropped, so the SDK, which ends the session on
// anything it cannot decode, never sees it.
type lineFilter struct {
	br      *bufio.Reader
	out     io.Writer
	max     int    // the longest line passed
	pending []byte // a line passed, not yet read
	err     error  // stdin's error, returned once pending is read
}

func newLineFilter(r io.Reader, out io.Writer, max int) *lineFilter {
	return &lineFilter{br: bufio.NewReaderSize(r, 64<<10), out: out, max: max}
}

func (f *lineFilter) Read(b []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, long, err := f.readLine()
		f.err = err
		if long {
			f.answer(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message longer than %d bytes", f.max))
			continue
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 && f.check(line) {
			f.pending = append(line, '\n')
		}
	}
	n := copy(b, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// readLine reads the next line, without its newline; long says it was
// over max bytes (then it is read to its end and dropped).
func (f *lineFilter) readLine() (line []byte, long bool, err error) {
	for {
		chunk, err := f.br.ReadSlice('\n')
		if !long {
			if len(line)+len(chunk) > f.max+2 { // "\r\n" aside
				long, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), long, err
	}
}

// check reports whether line is one JSON-RPC message, and answers it with
// the error it is otherwise.
func (f *lineFilter) check(line []byte) bool {
	if !json.Valid(line) {
		f.answer(nil, jsonrpc.CodeParseError, "parse error: the line is not one JSON value")
		return false
	}
	if line[0] == '[' {
		f.answer(nil, jsonrpc.CodeInvalidRequest, "batches are not served: send one message a line")
		return false
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		f.answer(idOf(line), jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return false
	}
	return true
}

// idOf is the id of a message that is not valid otherwise, when it is one
// a JSON-RPC id can be (a string or a number); nil otherwise.
func idOf(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return m.ID
	}
	return nil
}

// answer writes a JSON-RPC error answer for id (nil: null). A failure to
// write is the SDK's to find on its next write.
func (f *lineFilter) answer(id json.RawMessage, code int64, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}})
	f.out.Write(append(b, '\n'))
}
