package shared

import (
	"context"

	"github.com/engine-dev/engine/engine"
	pb "github.com/engine-dev/engine/plugins/proto/v1"
)

// Host side: typed clients over the generated stubs. Errors other than an
// *engine.ActionError come back as *CallError. These clients know nothing of
// processes or timeouts; plugins/loader adds those.

// BrowserClient calls a browser plugin.
type BrowserClient struct {
	rpc pb.BrowserClient
	// MaxTreeBytes and MaxTextBytes go with every Snapshot (0: default).
	MaxTreeBytes, MaxTextBytes int
}

// Describe asks the plugin who it is.
func (c *BrowserClient) Describe(ctx context.Context) (Info, error) {
	r, err := c.rpc.Describe(ctx, &pb.Empty{})
	if err != nil {
		return Info{}, fromStatus("Describe", err)
	}
	return infoFromProto(r), nil
}

// Open starts the browser.
func (c *BrowserClient) Open(ctx context.Context, options map[string]string) error {
	_, err := c.rpc.Open(ctx, &pb.OpenRequest{Options: options})
	return fromStatus("Open", err)
}

// Navigate loads url.
func (c *BrowserClient) Navigate(ctx context.Context, url string) error {
	r, err := c.rpc.Navigate(ctx, &pb.NavigateRequest{Url: url})
	if err != nil {
		return fromStatus("Navigate", err)
	}
	return actionErrorFromProto(r)
}

// Snapshot returns the page view.
func (c *BrowserClient) Snapshot(ctx context.Context) (*engine.Snapshot, error) {
	r, err := c.rpc.Snapshot(ctx, &pb.SnapshotRequest{MaxTreeBytes: uint32(c.MaxTreeBytes), MaxTextBytes: uint32(c.MaxTextBytes)})
	if err != nil {
		return nil, fromStatus("Snapshot", err)
	}
	return snapshotFromProto(r), nil
}

// Act performs one action.
func (c *BrowserClient) Act(ctx context.Context, a engine.Action) error {
	r, err := c.rpc.Act(ctx, actionToProto(a))
	if err != nil {
		return fromStatus("Act", err)
	}
	return actionErrorFromProto(r)
}

// Screenshot returns a PNG.
func (c *BrowserClient) Screenshot(ctx context.Context) ([]byte, error) {
	r, err := c.rpc.Screenshot(ctx, &pb.Empty{})
	if err != nil {
		return nil, fromStatus("Screenshot", err)
	}
	return r.GetPng(), nil
}

// CloseBrowser asks the plugin to release its browser.
func (c *BrowserClient) CloseBrowser(ctx context.Context) error {
	_, err := c.rpc.Close(ctx, &pb.Empty{})
	return fromStatus("Close", err)
}

// ModelClient calls an LLM plugin.
type ModelClient struct {
	rpc pb.ModelClient
}

// Describe asks the plugin who it is.
func (c *ModelClient) Describe(ctx context.Context) (Info, error) {
	r, err := c.rpc.Describe(ctx, &pb.Empty{})
	if err != nil {
		return Info{}, fromStatus("Describe", err)
	}
	return infoFromProto(r), nil
}

// Open selects the model.
func (c *ModelClient) Open(ctx context.Context, options map[string]string) error {
	_, err := c.rpc.Open(ctx, &pb.OpenRequest{Options: options})
	return fromStatus("Open", err)
}

// Complete answers one request.
func (c *ModelClient) Complete(ctx context.Context, req engine.ModelRequest) (*engine.ModelResponse, error) {
	r, err := c.rpc.Complete(ctx, requestToProto(req))
	if err != nil {
		return nil, fromStatus("Complete", err)
	}
	return responseFromProto(r), nil
}
