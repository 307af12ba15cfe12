package shared

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/go-plugin"

	"github.com/engine-dev/engine/engine"
)

// In one process, over a real gRPC connection: every field crosses intact.

type recBrowser struct {
	gotAction engine.Action
	opened    map[string]string
}

func (b *recBrowser) Describe() Info {
	return Info{Name: "rec", Version: "1.2.3", Kind: KindBrowser, Capabilities: []string{"click"}, ProtocolVersion: 1, Description: "d"}
}
func (b *recBrowser) Open(_ context.Context, o map[string]string) error { b.opened = o; return nil }
func (b *recBrowser) Navigate(_ context.Context, url string) error {
	if url == "bad" {
		return &engine.ActionError{Code: engine.CodeNavigation, Message: "net::ERR_NAME_NOT_RESOLVED"}
	}
	return nil
}
func (b *recBrowser) Snapshot(context.Context) (*engine.Snapshot, error) {
	return &engine.Snapshot{URL: "u", Title: "t", Tree: "tree", Text: "text", Truncated: true,
		Elements: []engine.Element{{Ref: "e1", Role: "textbox", Name: "Search", Value: "padel", States: []string{"focused"}}}}, nil
}
func (b *recBrowser) Act(_ context.Context, a engine.Action) error {
	b.gotAction = a
	if a.Kind == engine.ActFill {
		return &engine.ActionError{Code: engine.CodeNotEditable, Message: "element is not an input"}
	}
	if a.Kind == engine.ActHover {
		return errors.New("browser went away")
	}
	return nil
}
func (b *recBrowser) Screenshot(context.Context) ([]byte, error) {
	return []byte{0x89, 'P', 'N', 'G', 0}, nil
}
func (b *recBrowser) Close() error { return nil }

type recModel struct{ got engine.ModelRequest }

func (m *recModel) Describe() Info { return Info{Name: "m", Kind: KindLLM, ProtocolVersion: 1} }
func (m *recModel) Open(context.Context, map[string]string) error {
	return errors.New("OPENAI_API_KEY is not set")
}
func (m *recModel) Complete(_ context.Context, r engine.ModelRequest) (*engine.ModelResponse, error) {
	m.got = r
	return &engine.ModelResponse{Text: "t", ToolCalls: []engine.ToolCall{{ID: "c1", Name: "click", Arguments: `{"ref":`}}, Usage: engine.Usage{PromptTokens: 10, CompletionTokens: 2}}, nil
}

func TestPluginGRPCRoundTrip(t *testing.T) {
	rb, rm := &recBrowser{}, &recModel{}
	client, server := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{
		KindBrowser: &BrowserPlugin{Impl: rb},
		KindLLM:     &ModelPlugin{Impl: rm},
	})
	defer client.Close()
	defer server.Stop()
	ctx := context.Background()

	raw, err := client.Dispense(KindBrowser)
	if err != nil {
		t.Fatal(err)
	}
	b := raw.(*BrowserClient)
	info, err := b.Describe(ctx)
	if err != nil || !reflect.DeepEqual(info, rb.Describe()) {
		t.Fatalf("Describe = %+v, %v", info, err)
	}
	if err := b.Open(ctx, map[string]string{"k": "v"}); err != nil || rb.opened["k"] != "v" {
		t.Fatalf("Open: %v %v", err, rb.opened)
	}
	if err := b.Navigate(ctx, "bad"); err == nil {
		t.Fatal("want navigation error")
	} else if ae, ok := engine.AsActionError(err); !ok || ae.Code != engine.CodeNavigation {
		t.Fatalf("navigate err = %#v", err)
	}
	snap, err := b.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := rb.Snapshot(ctx)
	if !reflect.DeepEqual(snap, want) {
		t.Fatalf("snapshot = %+v, want %+v", snap, want)
	}
	act := engine.Action{Kind: engine.ActWait, Ref: "e3", Value: "v", Millis: 250}
	if err := b.Act(ctx, act); err != nil || rb.gotAction != act {
		t.Fatalf("Act: %v, got %+v", err, rb.gotAction)
	}
	err = b.Act(ctx, engine.Action{Kind: engine.ActFill, Ref: "e1", Value: "x"})
	if ae, ok := engine.AsActionError(err); !ok || ae.Message != "element is not an input" || ae.Code != engine.CodeNotEditable {
		t.Fatalf("fill err = %#v", err)
	}
	err = b.Act(ctx, engine.Action{Kind: engine.ActHover, Ref: "e1"})
	var ce *CallError
	if _, ok := engine.AsActionError(err); ok || !errors.As(err, &ce) || ce.Message != "browser went away" {
		t.Fatalf("hover err = %#v", err)
	}
	png, err := b.Screenshot(ctx)
	if err != nil || string(png) != "\x89PNG\x00" {
		t.Fatalf("Screenshot = %q, %v", png, err)
	}

	raw, err = client.Dispense(KindLLM)
	if err != nil {
		t.Fatal(err)
	}
	m := raw.(*ModelClient)
	if err := m.Open(ctx, nil); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("Open err = %v", err)
	}
	req := engine.ModelRequest{
		System: "sys",
		Messages: []engine.Message{
			{Role: "user", Content: "hi"},
			{Role: "assistant", ToolCalls: []engine.ToolCall{{ID: "c0", Name: "fill", Arguments: `{"ref":"e1"}`}}},
			{Role: "tool", ToolCallID: "c0", Name: "fill", Content: "ok"},
		},
		Tools: []engine.Tool{{Name: "fill", Description: "fill a field", Parameters: json.RawMessage(`{"type":"object"}`)}},
	}
	resp, err := m.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rm.got, req) {
		t.Fatalf("request crossed as %+v, want %+v", rm.got, req)
	}
	if resp.Text != "t" || resp.ToolCalls[0].Arguments != `{"ref":` || resp.Usage != (engine.Usage{PromptTokens: 10, CompletionTokens: 2}) {
		t.Fatalf("resp = %+v", resp)
	}
}
