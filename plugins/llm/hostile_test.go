package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/plugins/llm/llmtest"
	"github.com/engine-dev/engine/plugins/shared"
)

func openHostile(t *testing.T, h *llmtest.Server, extra map[string]string) *Model {
	t.Helper()
	t.Setenv("OPENAI_API_KEY", "")
	m := New("openai")
	o := map[string]string{"model": "local", "base_url": h.URL + "/v1"}
	for k, v := range extra {
		o[k] = v
	}
	if err := m.Open(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return m
}

func ask(m *Model) (*engine.ModelResponse, error) {
	return m.Complete(context.Background(), engine.ModelRequest{Messages: []engine.Message{{Role: "user", Content: "hi"}}, Tools: conversation().Tools})
}

// Each pathology of a provider becomes the error the engine acts on:
// retryable (with the provider's Retry-After) for 429, 5xx and a dropped
// connection; final for a 4xx; a timeout naming its bound for a hang.
func TestPluginHostileServer(t *testing.T) {
	for _, c := range []struct {
		name        string
		b           llmtest.Behaviour
		temporary   bool
		rateLimited bool
		after       time.Duration
		msg         string
	}{
		{"500", llmtest.Status(500, ""), true, false, 0, "server error (HTTP 500)"},
		{"503 with Retry-After", llmtest.Status(503, "3"), true, false, 3 * time.Second, "HTTP 503"},
		{"429", llmtest.Status(429, "7"), true, true, 7 * time.Second, "rate limited (HTTP 429)"},
		{"429 Retry-After too long", llmtest.Status(429, "86400"), true, true, MaxRetryAfter, "HTTP 429"},
		{"reset", llmtest.Reset, true, false, 0, "connection failed"},
		{"400", llmtest.Status(400, ""), false, false, 0, "hostile server says 400"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := llmtest.New(t, c.b, llmtest.Answer("", "click", `{"ref":"e1"}`))
			m := openHostile(t, h, nil)
			_, err := ask(m)
			var te *shared.TemporaryError
			if err == nil || !strings.Contains(err.Error(), c.msg) || errors.As(err, &te) != c.temporary {
				t.Fatalf("err = %v (temporary: %v), want %q, temporary %v", err, errors.As(err, &te), c.msg, c.temporary)
			}
			if c.temporary && (te.RateLimited != c.rateLimited || te.RetryAfter != c.after) {
				t.Fatalf("%+v", te)
			}
			// The next request is answered: the plugin is fine.
			resp, err := ask(m)
			if err != nil || len(resp.ToolCalls) != 1 {
				t.Fatalf("after %s: %+v %v", c.name, resp, err)
			}
		})
	}
}

func TestPluginRequestTimeout(t *testing.T) {
	h := llmtest.New(t, llmtest.Hang, llmtest.Answer("", "back", `{}`))
	// Long enough that the answered request after the hang never hits it on
	// a loaded machine.
	m := openHostile(t, h, map[string]string{"timeout": "3s"})
	start := time.Now()
	_, err := ask(m)
	var te *shared.TemporaryError
	if err == nil || !strings.Contains(err.Error(), "timed out after 3s") || errors.As(err, &te) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("took %v", d)
	}
	if _, err := ask(m); err != nil {
		t.Fatal(err)
	}
	if err := New("openai").Open(context.Background(), map[string]string{"base_url": h.URL, "timeout": "soon"}); err == nil || !strings.Contains(err.Error(), `option timeout "soon"`) {
		t.Fatalf("err = %v", err)
	}
}

// max_tokens goes with every request: the default, or the option.
func TestPluginSendsMaxTokens(t *testing.T) {
	h := llmtest.New(t, llmtest.Answer("ok"))
	if _, err := ask(openHostile(t, h, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := ask(openHostile(t, h, map[string]string{"max_tokens": "77"})); err != nil {
		t.Fatal(err)
	}
	b := h.Bodies()
	if len(b) != 2 || b[0]["max_tokens"] != float64(DefaultMaxTokens) || b[1]["max_tokens"] != float64(77) {
		t.Fatalf("bodies: %v", b)
	}
	if err := New("openai").Open(context.Background(), map[string]string{"base_url": h.URL, "max_tokens": "-1"}); err == nil {
		t.Fatal("max_tokens -1 accepted")
	}
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"":                              0,
		"2":                             2 * time.Second,
		"0.5":                           500 * time.Millisecond,
		"-3":                            0,
		"soon":                          0,
		"Mon, 23 Nov 2026 12:00:09 GMT": 9 * time.Second,
		"99999":                         MaxRetryAfter,
	} {
		if got := retryAfter(h, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", h, got, want)
		}
	}
}
