package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/runfiles"
)

// scriptedModel answers each call with the next step: an error or an
// answer. Steps past the end repeat the last one.
type scriptedModel struct {
	mu    sync.Mutex
	steps []func(ctx context.Context) (*engine.ModelResponse, error)
	calls int
}

func (m *scriptedModel) Complete(ctx context.Context, _ engine.ModelRequest) (*engine.ModelResponse, error) {
	m.mu.Lock()
	i := min(m.calls, len(m.steps)-1)
	m.calls++
	f := m.steps[i]
	m.mu.Unlock()
	return f(ctx)
}

func temporary(after time.Duration) func(context.Context) (*engine.ModelResponse, error) {
	return func(context.Context) (*engine.ModelResponse, error) {
		return nil, &engine.ModelError{Err: errors.New("server error (HTTP 503)"), Temporary: true, RetryAfter: after}
	}
}

func answer(name, args string) func(context.Context) (*engine.ModelResponse, error) {
	return func(context.Context) (*engine.ModelResponse, error) {
		return &engine.ModelResponse{ToolCalls: []engine.ToolCall{{ID: "c1", Name: name, Arguments: args}}, Usage: engine.Usage{PromptTokens: 10, CompletionTokens: 2}}, nil
	}
}

// hangs blocks, ignoring its context, until the test ends.
func hangs(t *testing.T) func(context.Context) (*engine.ModelResponse, error) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return func(context.Context) (*engine.ModelResponse, error) {
		<-release
		return nil, errors.New("released")
	}
}

var fast = LLMPolicy{Timeout: 5 * time.Second, Retries: 3, Backoff: time.Millisecond, MaxWait: time.Second, Budget: time.Minute}

func TestLLMCallRetriesTemporaryFailures(t *testing.T) {
	m := &scriptedModel{steps: []func(context.Context) (*engine.ModelResponse, error){temporary(0), temporary(0), answer("click", `{"ref":"e1"}`)}}
	resp, st, err := callModel(context.Background(), m, engine.ModelRequest{}, fast, time.Now)
	if err != nil || resp == nil || resp.ToolCalls[0].Name != "click" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	if st.attempts != 3 || len(st.retries) != 2 || st.retries[0].WaitMS != 1 || st.retries[1].WaitMS != 2 || !strings.Contains(st.retries[0].Error, "HTTP 503") {
		t.Fatalf("stats %+v", st)
	}
}

func TestLLMCallHonoursRetryAfter(t *testing.T) {
	m := &scriptedModel{steps: []func(context.Context) (*engine.ModelResponse, error){temporary(40 * time.Millisecond), answer("back", `{}`)}}
	_, st, err := callModel(context.Background(), m, engine.ModelRequest{}, fast, time.Now)
	if err != nil || st.attempts != 2 || st.retries[0].WaitMS != 40 || st.retries[0].RetryAfterMS != 40 {
		t.Fatalf("stats %+v err %v", st, err)
	}
	// A Retry-After longer than MaxWait ends the call at once.
	m = &scriptedModel{steps: []func(context.Context) (*engine.ModelResponse, error){temporary(time.Hour), answer("back", `{}`)}}
	_, st, err = callModel(context.Background(), m, engine.ModelRequest{}, fast, time.Now)
	if err == nil || !strings.Contains(err.Error(), "asks to wait 1h0m0s") || st.attempts != 1 || m.calls != 1 {
		t.Fatalf("stats %+v err %v", st, err)
	}
}

func TestLLMCallRetriesAreBounded(t *testing.T) {
	m := &scriptedModel{steps: []func(context.Context) (*engine.ModelResponse, error){temporary(0)}}
	p := fast
	p.Retries = 2
	_, st, err := callModel(context.Background(), m, engine.ModelRequest{}, p, time.Now)
	if err == nil || !strings.Contains(err.Error(), "gave up after 3 attempts") || m.calls != 3 || len(st.retries) != 3 {
		t.Fatalf("calls %d stats %+v err %v", m.calls, st, err)
	}
	// The budget: no retry whose wait would end past it.
	m = &scriptedModel{steps: []func(context.Context) (*engine.ModelResponse, error){temporary(0)}}
	p = fast
	p.Backoff, p.MaxWait, p.Budget = time.Hour, 2*time.Hour, time.Minute
	if _, _, err = callModel(context.Background(), m, engine.ModelRequest{}, p, time.Now); err == nil || !strings.Contains(err.Error(), "no time left") || m.calls != 1 {
		t.Fatalf("calls %d err %v", m.calls, err)
	}
	// A final error (a bad key, say) is not retried.
	m = &scriptedModel{steps: []func(context.Context) (*engine.ModelResponse, error){func(context.Context) (*engine.ModelResponse, error) {
		return nil, errors.New("Incorrect API key provided")
	}}}
	if _, _, err = callModel(context.Background(), m, engine.ModelRequest{}, fast, time.Now); err == nil || m.calls != 1 {
		t.Fatalf("calls %d err %v", m.calls, err)
	}
	// Negative Retries: none.
	m = &scriptedModel{steps: []func(context.Context) (*engine.ModelResponse, error){temporary(0)}}
	p = fast
	p.Retries = -1
	if _, _, err = callModel(context.Background(), m, engine.ModelRequest{}, p.withDefaults(), time.Now); err == nil || m.calls != 1 {
		t.Fatalf("calls %d err %v", m.calls, err)
	}
}

// The deadline holds even when the model ignores its context.
func TestLLMCallTimeoutHoldsWhenTheModelHangs(t *testing.T) {
	m := &scriptedModel{steps: []func(context.Context) (*engine.ModelResponse, error){hangs(t)}}
	p := fast
	p.Timeout = 100 * time.Millisecond
	start := time.Now()
	_, st, err := callModel(context.Background(), m, engine.ModelRequest{}, p, time.Now)
	if err == nil || !strings.Contains(err.Error(), "timed out after 100ms") || st.attempts != 1 {
		t.Fatalf("stats %+v err %v", st, err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("took %v", d)
	}
}

// Ctrl-C during a backoff wait ends the call with the context's error.
func TestLLMCallCancelledDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := &scriptedModel{steps: []func(context.Context) (*engine.ModelResponse, error){func(context.Context) (*engine.ModelResponse, error) {
		cancel()
		return nil, &engine.ModelError{Err: errors.New("HTTP 500"), Temporary: true}
	}}}
	p := fast
	p.Backoff = time.Hour
	p.MaxWait, p.Budget = 2*time.Hour, 3*time.Hour
	if _, _, err := callModel(ctx, m, engine.ModelRequest{}, p, time.Now); !errors.Is(err, context.Canceled) || m.calls != 1 {
		t.Fatalf("calls %d err %v", m.calls, err)
	}
}

func readLLMLog(t *testing.T, dir string) ([]runfiles.Call, string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, LLMFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []runfiles.Call
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r runfiles.Call
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		out = append(out, r)
	}
	return out, string(raw)
}

// A model that hangs fails the run with a clear reason, and llm.jsonl
// says so.
func TestRunFailsWhenTheModelHangs(t *testing.T) {
	db := openDisk(t)
	m := &scriptedModel{steps: []func(context.Context) (*engine.ModelResponse, error){hangs(t)}}
	cfg := Config{Goal: goal, StartURL: "http://shop.test/", Browser: newShop(), Model: m, Memory: memOf(t, db),
		Approve: ApproveAuto, RunsDir: t.TempDir(), LLM: LLMPolicy{Timeout: 200 * time.Millisecond}}
	res := mustRun(t, cfg)
	if res.Success || !strings.HasPrefix(res.Reason, ReasonLLMFailed+": model call timed out after 200ms") {
		t.Fatalf("%+v", res)
	}
	recs, _ := readLLMLog(t, res.Dir)
	if len(recs) != 1 || !strings.Contains(recs[0].Error, "timed out") || recs[0].Attempts != 1 || recs[0].Request.System == "" {
		t.Fatalf("llm.jsonl: %+v", recs)
	}
}

// Huge answers are clipped in llm.jsonl; huge tool arguments are a tool
// error the model sees, and the run goes on; each call records the
// request, latency, attempts and usage.
func TestHugeAnswersAndArguments(t *testing.T) {
	db := openDisk(t)
	hugeArgs := `{"element":"Search products","text":"` + strings.Repeat("x", 5<<20) + `"}`
	m := &scriptedModel{steps: []func(context.Context) (*engine.ModelResponse, error){
		func(context.Context) (*engine.ModelResponse, error) {
			return &engine.ModelResponse{Text: strings.Repeat("blah ", 1<<20), ToolCalls: []engine.ToolCall{{ID: "1", Name: "fill", Arguments: hugeArgs}}}, nil
		},
		temporary(0),
		answer("finish", `{"answer":"ok","success":true}`),
	}}
	reqs := &recordingModel{m: m}
	cfg := Config{Goal: goal, StartURL: "http://shop.test/", Browser: newShop(), Model: reqs, Memory: memOf(t, db),
		Approve: ApproveAuto, RunsDir: t.TempDir(), LLM: fast}
	res := mustRun(t, cfg)
	if !res.Success || res.Errors != 1 || res.LLMCalls != 2 {
		t.Fatalf("%+v", res)
	}
	if last := reqs.last(); !strings.Contains(last, fmt.Sprintf("the arguments of fill are %d bytes, more than the 65536 a tool call may carry", len(hugeArgs))) {
		t.Fatalf("the model was not told: %s", last)
	}
	recs, raw := readLLMLog(t, res.Dir)
	if len(raw) > 64<<10 {
		t.Fatalf("llm.jsonl is %d bytes", len(raw))
	}
	if len(recs) != 2 || recs[0].TextBytes != 5<<20 || recs[0].ToolCalls[0].ArgumentsBytes != len(hugeArgs) || len(recs[0].Text) > LogClip+10 {
		t.Fatalf("llm.jsonl: %+v", recs[0])
	}
	r := recs[1]
	if r.Attempts != 2 || len(r.Retries) != 1 || !strings.Contains(r.Retries[0].Error, "HTTP 503") || r.Usage == nil || r.Usage.PromptTokens != 10 {
		t.Fatalf("second call: %+v", r)
	}
	if len(r.Request.Messages) != 1 || !strings.Contains(r.Request.Messages[0].Content, "Current page:") || len(r.Request.Tools) != len(Tools) {
		t.Fatalf("request: %+v", r.Request)
	}
	actions, err := os.ReadFile(filepath.Join(res.Dir, ActionsFile))
	if err != nil || !strings.Contains(string(actions), `"action":"invalid_tool_call"`) || len(actions) > 4<<10 {
		t.Fatalf("actions.jsonl (%v): %.2000s", err, actions)
	}
}

type recordingModel struct {
	m    engine.Model
	mu   sync.Mutex
	reqs []engine.ModelRequest
}

func (r *recordingModel) Complete(ctx context.Context, req engine.ModelRequest) (*engine.ModelResponse, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.m.Complete(ctx, req)
}

func (r *recordingModel) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	msgs := r.reqs[len(r.reqs)-1].Messages
	return msgs[len(msgs)-1].Content
}
