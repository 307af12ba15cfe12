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
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/server/service"
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
	InUse *memory.LockedError `json:"in_use,omitempty"`
}

// DataDir checks the data dir dir (database at dir/db): whether it exists
// and how much disk it takes, the schema stamp, the backend, and whether
// another process holds it. It creates nothing; it holds the database's lock
// only while it reads the schema stamp, and never waits for it.
func DataDir(ctx context.Context, dir string) ([]Check, DataDirInfo) {
	info := DataDirInfo{Path: dir, Database: memory.Dir(dir), Backend: "badger",
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
		v, err := readSchema(ctx, dir)
		var le *memory.LockedError
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
		case errors.Is(err, memory.ErrReplayDue):
			// Not damage: any command (or --repair) opens it read-write,
			// which the doctor does not.
			schema.Status, schema.Detail = Warn, replayDue
		case err != nil:
			schema.Status, schema.Detail = Fail, err.Error()
		default:
			info.Schema = v
			describeSchema(&schema, v)
		}
	}
	return []Check{dirCheck, schema, {Name: "backend", Status: OK, Detail: info.Backend}, lock, Socket(ctx, dir)}, info
}

// replayDue is what a check that could not read a database left unclean
// says instead.
const replayDue = "not read: the database was not closed cleanly (its last holder was killed); the next command that opens it replays its log, losing nothing committed (engine doctor --repair does it now)"

// Socket checks the data dir's socket path (<dir>/engine.sock): no file
// there, a socket a memory server answers on, or a stale one (the next
// engine serve replaces it) are fine; anything else there (a regular file,
// a directory) is a warning naming it: every command then opens the data
// dir itself, and engine serve refuses to start until it is moved away.
func Socket(ctx context.Context, dir string) Check {
	c := Check{Name: "socket", Status: OK}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	sc, err := service.Dial(ctx, dir)
	var ns *service.NotSocketError
	var nserved *service.NotServedError
	switch {
	case err == nil:
		sc.CloseIdleConnections()
		c.Detail = sc.Server + " (a memory server answers)"
	case errors.As(err, &ns):
		c.Status, c.Detail = Warn, ns.Error()+"; commands open the data dir themselves"
	case errors.As(err, &nserved):
		c.Detail = nserved.Socket + ": " + nserved.Reason
	default:
		c.Status, c.Detail = Warn, err.Error()
	}
	return c
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

// readSchema opens data dir dir's database without waiting for its lock
// and reads the schema stamp (0 when there is none). It writes nothing.
func readSchema(ctx context.Context, dir string) (int, error) {
	in, err := memory.Inspect(ctx, dir, nil)
	if err != nil {
		return 0, err
	}
	v, err := in.Schema(ctx)
	return v, errors.Join(err, in.Close())
}

// describeSchema is the schema check's outcome for stamp v.
func describeSchema(c *Check, v int) {
	switch {
	case v == 0:
		c.Status, c.Detail = Warn, "no schema stamp (the next command that opens the store writes it)"
	case v > keyspace.SchemaVersion:
		c.Status, c.Detail = Fail, fmt.Sprintf("version %d, written by a newer engine (this one reads up to %d): upgrade engine", v, keyspace.SchemaVersion)
	default:
		c.Status, c.Detail = OK, fmt.Sprintf("version %d (this engine reads up to %d)", v, keyspace.SchemaVersion)
	}
}

// Store is the memory the doctor checks and repairs: the data dir's own
// badger database (the zero value) or a store several processes share,
// and one namespace of it.
type Store struct {
	// Open opens the shared store (etcd) in place of the data dir's
	// database; nil for the data dir's own.
	Open memory.StoreOpener
	// URL names the shared store in the report (etcd://HOST:PORT).
	URL string
	// Namespace is the namespace checked and repaired; "" or "-" is the
	// default.
	Namespace string
}

// Where names the store and namespace st points at, for messages: the
// data dir dir or the shared store's URL, and a named namespace.
func (st Store) Where(dir string) string {
	s := dir
	if st.Open != nil {
		s = st.URL
	}
	if st.Namespace != "" && st.Namespace != memory.DefaultNamespace {
		s += ", namespace " + st.Namespace
	}
	return s
}

// SharedStore checks a shared store in place of DataDir's database: the
// data dir (it still holds run folders; its absence is fine), that the
// store answers, and its schema stamp. No lock applies: several processes
// use the store at once.
func SharedStore(ctx context.Context, dir string, st Store) ([]Check, DataDirInfo) {
	info := DataDirInfo{Path: dir, Database: st.URL, Backend: "etcd", SchemaSupported: keyspace.SchemaVersion}
	dirCheck := Check{Name: "data dir", Status: OK, Required: true, Data: &info, Detail: dir + " (run folders only: memory is in " + st.URL + ")"}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		dirCheck.Status, dirCheck.Detail = Fail, dir+" is not a directory"
	}
	backend := Check{Name: "backend", Status: OK, Detail: "etcd at " + st.URL}
	schema := Check{Name: "schema", Required: true}
	in, err := memory.Inspect(ctx, dir, st.Open)
	if err != nil {
		backend.Status, backend.Required, backend.Detail = Fail, true, err.Error()
		schema.Status, schema.Detail = Warn, "not read: the store does not answer"
		return []Check{dirCheck, backend, schema, Socket(ctx, dir)}, info
	}
	defer in.Close()
	info.Exists = true
	v, err := in.Schema(ctx)
	if err != nil {
		schema.Status, schema.Detail = Fail, err.Error()
	} else {
		info.Schema = v
		describeSchema(&schema, v)
	}
	return []Check{dirCheck, schema, backend, Socket(ctx, dir)}, info
}

func holder(le *memory.LockedError) string {
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

// Lessons checks the lesson store of data dir dir, or of st's shared
// store, in st's namespace (lesson.Store.Check: records that do not
// decode, index entries that are wrong or missing), and whether an import
// stopped part way there (its undo journal still marked active, so later
// imports are refused). It opens the store read-only for as long as that
// takes. It is not run on a data dir another process holds (info.InUse)
// or that has no database yet.
func Lessons(ctx context.Context, dir string, info DataDirInfo, st Store) []Check {
	c := Check{Name: "lessons", Status: OK}
	switch {
	case !info.Exists:
		c.Detail = "no data dir yet"
		return []Check{c}
	case info.InUse != nil:
		c.Detail = "not checked: the data dir is in use (" + holder(info.InUse) + ")"
		return []Check{c}
	}
	if st.Open == nil {
		if _, err := os.Stat(info.Database); errors.Is(err, fs.ErrNotExist) {
			c.Detail = "no database yet"
			return []Check{c}
		}
	}
	m, root, err := open(ctx, dir, st, true)
	if errors.Is(err, memory.ErrReplayDue) {
		c.Status, c.Detail = Warn, replayDue
		return []Check{c}
	}
	if err != nil {
		c.Status, c.Detail = Warn, "not checked: "+err.Error()
		return []Check{c}
	}
	defer root.Close()
	h, err := m.Lessons.Check(ctx)
	if err != nil {
		c.Status, c.Detail = Fail, err.Error()
		return []Check{c}
	}
	c.Data = h
	c.Detail = describeHealth(h)
	if !h.OK() {
		c.Status = Warn
		c.Detail += ": recall and lists skip them; engine doctor --repair rebuilds the indexes"
	}
	j := Check{Name: "imports", Status: OK, Detail: "none interrupted"}
	pending, err := m.RecoveryPending(ctx)
	switch {
	case err != nil:
		j.Status, j.Detail = Fail, err.Error()
	case pending:
		j.Status, j.Detail = Warn, "an import stopped part way and is not rolled back: imports are refused until engine doctor --repair rolls it back"
	}
	return []Check{c, j}
}

// open opens the memory the doctor works on: st's shared store or the
// data dir's own (without waiting for its lock), in st's namespace. The
// caller closes root (the namespace's memory closes nothing).
func open(ctx context.Context, dir string, st Store, readOnly bool) (m, root *memory.Memory, err error) {
	root, err = memory.Open(ctx, dir, memory.Options{ReadOnly: readOnly, LockWait: -1, OpenStore: st.Open})
	if err != nil {
		return nil, nil, err
	}
	if st.Namespace == "" {
		return root, root, nil
	}
	m, err = root.WithNamespace(ctx, st.Namespace)
	if err != nil {
		root.Close()
		return nil, nil, err
	}
	return m, root, nil
}

// Repaired is what Repair did.
type Repaired struct {
	// Lessons is the lesson store's health after its indexes were rebuilt.
	Lessons lesson.Health `json:"lessons"`
	// RolledBack says an import that had stopped part way was rolled back.
	RolledBack bool `json:"rolled_back"`
}

// Repair mends the memory of data dir dir, or of st's shared store, in
// st's namespace: it rolls back an import that stopped part way
// (memory.Memory.Recover: badger's open does it for the default namespace,
// a shared store never does it on open, since another process's import may
// be running) and rebuilds the lesson indexes from the lesson records
// (lesson.Store.Repair). It needs the memory to itself: a data dir
// another process holds (a memory server, a run) is refused with its
// holder named; on a shared store no lock can say so, and the person
// running it must stop the other writers first.
func Repair(ctx context.Context, dir string, st Store) (Repaired, error) {
	root, _, err := open(ctx, dir, Store{Open: st.Open}, false)
	if err != nil {
		return Repaired{}, fmt.Errorf("repair %s: %w", st.Where(dir), err)
	}
	var r Repaired
	err = func() error {
		// Recover first, on the namespace's keys, so that the report says
		// what was rolled back (a named namespace's first use would
		// otherwise do it unseen).
		var err error
		if r.RolledBack, err = root.Recover(ctx, st.Namespace); err != nil {
			return err
		}
		m, err := root.WithNamespace(ctx, cmp.Or(st.Namespace, memory.DefaultNamespace))
		if err != nil {
			return err
		}
		r.Lessons, err = m.Lessons.Repair(ctx)
		return err
	}()
	if err != nil {
		err = fmt.Errorf("repair %s: %w", st.Where(dir), err)
	}
	return r, errors.Join(err, root.Close())
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
