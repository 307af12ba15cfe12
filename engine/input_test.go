package engine

import (
	"bufio"
	"encoding/json"
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

// A JSON decoding error is told with the line it is on; input cut short is
// told as such; an error that says no place is returned as it is.
func TestJSONProblem(t *testing.T) {
	decode := func(s string) error {
		var v struct{ N int }
		dec := json.NewDecoder(strings.NewReader(s))
		dec.DisallowUnknownFields()
		return dec.Decode(&v)
	}
	unmarshal := func(s string) error { var v struct{ N int }; return json.Unmarshal([]byte(s), &v) }
	for _, c := range []struct {
		in   string
		err  error
		want string
		line int
	}{
		{"{\n\"N\": 1,\n x}", decode("{\n\"N\": 1,\n x}"), "line 3: invalid character 'x' looking for beginning of object key string", 3},
		{"{\n\"N\": \"a\"}", decode("{\n\"N\": \"a\"}"), `line 2: N: want an integer, not a string`, 2},
		{"{\n\"N\": 1,\n", decode("{\n\"N\": 1,\n"), "line 3: unexpected end of file (is it truncated?)", 0},
		{"{\n\"N\": 1,\n", unmarshal("{\n\"N\": 1,\n"), "line 3: unexpected end of file (is it truncated?)", 3},
		{"{\"M\": 1}", decode("{\"M\": 1}"), `json: unknown field "M"`, 0},
	} {
		if got := JSONProblem([]byte(c.in), c.err); got.Error() != c.want {
			t.Errorf("JSONProblem(%q, %v) = %q, want %q", c.in, c.err, got, c.want)
		}
		if line, ok := JSONLine([]byte(c.in), c.err); line != c.line || ok != (c.line > 0) {
			t.Errorf("JSONLine(%q, %v) = %d %v, want %d", c.in, c.err, line, ok, c.line)
		}
	}
	plain := errors.New("no place")
	if got := JSONProblem(nil, plain); got != plain {
		t.Errorf("an error with no place became %v", got)
	}
}
