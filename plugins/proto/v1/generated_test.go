package pluginv1

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// protocVersion is the header line naming protoc's version, which follows
// the distribution's protobuf-compiler rather than our pins.
var protocVersion = regexp.MustCompile(`(?m)^//\s+protoc\s+(v\S+|\(unknown\))$`)

func withoutProtocVersion(b []byte) []byte {
	return protocVersion.ReplaceAll(b, nil)
}

// TestGeneratedCodeIsFresh regenerates the Go code from plugin.proto with
// the pinned generators (scripts/gen-proto.sh) into a temp dir and fails if
// the committed files differ: run `make proto` and commit. Without the
// tools (scripts/install-deps.sh installs them) it skips, except in CI.
func TestGeneratedCodeIsFresh(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(root, "bin", "tools")
	_, errProtoc := exec.LookPath("protoc")
	_, errGen := os.Stat(filepath.Join(tools, "protoc-gen-go-grpc"))
	if errProtoc != nil || errGen != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("protoc or the pinned generators are missing; run scripts/install-deps.sh")
		}
		t.Skip("protoc or the pinned generators are missing; run scripts/install-deps.sh")
	}
	out := t.TempDir()
	cmd := exec.Command(filepath.Join(root, "scripts", "gen-proto.sh"), out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-proto.sh: %v\n%s", err, b)
	}
	for _, f := range []string{"plugin.pb.go", "plugin_grpc.pb.go"} {
		fresh, err := os.ReadFile(filepath.Join(out, "v1", f))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(withoutProtocVersion(fresh), withoutProtocVersion(committed)) {
			t.Errorf("plugins/proto/v1/%s is stale: run `make proto` (scripts/gen-proto.sh) and commit it", f)
		}
	}
}
