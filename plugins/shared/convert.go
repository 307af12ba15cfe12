package shared

import (
	"encoding/json"

	"github.com/engine-dev/engine/engine"
	pb "github.com/engine-dev/engine/plugins/proto/v1"
)

func infoToProto(i Info) *pb.PluginInfo {
	return &pb.PluginInfo{
		Name:            i.Name,
		Version:         i.Version,
		Kind:            i.Kind,
		Capabilities:    i.Capabilities,
		ProtocolVersion: uint32(i.ProtocolVersion),
		Description:     i.Description,
	}
}

func infoFromProto(p *pb.PluginInfo) Info {
	return Info{
		Name:            p.GetName(),
		Version:         p.GetVersion(),
		Kind:            p.GetKind(),
		Capabilities:    p.GetCapabilities(),
		ProtocolVersion: int(p.GetProtocolVersion()),
		Description:     p.GetDescription(),
	}
}

func actionErrorToProto(err error) (*pb.ActResult, error) {
	if err == nil {
		return &pb.ActResult{}, nil
	}
	if ae, ok := engine.AsActionError(err); ok {
		return &pb.ActResult{Error: &pb.ActionError{Code: ae.Code, Message: ae.Message}}, nil
	}
	return nil, toStatus(err)
}

func actionErrorFromProto(r *pb.ActResult) error {
	if e := r.GetError(); e != nil {
		return &engine.ActionError{Code: e.GetCode(), Message: e.GetMessage()}
	}
	return nil
}

func snapshotToProto(s *engine.Snapshot) *pb.PageSnapshot {
	out := &pb.PageSnapshot{
		Url:       s.URL,
		Title:     s.Title,
		Tree:      s.Tree,
		Text:      s.Text,
		Truncated: s.Truncated,
		Elements:  make([]*pb.Element, len(s.Elements)),
	}
	for i, e := range s.Elements {
		out.Elements[i] = &pb.Element{Ref: e.Ref, Role: e.Role, Name: e.Name, Value: e.Value, States: e.States}
	}
	return out
}

func snapshotFromProto(p *pb.PageSnapshot) *engine.Snapshot {
	out := &engine.Snapshot{
		URL:       p.GetUrl(),
		Title:     p.GetTitle(),
		Tree:      p.GetTree(),
		Text:      p.GetText(),
		Truncated: p.GetTruncated(),
		Elements:  make([]engine.Element, len(p.GetElements())),
	}
	for i, e := range p.GetElements() {
		out.Elements[i] = engine.Element{Ref: e.GetRef(), Role: e.GetRole(), Name: e.GetName(), Value: e.GetValue(), States: e.GetStates()}
	}
	return out
}

func actionToProto(a engine.Action) *pb.Action {
	return &pb.Action{Kind: string(a.Kind), Ref: a.Ref, Value: a.Value, Millis: int32(a.Millis)}
}

func actionFromProto(p *pb.Action) engine.Action {
	return engine.Action{Kind: engine.ActionKind(p.GetKind()), Ref: p.GetRef(), Value: p.GetValue(), Millis: int(p.GetMillis())}
}

func toolCallsToProto(tcs []engine.ToolCall) []*pb.ToolCall {
	if len(tcs) == 0 {
		return nil
	}
	out := make([]*pb.ToolCall, len(tcs))
	for i, tc := range tcs {
		out[i] = &pb.ToolCall{Id: tc.ID, Name: tc.Name, ArgumentsJson: tc.Arguments}
	}
	return out
}

func toolCallsFromProto(tcs []*pb.ToolCall) []engine.ToolCall {
	if len(tcs) == 0 {
		return nil
	}
	out := make([]engine.ToolCall, len(tcs))
	for i, tc := range tcs {
		out[i] = engine.ToolCall{ID: tc.GetId(), Name: tc.GetName(), Arguments: tc.GetArgumentsJson()}
	}
	return out
}

func requestToProto(r engine.ModelRequest) *pb.CompleteRequest {
	out := &pb.CompleteRequest{System: r.System}
	for _, m := range r.Messages {
		out.Messages = append(out.Messages, &pb.Message{
			Role: m.Role, Content: m.Content, ToolCalls: toolCallsToProto(m.ToolCalls),
			ToolCallId: m.ToolCallID, Name: m.Name,
		})
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, &pb.Tool{Name: t.Name, Description: t.Description, ParametersJson: string(t.Parameters)})
	}
	return out
}

func requestFromProto(p *pb.CompleteRequest) engine.ModelRequest {
	out := engine.ModelRequest{System: p.GetSystem()}
	for _, m := range p.GetMessages() {
		out.Messages = append(out.Messages, engine.Message{
			Role: m.GetRole(), Content: m.GetContent(), ToolCalls: toolCallsFromProto(m.GetToolCalls()),
			ToolCallID: m.GetToolCallId(), Name: m.GetName(),
		})
	}
	for _, t := range p.GetTools() {
		var params json.RawMessage
		if t.GetParametersJson() != "" {
			params = json.RawMessage(t.GetParametersJson())
		}
		out.Tools = append(out.Tools, engine.Tool{Name: t.GetName(), Description: t.GetDescription(), Parameters: params})
	}
	return out
}

func responseToProto(r *engine.ModelResponse) *pb.CompleteResponse {
	return &pb.CompleteResponse{
		Text:      r.Text,
		ToolCalls: toolCallsToProto(r.ToolCalls),
		Usage:     &pb.Usage{PromptTokens: int64(r.Usage.PromptTokens), CompletionTokens: int64(r.Usage.CompletionTokens)},
	}
}

func responseFromProto(p *pb.CompleteResponse) *engine.ModelResponse {
	return &engine.ModelResponse{
		Text:      p.GetText(),
		ToolCalls: toolCallsFromProto(p.GetToolCalls()),
		Usage: engine.Usage{
			PromptTokens:     int(p.GetUsage().GetPromptTokens()),
			CompletionTokens: int(p.GetUsage().GetCompletionTokens()),
		},
	}
}
