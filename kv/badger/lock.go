package badger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// lockFile is the file in a data dir that an open store holds an exclusive
// flock on. It also records who holds it, so a second process can say so.
const lockFile = "engine.lock"

// LockedError reports that another process holds the data dir.
type LockedError struct {
	Dir     string    `json:"dir"`
	PID     int       `json:"pid"`     // 0 when the holder is unknown
	Command string    `json:"command"` // the holder's command line, when known
	Since   time.Time `json:"since"`   // when the holder opened the dir, when known
}

func (e *LockedError) Error() string {
	who := "another process"
	if e.PID != 0 {
		who = fmt.Sprintf("process %d", e.PID)
		if e.Command != "" {
			who += fmt.Sprintf(" (%s)", e.Command)
		}
		if !e.Since.IsZero() {
			who += " since " + e.Since.Format(time.RFC3339)
		}
	}
	return fmt.Sprintf("data dir %s is in use by %s: wait for it to finish, stop it, or use another --data-dir", e.Dir, who)
}

// lockHolder is what the lock file records about the process holding it.
type lockHolder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

type dirLock struct{ f *os.File }

// acquireDirLock takes an exclusive, non-blocking flock on dir/engine.lock,
// retrying until timeout. The kernel drops the flock when the process dies,
// so a kill -9 never leaves a stale lock behind.
func acquireDirLock(ctx context.Context, dir string, timeout time.Duration) (*dirLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("kv: create data dir: %w", err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("kv: open lock file: %w", err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("kv: lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			lerr := &LockedError{Dir: dir}
			if b, rerr := os.ReadFile(path); rerr == nil {
				var h lockHolder
				if json.Unmarshal(b, &h) == nil {
					lerr.PID, lerr.Command, lerr.Since = h.PID, h.Command, h.Since
				}
			}
			f.Close()
			return nil, lerr
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	h, _ := json.Marshal(lockHolder{PID: os.Getpid(), Command: commandLine(), Since: time.Now().UTC().Truncate(time.Second)})
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(append(h, '\n'), 0)
	}
	return &dirLock{f: f}, nil
}

func (l *dirLock) release() {
	_ = l.f.Truncate(0)
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
}

// commandLine is this process's command line, shortened for a message.
func commandLine() string {
	args := append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...)
	s := strings.Join(args, " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// Private makes dir readable by its owner only: the directory 0700 and
// every regular file directly in it 0600, when looser. Badger creates its
// files with the process's umask (often 0644), so Open and Close apply it
// after badger has made or changed its files, and a dir an older engine
// created 0755 is tightened on its next open.
func Private(dir string) error {
	if err := tighten(dir, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := tighten(filepath.Join(dir, e.Name()), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// tighten removes from path's mode every permission bit that max lacks;
// a mode already within max, or a file gone, is left alone.
func tighten(path string, max os.FileMode) error {
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	perm := fi.Mode().Perm()
	if perm&^max == 0 {
		return nil
	}
	// Badger may remove a file meanwhile (a compaction): nothing to do.
	if err := os.Chmod(path, perm&max); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("make %s private: %w", path, err)
	}
	return nil
}
