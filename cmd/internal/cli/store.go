package cli

import (
	"errors"
	"io"

	"github.com/engine-dev/engine/engine/event"
)

// events returns the sink for memory events: the --events file when given,
// else nothing. The returned close func reports a failed write.
func (a *App) Events() (event.Func, func() error, error) {
	if a.eventsPath == "" {
		return nil, func() error { return nil }, nil
	}
	j, err := event.AppendFile(a.eventsPath)
	if err != nil {
		return nil, nil, err
	}
	return j.Write, j.Close, nil
}

// CloseInto closes c and joins its error into *err: deferred in commands so
// a failed close (an --events file that could not be written) is reported,
// not dropped.
func CloseInto(err *error, c io.Closer) { *err = errors.Join(*err, c.Close()) }
