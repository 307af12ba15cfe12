package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/memory"
)

// A second engine on a data dir another process is writing gets a clear
// error naming the holder and what to do, never badger's own message.
func TestSecondProcessOnDataDir(t *testing.T) {
	dir := t.TempDir()
	held, err := memory.Open(context.Background(), dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	var stdout, stderr bytes.Buffer
	code := Main([]string{"--data-dir", dir, "query", "lessons"}, strings.NewReader(""), &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr: %s", code, &stderr)
	}
	want := fmt.Sprintf("data dir %s is in use by process %d", filepath.Join(dir, "db"), os.Getpid())
	msg := stderr.String()
	if !strings.Contains(msg, want) || !strings.Contains(msg, "use another --data-dir") {
		t.Fatalf("stderr = %q, want it to contain %q and what to do", msg, want)
	}
	if strings.Contains(msg, "Badger") || strings.Contains(msg, "goroutine") {
		t.Fatalf("raw badger error or stack leaked: %q", msg)
	}
}
