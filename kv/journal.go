package kv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrTooBig is returned (wrapped) by a transaction's Set or Delete when the
// transaction has grown past what the store commits in one step (badger's
// ErrTxnTooBig; etcd's 128 operations or 1.5 MiB per transaction).
var ErrTooBig = errors.New("kv: transaction too big")

// ErrRecoveryPending is returned by Apply while an earlier Apply that
// failed could not be rolled back (its journal is still marked active):
// Recover rolls it back (badger's Open runs it; a shared store such as
// etcd leaves it to a deliberate repair).
var ErrRecoveryPending = errors.New("kv: an interrupted atomic write is not rolled back yet")

// The journal lives under its own prefix, which no other key may use (the
// key layout in engine/memory/keyspace reserves it):
//
//	kv/journal/active                 → <id> of the Apply in progress
//	                                    (<hex>, or <hex>.image for an
//	                                    image Journal)
//	kv/journal/undo/<id>/<seq>        → values (and TTLs) of up to ChunkOps
//	                                    keys before that Apply (an image
//	                                    journal's seq 0: imageHeader)
const journalPrefix = "kv/journal/"

var (
	journalActive = []byte(journalPrefix + "active")
	journalUndo   = []byte(journalPrefix + "undo/")
)

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// MaxTxnOps is the most ops written in one transaction: a larger Apply
	// goes through the undo journal. Zero means the store's own limit when
	// it says one (Limits), else none other than ErrTooBig.
	MaxTxnOps int
	// ChunkOps is how many ops the journaled path writes per batch; zero
	// means 512.
	ChunkOps int
	// ChunkBytes bounds the keys and values of one batch; zero means 1 MiB.
	ChunkBytes int
	// ImageKeys and ImageBytes bound the store that a Journal on an
	// exclusive store saves whole at Begin (an image journal, see
	// Journal): zero means ImageKeys (10,000 keys) and ImageBytes (8 MiB
	// of keys and values); a negative value never takes an image.
	ImageKeys  int
	ImageBytes int
}

// The default bounds of an image journal (ApplyOptions.ImageKeys and
// ImageBytes). A fresh data dir (seed lessons, schema and meta keys: 21)
// is far below them. The image is held in memory at Begin and at a
// rollback, so 8 MiB keeps that near one streamed chunk's; and saving
// 10,000 keys costs about what the per-key journal spends on ~1,000
// imported lessons (~10 keys each), fewer than a streamed import holds.
const (
	ImageKeys  = 10_000
	ImageBytes = 8 << 20
)

// Limits is implemented by a store that commits at most MaxTxnOps writes
// in one transaction (etcd: 128 by default); Apply consults it when
// ApplyOptions.MaxTxnOps is zero, so a large Apply goes through the
// journal instead of failing.
type Limits interface {
	MaxTxnOps() int
}

// TxnItems is how many items fit in one transaction of s when each reads
// or writes up to perItem keys: want, or fewer on a store whose Limits
// allow fewer ops (at least 1).
func TxnItems(s Store, want, perItem int) int {
	l, ok := s.(Limits)
	if !ok || perItem <= 0 || l.MaxTxnOps() <= 0 {
		return want
	}
	return max(1, min(want, l.MaxTxnOps()/perItem))
}

// expiryReader is implemented by readers that can say when a key expires,
// so that a rollback restores its TTL as well as its value.
type expiryReader interface {
	// GetExpiry is Get plus the key's expiry (zero when it has none).
	GetExpiry(key []byte) ([]byte, time.Time, error)
}

// Apply writes ops all or nothing, against store errors and crashes as well
// as bad input: after an error, s holds exactly what it held before, and a
// process killed part way leaves either all or none of ops once the store
// is opened again (a store runs Recover when it opens, as badger.Open does).
//
// Ops that fit one transaction are written in one. A larger Apply (the
// transaction fails with ErrTooBig, or ops exceed MaxTxnOps) keeps an undo
// journal: (1) the current value of every key ops write is saved under
// kv/journal/undo/<id>/ (one record per ChunkOps keys), in batches; (2) kv/journal/active is set to <id> in
// one transaction; (3) ops are written in batches; (4) deleting
// kv/journal/active, one transaction, is the commit point; (5) the undo
// records are deleted. An error in (1) or (2) deletes what (1) wrote; an
// error in (3) or (4) rolls back: every saved value (and TTL) is written
// back, then the marker is deleted. If the rollback fails too, the marker
// stays, Apply returns an error wrapping ErrRecoveryPending, and Recover
// rolls back on the next open. Undo records without the marker are garbage
// and Recover deletes them.
//
// Apply is atomic, not isolated: while a journaled Apply runs, readers of s
// in this process can see part of it. Callers that cache what they read
// (engine/memory/internal/sitecache) must not read while it runs; engine import
// runs alone on its data dir. Apply is not safe to run concurrently with
// itself or with writers of the same keys.
func Apply(ctx context.Context, s Store, ops []Op, opts ApplyOptions) error {
	if len(ops) == 0 {
		return nil
	}
	if opts.ChunkOps <= 0 {
		opts.ChunkOps = 512
	}
	if opts.ChunkBytes <= 0 {
		opts.ChunkBytes = 1 << 20
	}
	if l, ok := s.(Limits); ok && opts.MaxTxnOps == 0 {
		opts.MaxTxnOps = l.MaxTxnOps()
	}
	if opts.MaxTxnOps <= 0 || len(ops) <= opts.MaxTxnOps {
		err := s.Update(ctx, func(tx Txn) error {
			if _, err := tx.Get(journalActive); err == nil {
				return ErrRecoveryPending
			} else if !errors.Is(err, ErrNotFound) {
				return err
			}
			for _, op := range ops {
				if err := writeOp(tx, op); err != nil {
					return err
				}
			}
			return nil
		})
		if !errors.Is(err, ErrTooBig) {
			return err
		}
	}
	return applyJournaled(ctx, s, ops, opts)
}

func writeOp(tx Txn, op Op) error {
	if op.Delete {
		return tx.Delete(op.Key)
	}
	return tx.Set(op.Key, op.Value, op.TTL)
}

func applyJournaled(ctx context.Context, s Store, ops []Op, opts ApplyOptions) error {
	var idb [8]byte
	_, _ = rand.Read(idb[:])
	id := hex.EncodeToString(idb[:])
	undoPrefix := undoPrefix(id)

	// (1) Save the current values: one undo record per ChunkOps keys (or
	// ChunkBytes of keys and values), so the journal adds few entries.
	var undo []Op
	var seq uint64
	err := s.View(ctx, func(r Reader) error {
		if _, err := r.Get(journalActive); err == nil {
			return ErrRecoveryPending
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		var err error
		undo, err = undoOps(r, ops, undoPrefix, &seq, opts)
		return err
	})
	if err != nil {
		return fmt.Errorf("kv: apply: save current values: %w", err)
	}
	fail := func(stage string, err error) error {
		if cerr := clearPrefix(ctx, s, undoPrefix, opts); cerr != nil {
			return fmt.Errorf("kv: apply: %s: %w (and deleting the undo records: %v)", stage, err, cerr)
		}
		return fmt.Errorf("kv: apply: %s: %w (nothing written)", stage, err)
	}
	if err := writeChunks(ctx, s, undo, opts); err != nil {
		return fail("save current values", err)
	}
	// (2) Mark the journal active.
	err = s.Update(ctx, func(tx Txn) error {
		if _, err := tx.Get(journalActive); err == nil {
			return ErrRecoveryPending
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		return tx.Set(journalActive, []byte(id), 0)
	})
	if err != nil {
		return fail("mark the journal active", err)
	}
	// (3) Write, (4) commit by deleting the marker.
	err = writeChunks(ctx, s, ops, opts)
	if err == nil {
		err = s.Update(ctx, func(tx Txn) error { return tx.Delete(journalActive) })
	}
	if err != nil {
		if rerr := rollback(context.WithoutCancel(ctx), s, id, opts); rerr != nil {
			return fmt.Errorf("kv: apply: %w; rolling back failed too: %w: %w", err, rerr, ErrRecoveryPending)
		}
		return fmt.Errorf("kv: apply: %w (rolled back: nothing written)", err)
	}
	// (5) Best effort: Recover deletes what is left.
	_ = clearPrefix(context.WithoutCancel(ctx), s, undoPrefix, opts)
	return nil
}

// undoOps reads, in r, the current value (and expiry) of every key ops
// write, each key once, and returns the undo records that hold them: one
// per ChunkOps keys (or ChunkBytes of keys and values), so a journal adds
// few entries, keyed prefix + big-endian *seq, which it advances.
func undoOps(r Reader, ops []Op, prefix []byte, seq *uint64, opts ApplyOptions) ([]Op, error) {
	var undo []Op
	var rec []byte
	inRec := 0
	flush := func() {
		if inRec > 0 {
			k := binary.BigEndian.AppendUint64(bytes.Clone(prefix), *seq)
			*seq++
			undo = append(undo, Op{Key: k, Value: rec})
			rec, inRec = nil, 0
		}
	}
	// A record's buffer is sized for a typical batch up front (keys, their
	// 10 bytes of header and small values) instead of grown by doubling:
	// a streamed import makes one per 512 keys.
	newRec := func(first int) []byte {
		return make([]byte, 0, max(first, min(opts.ChunkBytes, opts.ChunkOps*64)))
	}
	er, _ := r.(expiryReader)
	seen := make(map[string]bool, len(ops))
	for _, op := range ops {
		if seen[string(op.Key)] {
			continue
		}
		seen[string(op.Key)] = true
		var v []byte
		var exp time.Time
		var err error
		if er != nil {
			v, exp, err = er.GetExpiry(op.Key)
		} else {
			v, err = r.Get(op.Key)
		}
		present := err == nil
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		if inRec >= opts.ChunkOps || inRec > 0 && len(rec)+len(op.Key)+len(v) > opts.ChunkBytes {
			flush()
		}
		if rec == nil {
			rec = newRec(len(op.Key) + len(v) + 20)
		}
		rec = appendUndo(rec, op.Key, present, exp, v)
		inRec++
	}
	flush()
	return undo, nil
}

// Recover finishes what an interrupted Apply left: a journal marked active
// is rolled back (every saved value written back, then the marker deleted),
// and undo records of no active Apply are deleted. It reports whether it
// rolled back. A store calls it when it opens (kv/badger.Open does); it is idempotent.
func Recover(ctx context.Context, s Store) (rolledBack bool, err error) {
	var id []byte
	err = s.View(ctx, func(r Reader) error {
		var err error
		id, err = r.Get(journalActive)
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return false, fmt.Errorf("kv: recover: %w", err)
	}
	if err == nil {
		if err := rollback(ctx, s, string(id), ApplyOptions{}); err != nil {
			return false, fmt.Errorf("kv: recover: roll back interrupted write %s: %w", id, err)
		}
		rolledBack = true
	}
	if err := clearPrefix(ctx, s, journalUndo, ApplyOptions{}); err != nil {
		return rolledBack, fmt.Errorf("kv: recover: delete undo records: %w", err)
	}
	return rolledBack, nil
}

// Exclusive is implemented by a store that one process holds alone
// (badger's directory lock). Only such a process may call Recover on its
// own: on a shared store (etcd) a journal marked active may be another
// process's Apply still running, and rolling it back would undo its
// writes under it; there an operator runs it (engine doctor --repair).
type Exclusive interface {
	Exclusive() bool
}

// IsExclusive reports whether s says one process holds it alone; a store
// that does not say is taken as shared.
func IsExclusive(s Store) bool {
	e, ok := s.(Exclusive)
	return ok && e.Exclusive()
}

// RecoveryPending reports whether an interrupted Apply left its journal
// marked active on s (Apply refuses until Recover rolls it back). It
// writes nothing.
func RecoveryPending(ctx context.Context, s Store) (bool, error) {
	_, err := Get(ctx, s, journalActive)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("kv: recovery pending: %w", err)
	}
	return true, nil
}

// readUndo decodes the undo records under prefix, in order; header
// reports whether an image journal's header record was among them.
func readUndo(ctx context.Context, s Store, prefix []byte) (ops []Op, header bool, err error) {
	err = s.View(ctx, func(r Reader) error {
		ops, header = ops[:0], false
		return r.Scan(prefix, ScanOptions{}, func(k, v []byte) error {
			if bytes.Equal(v, imageHeader) {
				header = true
				return nil
			}
			var err error
			if ops, err = decodeUndo(ops, v); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			return nil
		})
	})
	return ops, header, err
}

// rollback writes back every value saved by Apply or Journal id (an
// image journal's through rollbackImage), deletes the marker, then (best
// effort) the undo records.
func rollback(ctx context.Context, s Store, id string, opts ApplyOptions) error {
	if strings.HasSuffix(id, imageSuffix) {
		return rollbackImage(ctx, s, id, opts)
	}
	undoPrefix := undoPrefix(id)
	restore, _, err := readUndo(ctx, s, undoPrefix)
	if err != nil {
		return err
	}
	// A key saved twice (a Journal's Writes both wrote it) goes back to
	// its earliest saved value: the one before the first write.
	seen := make(map[string]bool, len(restore))
	kept := restore[:0]
	for _, op := range restore {
		if !seen[string(op.Key)] {
			seen[string(op.Key)] = true
			kept = append(kept, op)
		}
	}
	restore = kept
	if err := writeChunks(ctx, s, restore, opts); err != nil {
		return err
	}
	err = s.Update(ctx, func(tx Txn) error { return tx.Delete(journalActive) })
	if err != nil {
		return err
	}
	_ = clearPrefix(ctx, s, undoPrefix, opts)
	return nil
}

// writeChunks writes ops in batches of at most opts.ChunkOps ops and
// opts.ChunkBytes bytes.
func writeChunks(ctx context.Context, s Store, ops []Op, opts ApplyOptions) error {
	if opts.ChunkOps <= 0 {
		opts.ChunkOps = 512
	}
	if opts.ChunkBytes <= 0 {
		opts.ChunkBytes = 1 << 20
	}
	for len(ops) > 0 {
		n, size := 0, 0
		for n < len(ops) && n < opts.ChunkOps && (n == 0 || size+len(ops[n].Key)+len(ops[n].Value) <= opts.ChunkBytes) {
			size += len(ops[n].Key) + len(ops[n].Value)
			n++
		}
		if err := s.Batch(ctx, ops[:n]); err != nil {
			return err
		}
		ops = ops[n:]
	}
	return nil
}

// clearPrefix deletes every key under prefix in batches (not DropPrefix,
// which stalls badger's writes).
func clearPrefix(ctx context.Context, s Store, prefix []byte, opts ApplyOptions) error {
	var dels []Op
	err := s.View(ctx, func(r Reader) error {
		return r.Scan(prefix, ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			dels = append(dels, Op{Key: bytes.Clone(k), Delete: true})
			return nil
		})
	})
	if err != nil {
		return err
	}
	return writeChunks(ctx, s, dels, opts)
}

// An undo record is a run of saved values, each: uvarint key length, key,
// 1 byte present, 8 bytes expiry (Unix seconds, 0 for none), uvarint value
// length, value.
func appendUndo(b, key []byte, present bool, exp time.Time, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	var p byte
	if present {
		p = 1
	}
	b = append(b, p)
	var e uint64
	if !exp.IsZero() {
		e = uint64(exp.Unix())
	}
	b = binary.BigEndian.AppendUint64(b, e)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// decodeUndo appends to ops the ops that restore the values saved in b.
func decodeUndo(ops []Op, b []byte) ([]Op, error) {
	corrupt := errors.New("corrupt undo record")
	for len(b) > 0 {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < n+9 {
			return nil, corrupt
		}
		b = b[w:]
		op := Op{Key: bytes.Clone(b[:n])}
		present := b[n] == 1
		e := binary.BigEndian.Uint64(b[n+1 : n+9])
		b = b[n+9:]
		vn, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < vn {
			return nil, corrupt
		}
		v := b[w : w+int(vn)]
		b = b[w+int(vn):]
		switch {
		case !present:
			op.Delete = true
		case e != 0:
			// Half a second over, so that the store's whole-second expiry
			// comes out at the saved second.
			op.TTL = time.Until(time.Unix(int64(e), 0)) + 500*time.Millisecond
			if op.TTL <= 500*time.Millisecond {
				op.Delete = true // expired meanwhile
				op.TTL = 0
				break
			}
			op.Value = bytes.Clone(v)
		default:
			op.Value = bytes.Clone(v)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// Journal is an Apply written in parts, for a job too large to hold in
// memory at once (a streamed import): Begin marks the journal active,
// each Write writes its ops, Commit deletes the marker (the commit point)
// and Abort rolls every Write back. A crash before Commit leaves the
// marker, and the store's next open (Recover) rolls back every Write.
// Like Apply it is atomic, not isolated.
//
// A journal is one of two kinds, chosen by Begin. On a store this process
// holds alone (IsExclusive) whose content outside the journal's prefix is
// small (ApplyOptions.ImageKeys, ImageBytes: a fresh data dir), Begin
// saves that whole content once, as undo records, before it sets the
// marker (an image journal, its id ending in ".image"); Writes then read
// and save nothing, and a rollback deletes every key the image does not
// hold and writes the image's values (and expiries) back. It undoes every
// write made to the store since Begin, not only the journal's, so no
// other writer may run meanwhile: the directory lock keeps other
// processes out, and engine import holds its API's exclusive lock. On
// any other store (shared, such as etcd, or past the bounds) each Write
// first saves the current values of its keys as undo records (a per-key
// journal), and a rollback restores each key's earliest saved value, so
// a key several Writes wrote goes back to its value before the first.
type Journal struct {
	s          Store
	id         string
	undoPrefix []byte
	seq        uint64
	opts       ApplyOptions
	done       bool
}

// imageSuffix ends the id, and so the marker's value, of an image
// journal; a per-key journal's id is bare hex, as every marker was
// before image journals.
const imageSuffix = ".image"

// imageHeader is the first undo record (seq 0) of an image journal. Its
// leading bytes are a uvarint length past its end, so a binary that
// predates image journals fails to decode it and refuses to open the
// store instead of rolling back only part of the import.
var imageHeader = []byte("\xff\xffimage")

// errTooBig ends the scan of a store too big for an image.
var errTooBig = errors.New("too big for an image")

// Begin starts a Journal on s, an image journal when s is exclusive and
// small (see Journal); it fails with ErrRecoveryPending while an earlier
// atomic write is not rolled back.
func Begin(ctx context.Context, s Store, opts ApplyOptions) (*Journal, error) {
	if opts.ChunkOps <= 0 {
		opts.ChunkOps = 512
	}
	if opts.ChunkBytes <= 0 {
		opts.ChunkBytes = 1 << 20
	}
	if opts.ImageKeys == 0 {
		opts.ImageKeys = ImageKeys
	}
	if opts.ImageBytes == 0 {
		opts.ImageBytes = ImageBytes
	}
	var idb [8]byte
	_, _ = rand.Read(idb[:])
	id := hex.EncodeToString(idb[:])
	wantImage := IsExclusive(s) && opts.ImageKeys > 0 && opts.ImageBytes > 0
	var image []Op
	err := s.View(ctx, func(r Reader) error {
		if _, err := r.Get(journalActive); err == nil {
			return ErrRecoveryPending
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		if !wantImage {
			return nil
		}
		var err error
		image, err = takeImage(r, undoPrefix(id+imageSuffix), opts)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("kv: journal: begin: %w", err)
	}
	if image != nil {
		id += imageSuffix
	}
	j := &Journal{s: s, id: id, undoPrefix: undoPrefix(id), opts: opts}
	fail := func(stage string, err error) (*Journal, error) {
		if cerr := clearPrefix(ctx, s, j.undoPrefix, opts); cerr != nil {
			return nil, fmt.Errorf("kv: journal: %s: %w (and deleting the image: %v)", stage, err, cerr)
		}
		return nil, fmt.Errorf("kv: journal: %s: %w", stage, err)
	}
	if err := writeChunks(ctx, s, image, opts); err != nil {
		return fail("save the store's image", err)
	}
	err = s.Update(ctx, func(tx Txn) error {
		if _, err := tx.Get(journalActive); err == nil {
			return ErrRecoveryPending
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		return tx.Set(journalActive, []byte(id), 0)
	})
	if err != nil {
		return fail("mark active", err)
	}
	return j, nil
}

// undoPrefix is where the undo records of journal id live.
func undoPrefix(id string) []byte {
	return append(append(bytes.Clone(journalUndo), id...), '/')
}

// takeImage returns the undo records (the header first) that save every
// key of r outside the journal's prefix, with its value and expiry, or
// nil when r holds more than opts.ImageKeys keys or ImageBytes of keys
// and values.
func takeImage(r Reader, prefix []byte, opts ApplyOptions) ([]Op, error) {
	var keys []Op
	size := 0
	err := r.Scan(nil, ScanOptions{}, func(k, v []byte) error {
		if bytes.HasPrefix(k, []byte(journalPrefix)) {
			return nil
		}
		size += len(k) + len(v)
		if len(keys) >= opts.ImageKeys || size > opts.ImageBytes {
			return errTooBig
		}
		keys = append(keys, Op{Key: bytes.Clone(k)})
		return nil
	})
	if errors.Is(err, errTooBig) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	seq := uint64(1)
	recs, err := undoOps(r, keys, prefix, &seq, opts)
	if err != nil {
		return nil, err
	}
	header := Op{Key: binary.BigEndian.AppendUint64(bytes.Clone(prefix), 0), Value: imageHeader}
	return append([]Op{header}, recs...), nil
}

// Image reports whether j is an image journal: Begin saved the store's
// whole content, and its Writes save nothing (see Journal).
func (j *Journal) Image() bool { return strings.HasSuffix(j.id, imageSuffix) }

// Write writes ops, after saving the current value of every key they
// write when j is a per-key journal. On a failure it rolls the whole
// journal back and returns the error; the journal is then done.
func (j *Journal) Write(ctx context.Context, ops []Op) error {
	if j.done {
		return fmt.Errorf("kv: journal %s: write after its end", j.id)
	}
	var err error
	if !j.Image() {
		var undo []Op
		err = j.s.View(ctx, func(r Reader) error {
			var err error
			undo, err = undoOps(r, ops, j.undoPrefix, &j.seq, j.opts)
			return err
		})
		if err == nil {
			err = writeChunks(ctx, j.s, undo, j.opts)
		}
	}
	if err == nil {
		err = writeChunks(ctx, j.s, ops, j.opts)
	}
	if err != nil {
		return j.fail(ctx, err)
	}
	return nil
}

// fail rolls the journal back after err.
func (j *Journal) fail(ctx context.Context, err error) error {
	j.done = true
	if rerr := rollback(context.WithoutCancel(ctx), j.s, j.id, j.opts); rerr != nil {
		return fmt.Errorf("kv: journal: %w; rolling back failed too: %w: %w", err, rerr, ErrRecoveryPending)
	}
	return fmt.Errorf("kv: journal: %w (rolled back: nothing written)", err)
}

// Commit makes every Write permanent: it deletes the marker, then (best
// effort) the undo records.
func (j *Journal) Commit(ctx context.Context) error {
	if j.done {
		return fmt.Errorf("kv: journal %s: commit after its end", j.id)
	}
	if err := j.s.Update(ctx, func(tx Txn) error { return tx.Delete(journalActive) }); err != nil {
		return j.fail(ctx, fmt.Errorf("commit: %w", err))
	}
	j.done = true
	_ = clearPrefix(context.WithoutCancel(ctx), j.s, j.undoPrefix, j.opts)
	return nil
}

// Abort rolls back every Write (nothing when the journal has ended).
func (j *Journal) Abort(ctx context.Context) error {
	if j.done {
		return nil
	}
	j.done = true
	if err := rollback(context.WithoutCancel(ctx), j.s, j.id, j.opts); err != nil {
		return fmt.Errorf("kv: journal: roll back: %w: %w", err, ErrRecoveryPending)
	}
	return nil
}

// rollbackImage rolls back image journal id: every key outside the
// journal's prefix that the image does not hold is deleted, a page of
// ChunkOps keys at a time (the store may hold millions by now), and the
// image's values are written back; then the marker is deleted. A crash
// part way repeats all of it on the next open.
func rollbackImage(ctx context.Context, s Store, id string, opts ApplyOptions) error {
	prefix := undoPrefix(id)
	restore, header, err := readUndo(ctx, s, prefix)
	if err != nil {
		return err
	}
	if !header {
		return fmt.Errorf("image journal %s: no header record under %s", id, Short(prefix))
	}
	keep := make(map[string]bool, len(restore))
	for _, op := range restore {
		keep[string(op.Key)] = true
	}
	if opts.ChunkOps <= 0 {
		opts.ChunkOps = 512
	}
	var start []byte
	for {
		var dels []Op
		more := false
		err := s.View(ctx, func(r Reader) error {
			return r.Scan(nil, ScanOptions{KeysOnly: true, Start: start}, func(k, _ []byte) error {
				if len(dels) >= opts.ChunkOps {
					more = true
					start = bytes.Clone(k)
					return ErrStop
				}
				if !keep[string(k)] && !bytes.HasPrefix(k, []byte(journalPrefix)) {
					dels = append(dels, Op{Key: bytes.Clone(k), Delete: true})
				}
				return nil
			})
		})
		if err == nil {
			err = writeChunks(ctx, s, dels, opts)
		}
		if err != nil {
			return fmt.Errorf("delete the keys written since the image: %w", err)
		}
		if !more {
			break
		}
	}
	if err := writeChunks(ctx, s, restore, opts); err != nil {
		return fmt.Errorf("write the image back: %w", err)
	}
	if err := s.Update(ctx, func(tx Txn) error { return tx.Delete(journalActive) }); err != nil {
		return err
	}
	_ = clearPrefix(ctx, s, prefix, opts)
	return nil
}
