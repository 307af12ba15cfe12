// Command rawllm is an engine LLM plugin written from plugins/README.md
// alone: plain gRPC and the generated stubs, without go-plugin or any
// engine package, as a plugin in another language would be. It answers
// every request with the last message, reversed, and calls no tools.
//
// Build it as engine-plugin-rawllm and put it in $ENGINE_PLUGIN_DIR.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	pb "github.com/engine-dev/engine/plugins/proto/v1"
)

const (
	cookieKey   = "ENGINE_PLUGIN_MAGIC_COOKIE"
	cookieValue = "5b0b2a4c6f1e4e53a1f0d3c8e2b7a9d4-engine-plugin"
	appVersion  = "1"
)

// logf writes one hclog-style JSON line on stderr.
func logf(level, msg string, kv ...any) {
	m := map[string]any{"@level": level, "@message": msg, "@timestamp": time.Now().Format("2006-01-02T15:04:05.000000Z07:00")}
	for i := 0; i+1 < len(kv); i += 2 {
		m[fmt.Sprint(kv[i])] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	fmt.Fprintln(os.Stderr, string(b))
}

type model struct {
	pb.UnimplementedModelServer
	prefix string
}

func (m *model) Describe(context.Context, *pb.Empty) (*pb.PluginInfo, error) {
	return &pb.PluginInfo{Name: "rawllm", Version: "0.1.0", Kind: "llm", Capabilities: []string{"usage"},
		ProtocolVersion: 1, Description: "reverses the last message (plain gRPC example)"}, nil
}

func (m *model) Open(_ context.Context, r *pb.OpenRequest) (*pb.Empty, error) {
	if r.GetOptions()["model"] == "fail" {
		return nil, status.Error(codes.InvalidArgument, "rawllm: model \"fail\" does not exist")
	}
	m.prefix = r.GetOptions()["model"]
	return &pb.Empty{}, nil
}

func (m *model) Complete(ctx context.Context, r *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	last := ""
	if n := len(r.GetMessages()); n > 0 {
		last = r.GetMessages()[n-1].GetContent()
	}
	logf("info", "completing", "last", last)
	rs := []rune(last)
	slices.Reverse(rs)
	text := m.prefix + ":" + string(rs)
	return &pb.CompleteResponse{Text: text, Usage: &pb.Usage{PromptTokens: int64(len(last)), CompletionTokens: int64(len(text))}}, nil
}

func main() {
	if os.Getenv(cookieKey) != cookieValue {
		fmt.Fprintln(os.Stderr, "rawllm is an engine plugin; the engine starts it (--llm rawllm)")
		os.Exit(1)
	}
	versions := strings.Split(os.Getenv("PLUGIN_PROTOCOL_VERSIONS"), ",")
	if !slices.Contains(versions, appVersion) {
		logf("warn", "the engine does not offer protocol version 1", "offered", versions)
	}
	dir := os.Getenv("PLUGIN_UNIX_SOCKET_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	sock := filepath.Join(dir, fmt.Sprintf("rawllm-%d.sock", os.Getpid()))
	// A socket by this name is a left-over of an earlier process with our
	// pid that was killed before it could remove it: no live process holds
	// our pid, so it is stale.
	_ = os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		logf("error", "listen", "error", err.Error())
		os.Exit(1)
	}
	defer os.Remove(sock)

	srv := grpc.NewServer()
	pb.RegisterModelServer(srv, &model{})
	h := health.NewServer()
	h.SetServingStatus("plugin", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, h)

	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		srv.Stop()
	}()
	// The handshake line, then nothing else on stdout.
	fmt.Printf("1|%s|unix|%s|grpc\n", appVersion, sock)
	logf("debug", "serving", "socket", sock)
	if err := srv.Serve(ln); err != nil {
		logf("error", "serve", "error", err.Error())
	}
}
