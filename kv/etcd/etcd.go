// Package etcd is the kv.Store on an etcd cluster, shared by every process
// (on any machine) that opens it. A View reads at one revision (the first
// read fixes it); an Update is optimistic: it reads at a revision, remembers
// the mod revision of every key it read (0 for a missing one), buffers its
// writes (its reads see them) and commits them in one etcd transaction that
// compares those revisions, running fn again when another commit changed a
// key it read. TTLs are etcd leases; Batch is split to respect the server's
// limits per transaction (operations and request bytes). The store is a
// kv.Watcher: chosen keys (the caches' generation tokens) are watched, so a
// warm cache is checked without a round trip (watch.go).
package etcd

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/engine-dev/engine/kv"
)

// DefaultMaxTxnOps is etcd's default --max-txn-ops: the most compares, and
// the most writes, one transaction may hold.
const DefaultMaxTxnOps = 128

// DefaultMaxRequestBytes is etcd's default --max-request-bytes (1.5 MiB).
const DefaultMaxRequestBytes = 1536 * 1024

// Options configure Open.
type Options struct {
	// Endpoints are the cluster's client URLs (host:port or http(s)://host:port).
	Endpoints []string
	// DialTimeout bounds the first connection; zero means 5 s.
	DialTimeout time.Duration
	// RequestTimeout bounds each call to the server when the caller's
	// context has no deadline, so a partitioned cluster is an error, not a
	// hang; zero means 10 s.
	RequestTimeout time.Duration
	// TLS, when set, connects with TLS (client certificates included).
	TLS *tls.Config
	// Username and Password authenticate when the cluster has auth on.
	Username, Password string
	// MaxTxnOps is the server's --max-txn-ops; zero means 128.
	MaxTxnOps int
	// MaxRequestBytes is the server's --max-request-bytes; zero means 1.5 MiB.
	MaxRequestBytes int
	// Logger receives the client's log; nil discards it.
	Logger *zap.Logger
	// MaxWatched bounds the keys kv.Watcher's Watched keeps copies of
	// (least recently used dropped); zero means DefaultMaxWatched.
	MaxWatched int
}

// keepAlive and keepAliveTimeout make a silent partition (no reset, no
// answer) a broken connection within ~15 s, which drops the watched copies;
// etcd refuses pings more often than every 5 s by default.
const (
	keepAlive        = 10 * time.Second
	keepAliveTimeout = 5 * time.Second
)

// maxConflictRetries bounds how often Update re-runs a conflicting
// transaction before it gives up.
const maxConflictRetries = 100

// pageSize is how many keys one range request of a Scan fetches.
const pageSize = 500

// opOverhead is what a request spends on one operation besides its key and
// value (protobuf framing, lease, revision), rounded up.
const opOverhead = 64

type store struct {
	cli       *clientv3.Client
	opts      Options
	maxBytes  int // of keys and values per transaction, below the server's limit
	endpoints string
	isClosed  atomic.Bool
	watch     *watches
}

// Open connects to the cluster at opts.Endpoints and checks it answers.
func Open(ctx context.Context, opts Options) (kv.Store, error) {
	if len(opts.Endpoints) == 0 {
		return nil, errors.New("kv: open etcd: no endpoints")
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 5 * time.Second
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 10 * time.Second
	}
	if opts.MaxTxnOps <= 0 {
		opts.MaxTxnOps = DefaultMaxTxnOps
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	logger := opts.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   opts.Endpoints,
		DialTimeout: opts.DialTimeout,
		TLS:         opts.TLS,
		Username:    opts.Username,
		Password:    opts.Password,
		Logger:      logger,
		Context:     context.WithoutCancel(ctx),

		DialKeepAliveTime:    keepAlive,
		DialKeepAliveTimeout: keepAliveTimeout,
	})
	eps := fmt.Sprint(opts.Endpoints)
	if err != nil {
		return nil, fmt.Errorf("kv: open etcd %s: %w", eps, err)
	}
	s := &store{cli: cli, opts: opts, maxBytes: opts.MaxRequestBytes - 64<<10, endpoints: eps}
	s.watch = newWatches(s, opts.MaxWatched)
	// The dial does not prove the cluster serves: one read does, within
	// the dial timeout.
	cctx, cancel := context.WithTimeout(ctx, opts.DialTimeout)
	defer cancel()
	if _, err := cli.Get(cctx, "kv/ping", clientv3.WithCountOnly()); err != nil {
		cli.Close()
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("kv: open etcd %s: no answer within %v (is etcd running and reachable?): %w", eps, opts.DialTimeout, err)
		}
		return nil, fmt.Errorf("kv: open etcd %s: %w", eps, mapErr(err))
	}
	return s, nil
}

// MaxTxnOps implements kv.Limits: kv.Apply writes a larger set of ops
// through its journal.
func (s *store) MaxTxnOps() int { return s.opts.MaxTxnOps }

// Close stops the watches and closes the client. Calls in flight must
// have returned.
func (s *store) Close() error {
	if s.isClosed.Swap(true) {
		return nil
	}
	s.watch.close()
	if err := s.cli.Close(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("kv: close etcd: %w", err)
	}
	return nil
}

// ready refuses an operation on a closed store or with a done context.
func (s *store) ready(ctx context.Context, op string) error {
	if s.isClosed.Load() {
		return fmt.Errorf("kv: %s: %w", op, kv.ErrClosed)
	}
	return ctx.Err()
}

// callCtx bounds one call by RequestTimeout unless ctx has a deadline.
func (s *store) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.opts.RequestTimeout)
}

// mapErr turns etcd's errors into kv's where one matches.
func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rpctypes.ErrTooManyOps), errors.Is(err, rpctypes.ErrRequestTooLarge):
		return fmt.Errorf("%w: %w", kv.ErrTooBig, err)
	case errors.Is(err, rpctypes.ErrNoSpace):
		return fmt.Errorf("%w (etcd's quota): %w", kv.ErrNoSpace, err)
	}
	if st, ok := status.FromError(err); ok && st.Code() == codes.ResourceExhausted {
		return fmt.Errorf("%w: %w", kv.ErrTooBig, err)
	}
	return err
}

// wrap names the operation and the cluster in an error from etcd; a
// cancelled caller's context stays recognisable.
func (s *store) wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("kv: %s on etcd %s: %w (%v)", op, s.endpoints, cerr, err)
	}
	return fmt.Errorf("kv: %s on etcd %s: %w", op, s.endpoints, mapErr(err))
}

func (s *store) View(ctx context.Context, fn func(kv.Reader) error) error {
	if err := s.ready(ctx, "view"); err != nil {
		return err
	}
	return fn(&reader{s: s, ctx: ctx})
}

func (s *store) Update(ctx context.Context, fn func(kv.Txn) error) error {
	if err := s.ready(ctx, "update"); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		t := &txn{reader: reader{s: s, ctx: ctx, reads: map[string]int64{}}, writes: map[string]*write{}}
		err := fn(t)
		if err == nil {
			err = t.commit()
		}
		if !errors.Is(err, errConflict) && !errors.Is(err, rpctypes.ErrCompacted) {
			return err
		}
		if attempt == maxConflictRetries {
			return fmt.Errorf("kv: update: gave up after %d conflicting attempts: %w", attempt+1, err)
		}
		// Back off with jitter so racing writers spread out; a round trip
		// to etcd is ~1 ms, so the steps are in milliseconds.
		d := time.Duration(rand.IntN(1000*(min(attempt, 20)+1))) * time.Microsecond
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}

var errConflict = errors.New("kv: etcd transaction conflicted")

func (s *store) Batch(ctx context.Context, ops []kv.Op) error {
	if err := s.ready(ctx, "batch"); err != nil {
		return err
	}
	for _, op := range ops {
		if err := kv.CheckKey("batch write", op.Key); err != nil {
			return err
		}
	}
	for len(ops) > 0 {
		n, size := 0, 0
		inChunk := map[string]bool{} // etcd refuses a key twice in one txn
		for n < len(ops) && n < s.opts.MaxTxnOps && !inChunk[string(ops[n].Key)] &&
			(n == 0 || size+opSize(ops[n]) <= s.maxBytes) {
			inChunk[string(ops[n].Key)] = true
			size += opSize(ops[n])
			n++
		}
		w := make([]write, n)
		for i, op := range ops[:n] {
			w[i] = write{key: op.Key, value: op.Value, ttl: op.TTL, delete: op.Delete}
		}
		if _, err := s.commit(ctx, "batch", nil, w); err != nil {
			return err
		}
		ops = ops[n:]
	}
	return nil
}

func opSize(op kv.Op) int { return len(op.Key) + len(op.Value) + opOverhead }

func (s *store) DropPrefix(ctx context.Context, prefix []byte) error {
	if err := s.ready(ctx, "drop prefix"); err != nil {
		return err
	}
	if len(prefix) == 0 {
		return errors.New("kv: drop prefix: refusing to drop the empty prefix (every key)")
	}
	cctx, cancel := s.callCtx(ctx)
	defer cancel()
	end := kv.PrefixEnd(prefix)
	opt := clientv3.WithFromKey()
	if end != nil {
		opt = clientv3.WithRange(string(end))
	}
	resp, err := s.cli.Delete(cctx, string(prefix), opt)
	if err != nil {
		return s.wrap(ctx, fmt.Sprintf("drop prefix %q", prefix), err)
	}
	s.watch.dropped(resp.Header.Revision, prefix)
	return nil
}

// write is one buffered write of a transaction.
type write struct {
	key, value []byte
	ttl        time.Duration
	delete     bool
}

// commit writes ws in one etcd transaction that first compares the mod
// revision of every key in reads; it reports errConflict when a compare
// fails. TTLs take one lease per distinct whole second. A commit updates
// the watched copies of the keys it wrote (read-your-writes).
func (s *store) commit(ctx context.Context, op string, reads map[string]int64, ws []write) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if len(reads) > s.opts.MaxTxnOps {
		return false, fmt.Errorf("kv: %s: read %d keys, more than etcd's limit of %d compares per transaction: %w", op, len(reads), s.opts.MaxTxnOps, kv.ErrTooBig)
	}
	if len(ws) > s.opts.MaxTxnOps {
		return false, fmt.Errorf("kv: %s: %d writes, more than etcd's limit of %d operations per transaction: %w", op, len(ws), s.opts.MaxTxnOps, kv.ErrTooBig)
	}
	size := 0
	for k := range reads {
		size += len(k) + opOverhead
	}
	for _, w := range ws {
		size += len(w.key) + len(w.value) + opOverhead
	}
	if size > s.maxBytes && len(ws) > 1 {
		return false, fmt.Errorf("kv: %s: %d bytes, more than etcd's request limit of %d bytes takes: %w", op, size, s.opts.MaxRequestBytes, kv.ErrTooBig)
	}
	cctx, cancel := s.callCtx(ctx)
	defer cancel()
	leases := map[int64]clientv3.LeaseID{}
	puts := make([]clientv3.Op, 0, len(ws))
	for _, w := range ws {
		if w.delete {
			puts = append(puts, clientv3.OpDelete(string(w.key)))
			continue
		}
		var opts []clientv3.OpOption
		if w.ttl > 0 {
			// Rounded up to a whole second (etcd's unit); etcd also
			// lengthens a lease below its minimum (~2 s) to that minimum.
			secs := int64((w.ttl + time.Second - 1) / time.Second)
			id, ok := leases[secs]
			if !ok {
				g, err := s.cli.Grant(cctx, secs)
				if err != nil {
					return false, s.wrap(ctx, op+": grant a lease", err)
				}
				id = g.ID
				leases[secs] = id
			}
			opts = append(opts, clientv3.WithLease(id))
		}
		puts = append(puts, clientv3.OpPut(string(w.key), string(w.value), opts...))
	}
	cmps := make([]clientv3.Cmp, 0, len(reads))
	for k, rev := range reads {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", rev))
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	resp, err := s.cli.Txn(cctx).If(cmps...).Then(puts...).Commit()
	if err != nil {
		return false, s.wrap(ctx, op, err)
	}
	if !resp.Succeeded {
		return false, errConflict
	}
	s.watch.committed(resp.Header.Revision, ws)
	return true, nil
}

// reader reads at one revision: the first read fixes it. In a transaction
// it records the mod revision of every key it returns.
type reader struct {
	s     *store
	ctx   context.Context
	rev   int64
	reads map[string]int64 // nil in a View
}

// get fetches key's newest version at r's revision, nil when missing.
func (r *reader) get(key []byte) (*mvccpb.KeyValue, error) {
	if err := r.s.ready(r.ctx, "get"); err != nil {
		return nil, err
	}
	cctx, cancel := r.s.callCtx(r.ctx)
	defer cancel()
	resp, err := r.range_(cctx, string(key))
	if err != nil {
		return nil, r.s.wrap(r.ctx, "get "+kv.Short(key), err)
	}
	if r.rev == 0 {
		r.rev = resp.Header.Revision
	}
	if len(resp.Kvs) == 0 {
		if r.reads != nil {
			r.reads[string(key)] = 0
		}
		return nil, nil
	}
	kvp := resp.Kvs[0]
	if r.reads != nil {
		r.reads[string(key)] = kvp.ModRevision
	}
	return kvp, nil
}

// range_ reads key (with opts) at r's revision. The first read of a
// transaction is linearizable (it sees every commit acknowledged before
// it) and fixes the revision; later ones read that revision from the
// member's own state (serializable: no round of consensus), which holds
// it once the first read returned — unless the client switched to a
// member that has not applied it yet, which answers "future revision"
// and is asked again linearizably.
func (r *reader) range_(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if r.rev == 0 {
		return r.s.cli.Get(ctx, key, opts...)
	}
	opts = append(opts, clientv3.WithRev(r.rev))
	resp, err := r.s.cli.Get(ctx, key, append(opts, clientv3.WithSerializable())...)
	if errors.Is(err, rpctypes.ErrFutureRev) {
		return r.s.cli.Get(ctx, key, opts...)
	}
	return resp, err
}

func (r *reader) Get(key []byte) ([]byte, error) {
	kvp, err := r.get(key)
	if err != nil {
		return nil, err
	}
	if kvp == nil {
		return nil, kv.ErrNotFound
	}
	return bytes.Clone(kvp.Value), nil
}

// GetExpiry is Get plus the key's expiry (zero when it has none), for
// kv.Apply's journal.
func (r *reader) GetExpiry(key []byte) ([]byte, time.Time, error) {
	kvp, err := r.get(key)
	if err != nil {
		return nil, time.Time{}, err
	}
	if kvp == nil {
		return nil, time.Time{}, kv.ErrNotFound
	}
	var exp time.Time
	if kvp.Lease != 0 {
		cctx, cancel := r.s.callCtx(r.ctx)
		defer cancel()
		ttl, err := r.s.cli.TimeToLive(cctx, clientv3.LeaseID(kvp.Lease))
		if err != nil {
			return nil, time.Time{}, r.s.wrap(r.ctx, "lease of "+kv.Short(key), err)
		}
		if ttl.TTL > 0 {
			exp = time.Now().Add(time.Duration(ttl.TTL) * time.Second)
		}
	}
	return bytes.Clone(kvp.Value), exp, nil
}

// scanRange is the key range [lo, hi) a Scan covers (hi nil: to the end).
func scanRange(prefix []byte, opts kv.ScanOptions) (lo, hi []byte, err error) {
	lo, hi = prefix, kv.PrefixEnd(prefix)
	if len(lo) == 0 {
		lo = []byte{0} // etcd keys are non-empty; kv keys too
	}
	if opts.Start != nil {
		if !bytes.HasPrefix(opts.Start, prefix) {
			return nil, nil, fmt.Errorf("kv: scan: start key %q is outside prefix %q", opts.Start, prefix)
		}
		if opts.Reverse {
			hi = append(bytes.Clone(opts.Start), 0)
		} else {
			lo = opts.Start
		}
	}
	return lo, hi, nil
}

// remote pages through [lo, hi) at r's revision, in key order or reversed.
type remote struct {
	r        *reader
	lo, hi   []byte
	reverse  bool
	keysOnly bool
	page     int
	buf      []*mvccpb.KeyValue
	done     bool
}

// next returns the next key-value, nil at the end.
func (it *remote) next() (*mvccpb.KeyValue, error) {
	for len(it.buf) == 0 {
		if it.done {
			return nil, nil
		}
		if err := it.fetch(); err != nil {
			return nil, err
		}
	}
	kvp := it.buf[0]
	it.buf = it.buf[1:]
	return kvp, nil
}

func (it *remote) fetch() error {
	r := it.r
	if err := r.s.ready(r.ctx, "scan"); err != nil {
		return err
	}
	opts := []clientv3.OpOption{clientv3.WithLimit(int64(it.page))}
	if it.hi != nil {
		opts = append(opts, clientv3.WithRange(string(it.hi)))
	} else {
		opts = append(opts, clientv3.WithFromKey())
	}
	if it.reverse {
		opts = append(opts, clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend))
	} else {
		opts = append(opts, clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	}
	if it.keysOnly {
		opts = append(opts, clientv3.WithKeysOnly())
	}
	cctx, cancel := r.s.callCtx(r.ctx)
	defer cancel()
	resp, err := r.range_(cctx, string(it.lo), opts...)
	if err != nil {
		return r.s.wrap(r.ctx, fmt.Sprintf("scan %q", it.lo), err)
	}
	if r.rev == 0 {
		r.rev = resp.Header.Revision
	}
	it.buf = resp.Kvs
	if !resp.More || len(resp.Kvs) == 0 {
		it.done = true
		return nil
	}
	last := resp.Kvs[len(resp.Kvs)-1].Key
	if it.reverse {
		it.hi = last
	} else {
		it.lo = append(bytes.Clone(last), 0)
	}
	return nil
}

func (r *reader) Scan(prefix []byte, opts kv.ScanOptions, fn func(key, value []byte) error) error {
	return r.scan(prefix, opts, nil, fn)
}

// scan merges the keys under prefix at r's revision with own (a
// transaction's buffered writes in the range, sorted in scan order; a
// delete hides its key).
func (r *reader) scan(prefix []byte, opts kv.ScanOptions, own []*write, fn func(key, value []byte) error) error {
	lo, hi, err := scanRange(prefix, opts)
	if err != nil {
		return err
	}
	page := pageSize
	if opts.Limit > 0 {
		page = min(page, opts.Limit+len(own))
	}
	it := &remote{r: r, lo: lo, hi: hi, reverse: opts.Reverse, keysOnly: opts.KeysOnly, page: page}
	before := func(a, b []byte) bool { // a comes first in scan order
		if opts.Reverse {
			return bytes.Compare(a, b) > 0
		}
		return bytes.Compare(a, b) < 0
	}
	n := 0
	cur, err := it.next()
	if err != nil {
		return err
	}
	for cur != nil || len(own) > 0 {
		var key, value []byte
		switch {
		case len(own) > 0 && (cur == nil || !before(cur.Key, own[0].key)):
			w := own[0]
			own = own[1:]
			if cur != nil && bytes.Equal(cur.Key, w.key) {
				if cur, err = it.next(); err != nil {
					return err
				}
			}
			if w.delete {
				continue
			}
			key, value = w.key, w.value
		default:
			key, value = cur.Key, cur.Value
			if r.reads != nil {
				r.reads[string(cur.Key)] = cur.ModRevision
			}
			if cur, err = it.next(); err != nil {
				return err
			}
		}
		if opts.KeysOnly {
			value = nil
		} else if value == nil {
			value = []byte{}
		}
		if err := fn(key, value); errors.Is(err, kv.ErrStop) {
			return nil
		} else if err != nil {
			return err
		}
		n++
		if opts.Limit > 0 && n >= opts.Limit {
			return nil
		}
	}
	return nil
}

// txn buffers writes over a reader; its reads see them.
type txn struct {
	reader
	writes map[string]*write
}

func (t *txn) Get(key []byte) ([]byte, error) {
	if w, ok := t.writes[string(key)]; ok {
		if w.delete {
			return nil, kv.ErrNotFound
		}
		return bytes.Clone(w.value), nil
	}
	return t.reader.Get(key)
}

func (t *txn) GetExpiry(key []byte) ([]byte, time.Time, error) {
	if w, ok := t.writes[string(key)]; ok {
		if w.delete {
			return nil, time.Time{}, kv.ErrNotFound
		}
		var exp time.Time
		if w.ttl > 0 {
			exp = time.Now().Add(w.ttl)
		}
		return bytes.Clone(w.value), exp, nil
	}
	return t.reader.GetExpiry(key)
}

func (t *txn) Scan(prefix []byte, opts kv.ScanOptions, fn func(key, value []byte) error) error {
	lo, hi, err := scanRange(prefix, opts)
	if err != nil {
		return err
	}
	var own []*write
	for k, w := range t.writes {
		if k >= string(lo) && (hi == nil || k < string(hi)) {
			own = append(own, w)
		}
	}
	sort.Slice(own, func(i, j int) bool { return bytes.Compare(own[i].key, own[j].key) < 0 })
	if opts.Reverse {
		slices.Reverse(own)
	}
	return t.scan(prefix, opts, own, fn)
}

func (t *txn) Set(key, value []byte, ttl time.Duration) error {
	if err := kv.CheckKey("set", key); err != nil {
		return err
	}
	return t.put(&write{key: bytes.Clone(key), value: bytes.Clone(value), ttl: ttl})
}

func (t *txn) Delete(key []byte) error {
	if err := kv.CheckKey("delete", key); err != nil {
		return err
	}
	return t.put(&write{key: bytes.Clone(key), delete: true})
}

// put buffers w; a transaction past etcd's operation limit fails here, as
// kv.ErrTooBig, so kv.Apply turns to its journal.
func (t *txn) put(w *write) error {
	if _, ok := t.writes[string(w.key)]; !ok && len(t.writes) >= t.s.opts.MaxTxnOps {
		return fmt.Errorf("kv: set %s: a transaction holds at most %d writes on etcd (its --max-txn-ops): %w", kv.Short(w.key), t.s.opts.MaxTxnOps, kv.ErrTooBig)
	}
	t.writes[string(w.key)] = w
	return nil
}

// commit writes the buffered writes if no key read changed since.
func (t *txn) commit() error {
	if len(t.writes) == 0 {
		return t.ctx.Err()
	}
	ws := make([]write, 0, len(t.writes))
	for _, w := range t.writes {
		ws = append(ws, *w)
	}
	_, err := t.s.commit(t.ctx, "update", t.reads, ws)
	return err
}
