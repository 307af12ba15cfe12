package kv_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// kv is the interface alone: no store's dependencies come with it.
func TestKVLeavesOutBadger(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", "github.com/engine-dev/engine/kv").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/engine-dev/engine/kv") {
		t.Fatalf("go list -deps did not list kv itself: %s", out)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/dgraph-io/") || strings.HasPrefix(d, "github.com/engine-dev/engine/kv/") || strings.HasPrefix(d, "golang.org/x/sys") {
			t.Errorf("kv depends on %s", d)
		}
	}
}

// A Staging over a store honours the contract, except where a commit must
// land while a transaction is open: its transactions run one at a time.
func TestStagingConformance(t *testing.T) {
	const serial = "kv.Staging runs transactions one at a time: a commit waits for the open transaction"
	kvtest.RunSkipping(t, func(t *testing.T) kv.Store { return kv.NewStaging(badgertest.OpenMemory(t)) }, map[string]string{
		kvtest.SnapshotIsolation: serial,
		kvtest.ConflictOnRead:    serial,
		kvtest.GuardKey:          serial,
	})
}

func TestPrefixEnd(t *testing.T) {
	for _, c := range []struct{ in, want string }{{"a/", "a0"}, {"a\xff", "b"}, {"\xff\xff", ""}} {
		if got := string(kv.PrefixEnd([]byte(c.in))); got != c.want {
			t.Errorf("PrefixEnd(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
