package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/runfiles"
	"github.com/engine-dev/engine/engine/trust/redact"
)

// LLMPolicy bounds every model call of a run. The zero value is the
// defaults.
type LLMPolicy struct {
	// Timeout bounds one attempt (default DefaultLLMTimeout). It holds even
	// when the model does not honour its context: the loop stops waiting.
	Timeout time.Duration
	// Retries is how many times a temporary failure (engine.ModelError:
	// HTTP 429, 5xx, a dropped connection) is retried (0: DefaultLLMRetries;
	// negative: never). A timed-out attempt is not retried.
	Retries int
	// Backoff is the first wait before a retry (default 1s); it doubles
	// with every retry, up to MaxWait.
	Backoff time.Duration
	// MaxWait is the longest wait before one retry (default 30s). A
	// provider's Retry-After up to MaxWait is honoured; a longer one ends
	// the call at once.
	MaxWait time.Duration
	// Budget bounds one call with all its attempts and waits (default
	// 5m): no retry starts when its wait would end past it.
	Budget time.Duration
}

// Defaults of LLMPolicy.
const (
	DefaultLLMTimeout = 120 * time.Second
	DefaultLLMRetries = 3
	DefaultLLMBackoff = time.Second
	DefaultLLMMaxWait = 30 * time.Second
	DefaultLLMBudget  = 5 * time.Minute
)

func (p LLMPolicy) withDefaults() LLMPolicy {
	if p.Timeout <= 0 {
		p.Timeout = DefaultLLMTimeout
	}
	if p.Retries == 0 {
		p.Retries = DefaultLLMRetries
	}
	if p.Retries < 0 {
		p.Retries = 0
	}
	if p.Backoff <= 0 {
		p.Backoff = DefaultLLMBackoff
	}
	if p.MaxWait <= 0 {
		p.MaxWait = DefaultLLMMaxWait
	}
	if p.Budget <= 0 {
		p.Budget = DefaultLLMBudget
	}
	return p
}

// callStats is how one model call went.
type callStats struct {
	attempts int
	retries  []runfiles.Retry // the failed attempts that were retried (and a last failed one), as llm.jsonl records them
	latency  time.Duration
}

// errLLMTimeout marks an attempt that ran out of time.
var errLLMTimeout = errors.New("timed out")

// callModel calls m under the policy: a deadline per attempt, retries with
// backoff on temporary failures. The error says what happened and after how
// many attempts.
func callModel(ctx context.Context, m engine.Model, req engine.ModelRequest, p LLMPolicy, now func() time.Time) (*engine.ModelResponse, callStats, error) {
	var st callStats
	start := now()
	defer func() { st.latency = now().Sub(start) }()
	for n := 1; ; n++ {
		st.attempts = n
		t0 := now()
		resp, err := attemptModel(ctx, m, req, p.Timeout)
		if err == nil {
			return resp, st, nil
		}
		a := runfiles.Retry{Attempt: n, Error: err.Error(), LatencyMS: now().Sub(t0).Milliseconds()}
		if ctx.Err() != nil {
			return nil, st, ctx.Err()
		}
		if errors.Is(err, errLLMTimeout) {
			st.retries = append(st.retries, a)
			return nil, st, fmt.Errorf("model call timed out after %v (attempt %d)", p.Timeout, n)
		}
		me, ok := engine.AsModelError(err)
		if !ok || !me.Temporary {
			return nil, st, err
		}
		a.RetryAfterMS = me.RetryAfter.Milliseconds()
		if n > p.Retries {
			st.retries = append(st.retries, a)
			return nil, st, fmt.Errorf("%w (gave up after %d attempts)", err, n)
		}
		wait := p.Backoff << (n - 1)
		if wait <= 0 || wait > p.MaxWait {
			wait = p.MaxWait
		}
		if me.RetryAfter > p.MaxWait {
			st.retries = append(st.retries, a)
			return nil, st, fmt.Errorf("%w (the provider asks to wait %v, longer than %v; gave up after %d attempts)", err, me.RetryAfter, p.MaxWait, n)
		}
		if me.RetryAfter > 0 {
			wait = me.RetryAfter
		}
		if now().Sub(start)+wait > p.Budget {
			st.retries = append(st.retries, a)
			return nil, st, fmt.Errorf("%w (no time left for a retry within %v; gave up after %d attempts)", err, p.Budget, n)
		}
		a.WaitMS = wait.Milliseconds()
		st.retries = append(st.retries, a)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, st, ctx.Err()
		case <-timer.C:
		}
	}
}

// attemptModel is one try with a deadline. The model runs in its own
// goroutine so that a model ignoring its context cannot hold the loop: at
// the deadline the loop stops waiting (the goroutine ends when the model
// returns; a plugin's call is cancelled through its context).
func attemptModel(ctx context.Context, m engine.Model, req engine.ModelRequest, timeout time.Duration) (*engine.ModelResponse, error) {
	actx, cancel := context.WithTimeoutCause(ctx, timeout, errLLMTimeout)
	defer cancel()
	type result struct {
		resp *engine.ModelResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := m.Complete(actx, req)
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		if r.err != nil && ctx.Err() == nil && errors.Is(r.err, context.DeadlineExceeded) {
			// The model saw the deadline (the plugin acts on the one it was
			// sent) a moment before this process's timer fired: wait for
			// the timer, which is due, so the cause below is known.
			<-actx.Done()
		}
		if r.err != nil && ctx.Err() == nil && context.Cause(actx) == errLLMTimeout {
			return nil, errLLMTimeout
		}
		if r.err == nil && r.resp == nil {
			return nil, errors.New("the model returned no answer")
		}
		return r.resp, r.err
	case <-actx.Done():
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errLLMTimeout
	}
}

// Bounds on what a model's answer may carry into the loop.
const (
	// MaxAnswerText is how much of an answer's text the loop reads (the
	// planner's JSON plan; step mode reads only tool calls). The rest is
	// cut off.
	MaxAnswerText = 32 << 10
	// MaxToolArgs is the longest tool call arguments the loop accepts;
	// longer ones are an invalid tool call, told to the model.
	MaxToolArgs = 64 << 10
)

// boundAnswer returns resp with its text clipped to MaxAnswerText.
func boundAnswer(resp *engine.ModelResponse) *engine.ModelResponse {
	if len(resp.Text) <= MaxAnswerText {
		return resp
	}
	out := *resp
	out.Text = clipBytes(resp.Text, MaxAnswerText)
	return &out
}

// clipBytes cuts s to at most n bytes at a character boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// tooLong is the tool error for oversized arguments.
func tooLong(name string, n int) error {
	return &toolError{fmt.Sprintf("the arguments of %s are %d bytes, more than the %d a tool call may carry: send shorter arguments", name, n, MaxToolArgs)}
}

// noteSecrets gives the run's Redactor the values the answer types into
// secret fields before the answer is logged, so that llm.jsonl never
// shows them, in this answer or in later requests.
func (r *runner) noteSecrets(resp *engine.ModelResponse) {
	var calls []call
	for _, tc := range resp.ToolCalls {
		if c, err := parseCall(tc); err == nil {
			calls = append(calls, c)
		} else if v := untargetedText(tc); v != "" && r.focusSecret() {
			// Refused ("type needs a ref") and typed nowhere, but meant for
			// the secret field the focus is on: the answer that holds it
			// is logged.
			r.red.Add(v)
		}
	}
	if out, err := parsePlan(resp); err == nil {
		for _, l := range out.ProposedActions {
			if c, err := parseActionLine(l); err == nil {
				calls = append(calls, c)
			} else if v := untargetedLine(l); v != "" && r.focusSecret() {
				r.red.Add(v)
			}
		}
	}
	for _, c := range calls {
		if !mayBeSecret(c) {
			continue // no value typed: nothing to look up
		}
		el, found := r.page.Find(c.Kind, c.Ref, c.Element)
		r.noteSecret(c, el, found)
	}
}

// untargetedText returns the text of a fill or type call that names no
// element (which parseCall refuses), or "".
func untargetedText(tc engine.ToolCall) string {
	switch strings.ToLower(strings.TrimSpace(tc.Name)) {
	case string(engine.ActFill), string(engine.ActType):
	default:
		return ""
	}
	var a args
	if json.Unmarshal([]byte(tc.Arguments), &a) != nil || str(a.Ref) != "" || str(a.Element) != "" || a.Text == nil {
		return ""
	}
	return *a.Text
}

// untargetedLine returns the text of a proposed fill or type action
// that names no element (type "text", which parseActionLine refuses), or
// "".
func untargetedLine(line string) string {
	w, err := splitWords(line)
	if err != nil || len(w) != 2 {
		return ""
	}
	switch strings.ToLower(w[0]) {
	case string(engine.ActFill), string(engine.ActType):
		return w[1]
	}
	return ""
}

// focusSecret reports whether the focus is on a secret field: the
// element the page marks focused, or, on a page that marks none (not
// every browser reports the focus), the element the run's last action
// clicked, filled or typed into.
func (r *runner) focusSecret() bool {
	for _, e := range r.page.Elements {
		if slices.Contains(e.States, stateFocused) {
			return secretElement(e)
		}
	}
	return r.focus.Ref != "" && secretElement(r.focus)
}

// stateFocused is the state a browser gives the focused element.
const stateFocused = "focused"

// secretElement reports whether e is a secret field: the browser marks it
// so, or its name is a secret field's (redact.SecretField).
func secretElement(e engine.Element) bool {
	return slices.Contains(e.States, engine.StateSecret) || redact.SecretField("", "", e.Name)
}

// mayBeSecret reports whether c types a value, which a secret field makes
// a secret.
func mayBeSecret(c call) bool {
	return c.Value != "" && (c.Kind == engine.ActFill || c.Kind == engine.ActType)
}

// noteSecret reports whether c fills or types a value into a secret field
// — one the browser marks engine.StateSecret, or whose name
// redact.SecretField says is secret (the element's, else the name the
// model gave) — and if so adds the value to the run's Redactor.
func (r *runner) noteSecret(c call, el engine.Element, found bool) bool {
	if !mayBeSecret(c) {
		return false
	}
	name := c.Element
	if found && el.Name != "" {
		name = el.Name
	}
	if !(found && slices.Contains(el.States, engine.StateSecret)) && !redact.SecretField("", "", name) {
		return false
	}
	r.red.Add(c.Value) // as typed and as escaped (JSON, URL)
	return true
}
