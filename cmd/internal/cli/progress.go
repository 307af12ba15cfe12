package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Bar draws a progress bar "[#####.....]" width characters wide, done of
// total filled.
func Bar(done, total, width int) string {
	n := 0
	if total > 0 {
		n = min(done*width/total, width)
	}
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}

// IsTerminal reports whether w is a terminal (progress is drawn only there).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressReader draws a Bar of the bytes read from r on w, redrawn at
// each whole percent.
type progressReader struct {
	r           io.Reader
	w           io.Writer
	what        string
	read, total int64
	shown       int64 // percent last drawn
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.read += int64(n)
	if pct := p.read * 100 / max(p.total, 1); pct != p.shown || err == io.EOF {
		p.shown = pct
		fmt.Fprintf(p.w, "\r%s %d/%d MB %s", Bar(int(p.read>>10), int(p.total>>10), 20), p.read>>20, p.total>>20, p.what)
		if err == io.EOF {
			fmt.Fprintln(p.w)
		}
	}
	return n, err
}
