package shared

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pb "github.com/engine-dev/engine/plugins/proto/v1"
)

// BrowserPlugin is the go-plugin plugin for browsers: on the plugin side it
// serves Impl, on the host side it makes a *BrowserClient.
type BrowserPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl Browser // plugin side only
}

// GRPCServer registers the Browser service (plugin side).
func (p *BrowserPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterBrowserServer(s, &browserServer{impl: p.Impl})
	return nil
}

// GRPCClient returns a *BrowserClient (host side).
func (p *BrowserPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &BrowserClient{rpc: pb.NewBrowserClient(c)}, nil
}

// ModelPlugin is the go-plugin plugin for LLMs.
type ModelPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl Model // plugin side only
}

// GRPCServer registers the Model service (plugin side).
func (p *ModelPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterModelServer(s, &modelServer{impl: p.Impl})
	return nil
}

// GRPCClient returns a *ModelClient (host side).
func (p *ModelPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &ModelClient{rpc: pb.NewModelClient(c)}, nil
}

var (
	_ plugin.GRPCPlugin = (*BrowserPlugin)(nil)
	_ plugin.GRPCPlugin = (*ModelPlugin)(nil)
)
