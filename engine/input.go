package engine

import (
	"fmt"
	"io"
	"os"
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
