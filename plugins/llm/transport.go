package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/engine-dev/engine/plugins/shared"
)

// Defaults for the plugin options.
const (
	// DefaultTimeout bounds one provider request (option "timeout").
	DefaultTimeout = 120 * time.Second
	// DefaultMaxTokens caps an answer (option "max_tokens"): a tool call
	// needs a few hundred tokens, a planner answer a few thousand.
	DefaultMaxTokens = 4096
	// MaxRetryAfter is the longest Retry-After the plugin passes on; a
	// longer one is passed on as this.
	MaxRetryAfter = 5 * time.Minute
)

// exchange is what the HTTP layer saw during one Complete: the last
// response's status and Retry-After, and a connection-level failure. The
// provider clients turn HTTP failures into plain error strings; this is how
// the plugin tells a retryable failure from a final one.
type exchange struct {
	mu         sync.Mutex
	status     int
	retryAfter time.Duration
	netErr     error
}

type exchangeKey struct{}

func withExchange(ctx context.Context) (context.Context, *exchange) {
	x := &exchange{}
	return context.WithValue(ctx, exchangeKey{}, x), x
}

func (x *exchange) get() (int, time.Duration, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.status, x.retryAfter, x.netErr
}

// transport records each exchange in the request context's *exchange, and
// adds header to requests that lack it.
type transport struct {
	base   http.RoundTripper
	header http.Header
}

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.header) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.header {
			if req.Header.Get(k) == "" {
				req.Header[k] = v
			}
		}
	}
	resp, err := t.base.RoundTrip(req)
	x, _ := req.Context().Value(exchangeKey{}).(*exchange)
	if x == nil {
		return resp, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if err != nil {
		x.netErr = err
		return resp, err
	}
	x.status, x.netErr = resp.StatusCode, nil
	x.retryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	resp.Body = &body{ReadCloser: resp.Body, x: x}
	return resp, nil
}

// body records a connection dropped while the answer was being read.
type body struct {
	io.ReadCloser
	x *exchange
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.x.mu.Lock()
		b.x.netErr = err
		b.x.mu.Unlock()
	}
	return n, err
}

// retryAfter parses a Retry-After header (seconds or an HTTP date); 0 when
// absent or unparsable, at most MaxRetryAfter.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.ParseFloat(h, 64); err == nil {
		d = time.Duration(s * float64(time.Second))
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), MaxRetryAfter)
}

// httpClient is the provider clients' HTTP client: a per-request timeout
// and the recording transport, adding header to every request.
func httpClient(timeout time.Duration, header http.Header) *http.Client {
	return &http.Client{Timeout: timeout, Transport: transport{base: http.DefaultTransport.(*http.Transport).Clone(), header: header}}
}

// classify turns a failed request into the error the engine sees: a
// *shared.TemporaryError for a rate limit (429), a provider failure (5xx)
// or a dropped connection; a plain error naming the timeout when the
// request took too long; the provider's error otherwise.
func classify(provider string, err error, x *exchange, ctx context.Context, timeout time.Duration) error {
	status, after, netErr := x.get()
	wrapped := fmt.Errorf("%s: %w", provider, err)
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", provider, ctx.Err())
	// The call's own context is live, so a deadline here is the HTTP
	// client's: langchaingo reports it as its own "request timeout" error
	// or as the client's, depending on where the request was when it hit.
	case strings.Contains(err.Error(), "Client.Timeout") || netErr != nil && isTimeout(netErr) ||
		errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "exceeded deadline"):
		return fmt.Errorf("%s: the request timed out after %v (plugin option timeout): %v", provider, timeout, err)
	case netErr != nil && dropped(netErr):
		return &shared.TemporaryError{Err: fmt.Errorf("%s: connection failed: %v", provider, err)}
	case status == http.StatusTooManyRequests:
		return &shared.TemporaryError{Err: fmt.Errorf("%s: rate limited (HTTP 429): %v", provider, err), RateLimited: true, RetryAfter: after}
	case status >= 500:
		return &shared.TemporaryError{Err: fmt.Errorf("%s: server error (HTTP %d): %v", provider, status, err), RetryAfter: after}
	}
	return wrapped
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// dropped: the connection was reset, refused or closed mid-answer.
func dropped(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
