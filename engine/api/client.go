package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api/problem"
	"github.com/engine-dev/engine/engine/event"
)

// Client calls the API. Its methods mirror the routes one to one; errors
// come back as the server's one-line message, marked engine.ErrInvalid
// (400, 413) or engine.ErrNotFound (404) as the server classed them.
type Client struct {
	hc   *http.Client
	base string
	opts ClientOptions
}

// ClientOptions configure a Client.
type ClientOptions struct {
	// Events, when set, receives the memory events each request caused
	// (the CLI's --events).
	Events event.Func
	// Now, when set, fixes the clock of every request (Engine-Now); only a
	// server whose own clock is fixed honours it.
	Now time.Time
	// Provenance says who writes (its Run, Model and Source go in the
	// Engine-Run, Engine-Model and Engine-Source headers): the stores stamp
	// it on what the requests write.
	Provenance engine.Provenance
	// Namespace names the namespace every request runs in (the
	// Engine-Namespace header; "-" the default); "" leaves it to the
	// server.
	Namespace string
}

// NewClient returns a client of the API at base (e.g. http://engine for a
// unix socket transport, or http://127.0.0.1:7070) over hc. A remote
// server's bearer token is the transport's to add (service.DialRemote).
func NewClient(hc *http.Client, base string, opts ClientOptions) *Client {
	return &Client{hc: hc, base: strings.TrimSuffix(base, "/"), opts: opts}
}

// WithEvents returns a client that shares c's connection and options but
// sends the memory events of its requests to events.
func (c *Client) WithEvents(events event.Func) *Client {
	opts := c.opts
	opts.Events = events
	return &Client{hc: c.hc, base: c.base, opts: opts}
}

// WithProvenance returns a client that shares c's connection and options
// but says its requests are written by p (its Run, Model and Source).
func (c *Client) WithProvenance(p engine.Provenance) *Client {
	opts := c.opts
	opts.Provenance = p
	return &Client{hc: c.hc, base: c.base, opts: opts}
}

// WithNamespace returns a client that shares c's connection and options
// but runs its requests in the namespace name ("-": the default).
func (c *Client) WithNamespace(name string) *Client {
	opts := c.opts
	opts.Namespace = name
	return &Client{hc: c.hc, base: c.base, opts: opts}
}

// request is one call: the route's method and path (already filled), its
// query, and a JSON body (or raw bytes with a content type).
type request struct {
	method, path string
	query        url.Values
	json         any
	raw          []byte
	rawType      string
	body         io.Reader // sent as it is read (size bytes), typed rawType
	size         int64
}

// do sends req and decodes the JSON answer into out (nil: discard it).
func (c *Client) do(ctx context.Context, req request, out any) error {
	resp, err := c.send(ctx, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out != nil {
		dec := json.NewDecoder(resp.Body)
		if err := dec.Decode(out); err != nil {
			return fmt.Errorf("memory server: %s %s: reading the answer: %w", req.method, req.path, err)
		}
	}
	return c.finish(resp)
}

// send sends req and returns a 2xx response whose body the caller reads
// and closes, then passes to finish; any other status is returned as the
// error it stands for.
func (c *Client) send(ctx context.Context, req request) (*http.Response, error) {
	if strings.HasSuffix(req.path, "/") || strings.Contains(req.path, "//") {
		return nil, engine.Invalid("request", "an id is empty") // pathf was given ""
	}
	u := c.base + req.path
	if len(req.query) > 0 {
		u += "?" + req.query.Encode()
	}
	var body io.Reader
	ctype := ""
	switch {
	case req.json != nil:
		b, err := json.Marshal(req.json)
		if err != nil {
			return nil, err
		}
		body, ctype = bytes.NewReader(b), "application/json"
	case req.raw != nil:
		body, ctype = bytes.NewReader(req.raw), req.rawType
	case req.body != nil:
		body, ctype = req.body, req.rawType
	case req.method != http.MethodGet && req.method != http.MethodHead:
		// The server takes a state-changing request only with a JSON
		// type, bodiless ones too.
		ctype = "application/json"
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, u, body)
	if err != nil {
		return nil, err
	}
	if req.body != nil {
		hr.ContentLength = req.size
	}
	if ctype != "" {
		hr.Header.Set("Content-Type", ctype)
	}
	if c.opts.Events != nil {
		hr.Header.Set(HeaderEvents, "1")
	}
	if !c.opts.Now.IsZero() {
		hr.Header.Set(HeaderNow, c.opts.Now.Format(time.RFC3339Nano))
	}
	if p := c.opts.Provenance; p.Run != "" || p.Model != "" || p.Source != "" {
		setIf(hr.Header, HeaderRun, p.Run)
		setIf(hr.Header, HeaderModel, p.Model)
		setIf(hr.Header, HeaderSource, string(p.Source))
	}
	if c.opts.Namespace != "" {
		hr.Header.Set(HeaderNamespace, c.opts.Namespace)
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("memory server: %w", err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	return nil, errorOf(resp.StatusCode, b)
}

func setIf(h http.Header, name, v string) {
	if v != "" {
		h.Set(name, v)
	}
}

// finish reads what is left of resp's body (its trailer comes after it)
// and hands the request's events to the client's sink.
func (c *Client) finish(resp *http.Response) error {
	io.Copy(io.Discard, resp.Body)
	if c.opts.Events == nil {
		return nil
	}
	v := resp.Trailer.Get(HeaderEvents)
	if v == "" {
		return nil
	}
	var evs []json.RawMessage
	if err := json.Unmarshal([]byte(v), &evs); err != nil {
		return fmt.Errorf("memory server: the %s trailer: %w", HeaderEvents, err)
	}
	for _, raw := range evs {
		var fields map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&fields); err != nil {
			return fmt.Errorf("memory server: the %s trailer: %w", HeaderEvents, err)
		}
		name, _ := fields["event"].(string)
		delete(fields, "event")
		c.opts.Events.Emit(name, fields)
	}
	return nil
}

// errorOf turns a problem response back into the error it stands for.
func errorOf(status int, body []byte) error {
	msg := strings.TrimSpace(string(body))
	p, ok := problem.Parse(body)
	if ok && p.Detail != "" {
		msg = p.Detail
	}
	if ok && p.Type == ProblemUnknownNamespace {
		// The client's own option chose the namespace: the header it
		// travelled in means nothing to the client's user.
		return engine.MarkInvalid(engine.NotFound(strings.TrimPrefix(msg, HeaderNamespace+": ")))
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	err := errors.New(msg)
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return engine.MarkInvalid(err)
	case http.StatusNotFound:
		return engine.NotFound(msg)
	case http.StatusForbidden:
		return &forbiddenError{msg}
	case http.StatusUnauthorized:
		return fmt.Errorf("memory server refused the request: %s (set ENGINE_TOKEN to the server's serve.token)", msg)
	}
	return err
}

// pathf builds a route path, escaping each argument as one path segment.
func pathf(format string, args ...string) string {
	a := make([]any, len(args))
	for i, s := range args {
		a[i] = url.PathEscape(s)
	}
	return fmt.Sprintf(format, a...)
}
