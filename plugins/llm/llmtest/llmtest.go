// Package llmtest is a hostile LLM provider for tests: an HTTP server that
// speaks OpenAI's chat-completions wire protocol and answers each request
// with the next of a script of behaviours (an answer, an HTTP error, a
// dropped connection, a hang), keeping every request body. The openai
// plugin's own tests and the engine's end-to-end tests drive it.
package llmtest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Behaviour is one answer of a Server.
type Behaviour func(w http.ResponseWriter, r *http.Request)

// Server answers each request with the next behaviour (the last one
// repeats) and keeps every request body. It is closed when the test ends.
type Server struct {
	*httptest.Server
	mu     sync.Mutex
	next   []Behaviour
	bodies []map[string]any
}

// New starts a Server with the given script of behaviours.
func New(t testing.TB, bs ...Behaviour) *Server {
	if len(bs) == 0 {
		t.Fatal("llmtest.New: no behaviours")
	}
	h := &Server{next: bs}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		h.mu.Lock()
		h.bodies = append(h.bodies, body)
		b := h.next[0]
		if len(h.next) > 1 {
			h.next = h.next[1:]
		}
		h.mu.Unlock()
		b(w, r)
	}))
	t.Cleanup(h.Server.Close)
	return h
}

// Bodies are the request bodies so far.
func (h *Server) Bodies() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.bodies...)
}

// LastUser is the content of the last message of request i, or "".
func (h *Server) LastUser(i int) string {
	bodies := h.Bodies()
	if i >= len(bodies) {
		return ""
	}
	msgs, _ := bodies[i]["messages"].([]any)
	if len(msgs) == 0 {
		return ""
	}
	last, _ := msgs[len(msgs)-1].(map[string]any)
	return fmt.Sprint(last["content"])
}

// Answer is a chat completion with text and tool calls given as (name,
// arguments) pairs.
func Answer(text string, calls ...string) Behaviour {
	return func(w http.ResponseWriter, _ *http.Request) {
		var tcs []any
		for i := 0; i+1 < len(calls); i += 2 {
			tcs = append(tcs, map[string]any{"id": fmt.Sprintf("call_%d", i/2+1), "type": "function",
				"function": map[string]any{"name": calls[i], "arguments": calls[i+1]}})
		}
		msg := map[string]any{"role": "assistant", "content": text}
		if len(tcs) > 0 {
			msg["tool_calls"] = tcs
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "m",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "tool_calls"}},
			"usage":   map[string]any{"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}})
	}
}

// Status answers with an HTTP error (and a Retry-After header when set).
func Status(code int, retryAfter string) Behaviour {
	return func(w http.ResponseWriter, _ *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":{"message":"hostile server says %d","type":"server_error"}}`, code)
	}
}

// Reset drops the connection with a TCP reset, without answering.
func Reset(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	conn.Close()
}

// Hang never answers; it returns when the client gives up or the server
// closes.
func Hang(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
