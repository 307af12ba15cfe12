package shared

import (
	"fmt"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/engine-dev/engine/engine"
)

// Size limits both sides agree on.
const (
	// MaxMessageBytes bounds every gRPC message in both directions, on both
	// sides (the host's dial options, the plugin's server options). gRPC's
	// own default is 4 MiB for what a side receives and unlimited for what
	// it sends, so an oversized message used to fail only at the receiver,
	// as a transport error.
	MaxMessageBytes = 16 << 20
	// MaxAnswerBytes bounds an LLM plugin's answer text and each tool
	// call's arguments: the Go server glue clips longer ones (see
	// ClipResponse), so an answer always fits in a message.
	MaxAnswerBytes = 1 << 20
	// MaxActionValueBytes bounds a browser action's value and a navigation
	// URL: the host refuses a longer one up front with an "invalid"
	// *engine.ActionError, before it reaches the plugin.
	MaxActionValueBytes = 1 << 20
)

// DialOptions are the host's gRPC options for a plugin connection.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxMessageBytes))}
}

// GRPCServer is go-plugin's default server with the message size limits.
func GRPCServer(opts []grpc.ServerOption) *grpc.Server {
	return plugin.DefaultGRPCServer(append(opts, grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes)))
}

// ClipResponse bounds a model's answer: text and tool call arguments
// longer than MaxAnswerBytes are cut to that many bytes. Clipped
// arguments are no longer JSON; the engine refuses them as an invalid tool
// call (it refuses far smaller ones already).
func ClipResponse(r *engine.ModelResponse) {
	if r == nil {
		return
	}
	if n := len(r.Text); n > MaxAnswerBytes {
		r.Text = r.Text[:MaxAnswerBytes] + fmt.Sprintf("… [clipped by the plugin: %d bytes]", n)
	}
	for i := range r.ToolCalls {
		if len(r.ToolCalls[i].Arguments) > MaxAnswerBytes {
			r.ToolCalls[i].Arguments = r.ToolCalls[i].Arguments[:MaxAnswerBytes]
		}
	}
}

// CheckAction refuses an action (or a navigation URL) whose value is
// longer than MaxActionValueBytes, as an "invalid" action error.
func CheckAction(what string, value string) error {
	if n := len(value); n > MaxActionValueBytes {
		return &engine.ActionError{Code: engine.CodeInvalid,
			Message: fmt.Sprintf("%s is %d bytes, more than the %d a browser action takes: send a shorter one", what, n, MaxActionValueBytes)}
	}
	return nil
}
