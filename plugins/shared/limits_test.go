package shared

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/engine-dev/engine/engine"
)

// hostileModel fails temporarily, or answers far too much.
type hostileModel struct{ mode string }

func (m *hostileModel) Describe() Info                                { return Info{Name: "h", Kind: KindLLM, ProtocolVersion: 1} }
func (m *hostileModel) Open(context.Context, map[string]string) error { return nil }
func (m *hostileModel) Complete(context.Context, engine.ModelRequest) (*engine.ModelResponse, error) {
	switch m.mode {
	case "429":
		return nil, &TemporaryError{Err: errors.New("rate limited (HTTP 429)"), RateLimited: true, RetryAfter: 7 * time.Second}
	case "503":
		return nil, &TemporaryError{Err: errors.New("server error (HTTP 503)")}
	}
	return &engine.ModelResponse{Text: strings.Repeat("a", 6<<20), ToolCalls: []engine.ToolCall{{ID: "1", Name: "fill", Arguments: strings.Repeat("b", 6<<20)}}}, nil
}

// A temporary provider failure crosses gRPC as retryable (with the
// provider's Retry-After) and is not taken for a broken connection; an
// oversized answer is clipped on the plugin side and fits.
func TestPluginTemporaryErrorsAndOversizedAnswers(t *testing.T) {
	hm := &hostileModel{}
	client, server := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{KindLLM: &ModelPlugin{Impl: hm}})
	defer client.Close()
	defer server.Stop()
	raw, err := client.Dispense(KindLLM)
	if err != nil {
		t.Fatal(err)
	}
	m := raw.(*ModelClient)
	ctx := context.Background()

	hm.mode = "429"
	_, err = m.Complete(ctx, engine.ModelRequest{})
	if after, ok := IsRetryable(err); !ok || after != 7*time.Second || IsTransport(err) || !strings.Contains(err.Error(), "HTTP 429") {
		t.Fatalf("429: err %v retryable %v after %v", err, ok, after)
	}
	hm.mode = "503"
	_, err = m.Complete(ctx, engine.ModelRequest{})
	if after, ok := IsRetryable(err); !ok || after != 0 || IsTransport(err) {
		t.Fatalf("503: err %v retryable %v after %v", err, ok, after)
	}
	hm.mode = "huge"
	resp, err := m.Complete(ctx, engine.ModelRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Text) > MaxAnswerBytes+100 || !strings.HasSuffix(resp.Text, "[clipped by the plugin: 6291456 bytes]") || len(resp.ToolCalls[0].Arguments) != MaxAnswerBytes {
		t.Fatalf("text %d bytes (…%s), arguments %d bytes", len(resp.Text), resp.Text[len(resp.Text)-50:], len(resp.ToolCalls[0].Arguments))
	}
	// A plain error stays final.
	if _, ok := IsRetryable(toStatus(errors.New("Incorrect API key provided"))); ok {
		t.Fatal("a plain error is not retryable")
	}
	if _, ok := IsRetryable(fromStatus("Complete", toStatus(errors.New("x")))); ok {
		t.Fatal("a plain error is not retryable")
	}
}

func TestCheckAction(t *testing.T) {
	if err := CheckAction("the value of fill", strings.Repeat("x", MaxActionValueBytes)); err != nil {
		t.Fatal(err)
	}
	err := CheckAction("the value of fill", strings.Repeat("x", 5<<20))
	if ae, ok := engine.AsActionError(err); !ok || ae.Code != engine.CodeInvalid || !strings.Contains(ae.Message, "the value of fill is 5242880 bytes, more than the 1048576 a browser action takes") {
		t.Fatalf("%v", err)
	}
}
