package shared

import (
	"context"

	pb "github.com/engine-dev/engine/plugins/proto/v1"
)

// Plugin side: the gRPC servers that call a Go implementation.

type browserServer struct {
	pb.UnimplementedBrowserServer
	impl Browser
}

func (s *browserServer) Describe(context.Context, *pb.Empty) (*pb.PluginInfo, error) {
	return infoToProto(s.impl.Describe()), nil
}

func (s *browserServer) Open(ctx context.Context, r *pb.OpenRequest) (*pb.Empty, error) {
	if err := s.impl.Open(ctx, r.GetOptions()); err != nil {
		return nil, toStatus(err)
	}
	return &pb.Empty{}, nil
}

func (s *browserServer) Navigate(ctx context.Context, r *pb.NavigateRequest) (*pb.ActResult, error) {
	return actionErrorToProto(s.impl.Navigate(ctx, r.GetUrl()))
}

// SnapshotBounds is implemented by browsers that honour per-call size
// bounds; the server calls it before Snapshot when the request has any.
type SnapshotBounds interface {
	SetSnapshotBounds(maxTree, maxText int)
}

func (s *browserServer) Snapshot(ctx context.Context, r *pb.SnapshotRequest) (*pb.PageSnapshot, error) {
	if b, ok := s.impl.(SnapshotBounds); ok && (r.GetMaxTreeBytes() > 0 || r.GetMaxTextBytes() > 0) {
		b.SetSnapshotBounds(int(r.GetMaxTreeBytes()), int(r.GetMaxTextBytes()))
	}
	snap, err := s.impl.Snapshot(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return snapshotToProto(snap), nil
}

func (s *browserServer) Act(ctx context.Context, a *pb.Action) (*pb.ActResult, error) {
	return actionErrorToProto(s.impl.Act(ctx, actionFromProto(a)))
}

func (s *browserServer) Screenshot(ctx context.Context, _ *pb.Empty) (*pb.ScreenshotResponse, error) {
	png, err := s.impl.Screenshot(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.ScreenshotResponse{Png: png}, nil
}

func (s *browserServer) Close(context.Context, *pb.Empty) (*pb.Empty, error) {
	if err := s.impl.Close(); err != nil {
		return nil, toStatus(err)
	}
	return &pb.Empty{}, nil
}

type modelServer struct {
	pb.UnimplementedModelServer
	impl Model
}

func (s *modelServer) Describe(context.Context, *pb.Empty) (*pb.PluginInfo, error) {
	return infoToProto(s.impl.Describe()), nil
}

func (s *modelServer) Open(ctx context.Context, r *pb.OpenRequest) (*pb.Empty, error) {
	if err := s.impl.Open(ctx, r.GetOptions()); err != nil {
		return nil, toStatus(err)
	}
	return &pb.Empty{}, nil
}

func (s *modelServer) Complete(ctx context.Context, r *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	resp, err := s.impl.Complete(ctx, requestFromProto(r))
	if err != nil {
		return nil, toStatus(err)
	}
	ClipResponse(resp)
	return responseToProto(resp), nil
}
