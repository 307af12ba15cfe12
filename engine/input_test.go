package engine

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An endless input (/dev/zero, a pipe that never ends) is refused once it
// passes the limit, with a bad-input error naming the limit; anything up to
// the limit is read whole.
func TestInputLimits(t *testing.T) {
	b, err := ReadInput(strings.NewReader("12345"), 5)
	if err != nil || string(b) != "12345" {
		t.Fatalf("at the limit: %q %v", b, err)
	}
	if _, err := ReadInput(strings.NewReader("123456"), 5); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("past the limit: %v", err)
	}
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Skip(err)
	}
	defer zero.Close()
	if _, err := ReadInput(zero, 1<<20); !errors.Is(err, ErrInvalid) {
		t.Fatalf("/dev/zero: %v", err)
	}
	if _, err := ReadInputFile("/dev/zero", 1<<20); !errors.Is(err, ErrInvalid) {
		t.Fatalf("/dev/zero by path: %v", err)
	}

	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, make([]byte, 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadInputFile(big, 1<<20); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "1 MiB") {
		t.Fatalf("a file known to be too large: %v", err)
	}
	if _, err := ReadInputFile(filepath.Join(t.TempDir(), "missing"), 1<<20); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}

	// A streaming reader (a line scanner) stops at the limit too.
	sc := bufio.NewScanner(LimitInput(strings.NewReader(strings.Repeat("line\n", 1000)), 100))
	lines := 0
	for sc.Scan() {
		lines++
	}
	if !errors.Is(sc.Err(), ErrInvalid) || lines > 21 {
		t.Fatalf("scanner: %d lines, %v", lines, sc.Err())
	}
	if b, err := io.ReadAll(LimitInput(strings.NewReader("abc"), 3)); err != nil || string(b) != "abc" {
		t.Fatalf("within the limit: %q %v", b, err)
	}
}
