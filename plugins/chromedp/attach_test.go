package chromedp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// debug_url attaches to a chromium that is already running (started here by
// hand with a debugging port) instead of starting one.
func TestPluginChromedpAttach(t *testing.T) {
	needChromium(t)
	path, _ := FindChromium(os.Getenv("ENGINE_CHROMIUM"))
	// Not t.TempDir: chromium's helper processes may still write into the
	// profile for a moment after the browser is killed.
	dir, err := os.MkdirTemp("", "attach-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for i := 0; i < 20 && os.RemoveAll(dir) != nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	}()
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--remote-debugging-port=0", "--user-data-dir="+dir, "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var port string
	deadline := time.Now().Add(15 * time.Second)
	for port == "" {
		if b, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort")); err == nil {
			if lines := strings.Split(string(b), "\n"); len(lines) > 1 && lines[0] != "" {
				port = lines[0]
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("chromium did not write DevToolsActivePort")
		}
		time.Sleep(20 * time.Millisecond)
	}

	ts := server(t)
	b := New()
	ctx := context.Background()
	if err := b.Open(ctx, map[string]string{"debug_url": "http://127.0.0.1:" + port}); err != nil {
		t.Fatal(err)
	}
	if b.Profile() != "" {
		t.Fatalf("attached, yet made a profile %q", b.Profile())
	}
	if err := b.Navigate(ctx, ts.URL+"/next"); err != nil {
		t.Fatal(err)
	}
	s, err := b.Snapshot(ctx)
	if err != nil || s.Title != "Next" {
		t.Fatalf("snapshot %+v %v", s, err)
	}
	b.Close()
	// Closing detaches and closes our tab; the browser we attached to lives on.
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the attached browser was killed: %v", err)
	}
}
