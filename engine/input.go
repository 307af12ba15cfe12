package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxInputFile is the most the engine reads of one file of outside input
// (an import, an action log, a rules, cases, plan or trajectory file):
// room for an export of several hundred thousand lessons, and a bound that
// turns a mistaken /dev/zero or a multi-gigabyte file into a clear error
// instead of a process that fills memory until it is killed.
const MaxInputFile = 256 << 20

// ReadInput reads all of r, refusing more than max bytes with an
// *InvalidError that names the limit. Read errors are returned as they are.
func ReadInput(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(LimitInput(r, max))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// ReadInputFile is os.ReadFile bounded by max: a regular file known to be
// larger is refused before it is read, anything else (a pipe, a device) as
// soon as more than max bytes came. Errors from opening path are returned
// as they are (an *os.PathError).
func ReadInputFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > max {
		return nil, tooLarge(max)
	}
	return ReadInput(f, max)
}

// LimitInput wraps r for a reader that streams (a line scanner): past max
// bytes it fails with the same error ReadInput gives.
func LimitInput(r io.Reader, max int64) io.Reader { return &limitedInput{r: r, left: max, max: max} }

type limitedInput struct {
	r         io.Reader
	left, max int64
}

func (l *limitedInput) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, tooLarge(l.max)
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, tooLarge(l.max)
	}
	return n, err
}

func tooLarge(max int64) error {
	limit := fmt.Sprintf("%d bytes", max)
	if max >= 1<<20 {
		limit = fmt.Sprintf("%d MiB", max>>20)
	}
	return &InvalidError{Problem: fmt.Sprintf("the input is larger than the %s limit for one file (is it the right file?)", limit)}
}

// JSONLine is the line, counted from 1, of b on which err, an error from
// decoding b as JSON, happened: where its *json.SyntaxError or
// *json.UnmarshalTypeError says. ok is false for an error that says no
// place.
func JSONLine(b []byte, err error) (line int, ok bool) {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return lineAt(b, se.Offset), true
	case errors.As(err, &te):
		return lineAt(b, te.Offset), true
	}
	return 0, false
}

// lineAt is the line, counted from 1, of b's byte at offset off.
func lineAt(b []byte, off int64) int {
	return bytes.Count(b[:min(int(off), len(b))], []byte("\n")) + 1
}

// JSONProblem is err, an error from decoding the outside input b as JSON,
// told with the line it happened on ("line 3: …"), and input that ends
// early told as a file cut short; an error that says no place is returned
// as it is. The messages name lines, not byte offsets, as a person editing
// the file counts.
func JSONProblem(b []byte, err error) error {
	line, ok := JSONLine(b, err)
	if !ok {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return fmt.Errorf("line %d: unexpected end of file (is it truncated?)", lineAt(b, int64(len(b))))
		}
		return err
	}
	var se *json.SyntaxError
	if errors.As(err, &se) && strings.Contains(se.Error(), "unexpected end of JSON input") {
		return fmt.Errorf("line %d: unexpected end of file (is it truncated?)", line)
	}
	return fmt.Errorf("line %d: %s", line, JSONError(err))
}
