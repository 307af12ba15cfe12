// Package doctor checks an engine installation: the data dir (its size, the
// schema stamp, the store backend, who holds it) and which provider keys are
// set. Checks that need plugins (chromium, the plugin list) live in plugins/
// and are turned into Checks by the CLI.
//
// Every check is read-only: a data dir that does not exist is reported, not
// created, and the database is held only for the moment it takes to read the
// schema stamp.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/keyspace"
	"github.com/engine-dev/engine/engine/lesson"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/service"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger"
)

// Status is a check's outcome.
type Status string

const (
	OK   Status = "ok"   // works
	Warn Status = "warn" // works, but something is missing or odd
	Fail Status = "fail" // broken
)

// Check is one line of the doctor's report.
type Check struct {
	Name     string `json:"name"`
	Status   Status `json:"status"`
	Detail   string `json:"detail"`
	Required bool   `json:"required"` // a failure of a required check fails the doctor
	// Data is the check's findings for --json (paths, versions, names).
	Data any `json:"data,omitempty"`
}

// Broken reports whether c is a required check that failed.
func (c Check) Broken() bool { return c.Required && c.Status == Fail }

// DataDirInfo is what DataDir found.
type DataDirInfo struct {
	Path      string `json:"path"`
	Exists    bool   `json:"exists"`
	SizeBytes int64  `json:"size_bytes"` // on disk
	Database  string `json:"database"`   // <path>/db
	Backend   string `json:"backend"`
	// Schema is the stored schema version (0: none stored or not read);
	// SchemaSupported is the newest this engine reads.
	Schema          int `json:"schema"`
	SchemaSupported int `json:"schema_supported"`
	// InUse is the process holding the data dir, when one does.
	InUse *badger.LockedError `json:"in_use,omitempty"`
}

// DataDir checks the data dir dir (database at dir/db): whether it exists
// and how much disk it takes, the schema stamp, the backend, and whether
// another process holds it. It creates nothing; it holds the database's lock
// only while it reads the schema stamp, and never waits for it.
func DataDir(ctx context.Context, dir string) ([]Check, DataDirInfo) {
	info := DataDirInfo{Path: dir, Database: filepath.Join(dir, "db"), Backend: "badger",
		SchemaSupported: keyspace.SchemaVersion}
	dirCheck := Check{Name: "data dir", Required: true, Data: &info}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dirCheck.Status, dirCheck.Detail = OK, dir+" (does not exist yet: the first command that writes memory creates it)"
		return []Check{dirCheck, {Name: "backend", Status: OK, Detail: info.Backend}}, info
	case err != nil:
		dirCheck.Status, dirCheck.Detail = Fail, err.Error()
		return []Check{dirCheck}, info
	case !st.IsDir():
		dirCheck.Status, dirCheck.Detail = Fail, dir+" is not a directory"
		return []Check{dirCheck}, info
	}
	info.Exists = true
	info.SizeBytes, err = diskUsage(dir)
	if err != nil {
		dirCheck.Status, dirCheck.Detail = Fail, fmt.Sprintf("%s: %v", dir, err)
		return []Check{dirCheck}, info
	}
	dirCheck.Status, dirCheck.Detail = OK, fmt.Sprintf("%s (%s)", dir, HumanBytes(info.SizeBytes))

	schema := Check{Name: "schema", Required: true}
	lock := Check{Name: "in use", Status: OK, Detail: "no"}
	if _, err := os.Stat(info.Database); errors.Is(err, fs.ErrNotExist) {
		schema.Status, schema.Detail = OK, "no database yet"
	} else {
		v, err := readSchema(ctx, info.Database)
		var le *badger.LockedError
		switch {
		case errors.As(err, &le):
			info.InUse = le
			lock.Detail = holder(le)
			lock.Data = le
			schema.Status, schema.Detail = Warn, "not read: the data dir is in use"
			// A holder that serves the data dir answers for it.
			if h, sock, err := served(ctx, dir); err == nil {
				info.Schema = h.Schema
				lock.Detail += ", serving " + sock
				schema.Status, schema.Detail = OK, fmt.Sprintf("version %d (this engine reads up to %d), read through the memory server", h.Schema, keyspace.SchemaVersion)
			}
		case err != nil:
			schema.Status, schema.Detail = Fail, err.Error()
		case v == 0:
			schema.Status, schema.Detail = Warn, "no schema stamp (the next command that opens the data dir writes it)"
		case v > keyspace.SchemaVersion:
			info.Schema = v
			schema.Status, schema.Detail = Fail, fmt.Sprintf("version %d, written by a newer engine (this one reads up to %d): upgrade engine", v, keyspace.SchemaVersion)
		default:
			info.Schema = v
			schema.Status, schema.Detail = OK, fmt.Sprintf("version %d (this engine reads up to %d)", v, keyspace.SchemaVersion)
		}
	}
	return []Check{dirCheck, schema, {Name: "backend", Status: OK, Detail: info.Backend}, lock}, info
}

// served asks the memory server on dir's socket, if any, for its health.
func served(ctx context.Context, dir string) (*api.Health, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	sc, err := service.Dial(ctx, dir)
	if err != nil {
		return nil, "", err
	}
	defer sc.CloseIdleConnections()
	h, err := api.NewClient(sc.HTTP, sc.BaseURL, api.ClientOptions{}).Health(ctx)
	return h, sc.Server, err
}

// readSchema opens the database without waiting for its lock and reads the
// schema stamp (0 when there is none). It writes nothing.
func readSchema(ctx context.Context, db string) (int, error) {
	s, err := badger.Open(ctx, db, badger.Options{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	v, err := kv.Get(ctx, s, keyspace.Schema())
	cerr := s.Close()
	if errors.Is(err, kv.ErrNotFound) {
		return 0, cerr
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return 0, fmt.Errorf("schema version %q is not a number: the data dir is damaged", v)
	}
	return n, cerr
}

func holder(le *badger.LockedError) string {
	if le.PID == 0 {
		return "yes, by another process"
	}
	s := fmt.Sprintf("yes, by process %d", le.PID)
	if le.Command != "" {
		s += " (" + le.Command + ")"
	}
	if !le.Since.IsZero() {
		s += " since " + le.Since.Format("2006-01-02 15:04:05Z07:00")
	}
	return s
}

// diskUsage is the disk space the files under dir take (like du).
func diskUsage(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) { // removed while we walk
				return nil
			}
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			n += st.Blocks * 512
		} else if fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n, err
}

// HumanBytes formats n as 12 B, 3.4 KiB, 5.6 MiB, ...
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Keys reports which of the environment variables names are set, by name
// only: values (API keys) never appear in the check. None set is a warning,
// not a failure: the scripted provider needs no key.
func Keys(names []string, lookup func(string) (string, bool)) Check {
	var set, unset []string
	for _, n := range names {
		if v, ok := lookup(n); ok && v != "" {
			set = append(set, n)
		} else {
			unset = append(unset, n)
		}
	}
	c := Check{Name: "provider keys", Status: OK, Data: map[string][]string{"set": nonNil(set), "unset": nonNil(unset)}}
	if len(set) == 0 {
		c.Status = Warn
		c.Detail = "none set (" + strings.Join(unset, ", ") + "): only the scripted LLM works"
		return c
	}
	c.Detail = "set: " + strings.Join(set, ", ")
	if len(unset) > 0 {
		c.Detail += "; not set: " + strings.Join(unset, ", ")
	}
	return c
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Lessons checks the lesson store of data dir dir (lesson.Store.Check:
// records that do not decode, index entries that are wrong or missing),
// opening it read-only for as long as that takes. It is not run on a data
// dir another process holds (info.InUse) or that has no database yet.
func Lessons(ctx context.Context, dir string, info DataDirInfo) Check {
	c := Check{Name: "lessons", Status: OK}
	switch {
	case !info.Exists:
		c.Detail = "no data dir yet"
		return c
	case info.InUse != nil:
		c.Detail = "not checked: the data dir is in use (" + holder(info.InUse) + ")"
		return c
	}
	if _, err := os.Stat(info.Database); errors.Is(err, fs.ErrNotExist) {
		c.Detail = "no database yet"
		return c
	}
	m, err := memory.Open(ctx, dir, memory.Options{ReadOnly: true, LockWait: -1})
	if err != nil {
		c.Status, c.Detail = Warn, "not checked: "+err.Error()
		return c
	}
	defer m.Close()
	h, err := m.Lessons.Check(ctx)
	if err != nil {
		c.Status, c.Detail = Fail, err.Error()
		return c
	}
	c.Data = h
	c.Detail = describeHealth(h)
	if !h.OK() {
		c.Status = Warn
		c.Detail += ": recall and lists skip them; engine doctor --repair rebuilds the indexes"
	}
	return c
}

// Repair rebuilds the lesson indexes of data dir dir from the lesson
// records (lesson.Store.Repair), holding the data dir: a data dir another
// process holds (a memory server, a run) is refused with its holder named.
func Repair(ctx context.Context, dir string) (lesson.Health, error) {
	m, err := memory.Open(ctx, dir, memory.Options{LockWait: -1})
	if err != nil {
		return lesson.Health{}, fmt.Errorf("repair: %w", err)
	}
	h, err := m.Lessons.Repair(ctx)
	return h, errors.Join(err, m.Close())
}

// describeHealth says what a lesson check found, in one line.
func describeHealth(h lesson.Health) string {
	s := fmt.Sprintf("%d records", h.Records)
	if h.OK() {
		s += ", indexes sound"
	} else {
		s += fmt.Sprintf(", %d damaged, %d wrong and %d missing index entries", h.Damaged, h.BadEntries, h.MissingEntries)
	}
	if h.MovedAside > 0 {
		s += fmt.Sprintf(" (%d damaged records moved aside by an earlier repair, under damaged/)", h.MovedAside)
	}
	return s
}
