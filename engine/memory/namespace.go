package memory

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// DefaultNamespace is how the default namespace (the unprefixed keys, a data
// dir's memory from before namespaces) is named where a name is shown or
// given: `engine namespaces list`, --namespace -, the Engine-Namespace header.
const DefaultNamespace = "-"

// NamespaceRule says which names a namespace may have.
const NamespaceRule = "1 to 63 lower-case letters, digits, '-' and '_' (or - for the default)"

// CheckNamespace refuses a namespace name outside NamespaceRule as bad
// input; "" and "-" are the default namespace.
func CheckNamespace(name string) error {
	if name == "" || name == DefaultNamespace {
		return nil
	}
	ok := len(name) <= 63
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
	}
	if !ok {
		return engine.Invalidf("namespace", "%q: a namespace name is %s", name, NamespaceRule)
	}
	return nil
}

// namespaces remembers which named namespaces this process has readied
// (journal recovered, seeds written) or seen to exist, once per memory
// from New.
type namespaces struct {
	mu    sync.Mutex
	ready map[string]bool
	known map[string]bool
}

// UnknownNamespaceError is a named namespace the store does not hold:
// namespaces are made by CreateNamespace, never by naming one. Known are
// the namespaces that exist ("-" first); a caller that may see only some
// of them narrows the list before showing it.
type UnknownNamespaceError struct {
	Name  string
	Known []string
}

func (e *UnknownNamespaceError) Error() string {
	return fmt.Sprintf("namespace %q does not exist (namespaces: %s); create it with engine namespaces create %s",
		e.Name, strings.Join(e.Known, ", "), e.Name)
}

// Is makes the error an engine.ErrNotFound.
func (e *UnknownNamespaceError) Is(target error) bool { return target == engine.ErrNotFound }

// WithNamespace returns the same memory (same store, clock, events and
// provenance) in the namespace name: every store reads and writes only
// under ns/<name>/ (kv.Prefixed), so nothing recorded in one namespace is
// seen from another or from the default. "" and "-" name the default
// namespace, which always exists; a named one must exist (CreateNamespace
// made it, or it holds memory from before namespaces were made
// explicitly), else the error is an *UnknownNamespaceError: a mistyped
// name must not quietly start an empty memory. The first use of a named
// namespace in a process readies it: it writes the seed lessons once, as
// Open does for the default, and on a store this process holds alone
// (kv.IsExclusive: badger) it first rolls back an Apply interrupted there
// (kv.Recover, which badger's open runs only for the default). On a shared
// store (etcd) that Apply may be another process's, still running, so only
// engine doctor --repair rolls it back. A read-only memory writes nothing.
// The schema stamp is the store's, outside every namespace.
func (m *Memory) WithNamespace(ctx context.Context, name string) (*Memory, error) {
	return m.withNamespace(ctx, name, false)
}

// CreateNamespace makes the named namespace (its seed lessons written) and
// reports whether it was new; an existing one, and the default, are left
// as they are.
func (m *Memory) CreateNamespace(ctx context.Context, name string) (created bool, err error) {
	if err := CheckNamespace(name); err != nil {
		return false, err
	}
	if name == "" || name == DefaultNamespace {
		return false, nil
	}
	if m.opts.ReadOnly {
		return false, engine.Invalidf("namespace", "%s: this memory is open read-only", name)
	}
	exists, err := m.namespaceExists(ctx, name)
	if err != nil {
		return false, err
	}
	if _, err := m.withNamespace(ctx, name, true); err != nil {
		return false, err
	}
	return !exists, nil
}

func (m *Memory) withNamespace(ctx context.Context, name string, create bool) (*Memory, error) {
	if err := CheckNamespace(name); err != nil {
		return nil, err
	}
	if name == DefaultNamespace {
		name = ""
	}
	if name == m.ns {
		return m, nil
	}
	d := newOver(m.root, m.opts)
	if name != "" {
		d = newOver(kv.Prefixed(m.root, keyspace.Namespace(name)), m.opts)
	}
	d.root, d.ns, d.spaces = m.root, name, m.spaces
	if name == "" {
		return d, nil
	}
	s := m.spaces
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready[name] {
		return d, nil
	}
	if !create && !s.known[name] {
		exists, err := m.namespaceExists(ctx, name)
		if err != nil {
			return nil, err
		}
		if !exists {
			known, err := m.NamespaceNames(ctx)
			if err != nil {
				return nil, err
			}
			return nil, &UnknownNamespaceError{Name: name, Known: known}
		}
		s.known[name] = true
	}
	if m.opts.ReadOnly {
		return d, nil
	}
	if kv.IsExclusive(m.root) {
		if _, err := kv.Recover(ctx, d.db); err != nil {
			return nil, fmt.Errorf("namespace %s: %w", name, err)
		}
	}
	if err := d.Lessons.Seed(ctx); err != nil {
		return nil, fmt.Errorf("namespace %s: %w", name, err)
	}
	s.ready[name], s.known[name] = true, true
	return d, nil
}

// namespaceExists reports whether the store holds a key of the named
// namespace (its seeds' mark, at least, once it was made).
func (m *Memory) namespaceExists(ctx context.Context, name string) (bool, error) {
	found := false
	err := m.root.View(ctx, func(r kv.Reader) error {
		return r.Scan(keyspace.Namespace(name), kv.ScanOptions{KeysOnly: true, Limit: 1}, func(_, _ []byte) error {
			found = true
			return nil
		})
	})
	return found, err
}

// NamespaceNames lists the namespaces of the store, the default ("-")
// first, then by name: one scan that skips from each namespace's first key
// to the next namespace.
func (m *Memory) NamespaceNames(ctx context.Context) ([]string, error) {
	out := []string{DefaultNamespace}
	prefix := keyspace.NamespacesPrefix()
	err := m.root.View(ctx, func(r kv.Reader) error {
		var start []byte
		for {
			var next string
			err := r.Scan(prefix, kv.ScanOptions{KeysOnly: true, Limit: 1, Start: start}, func(k, _ []byte) error {
				name, _, ok := bytes.Cut(k[len(prefix):], []byte("/"))
				if ok {
					next = string(name)
				}
				return nil
			})
			if err != nil || next == "" {
				return err
			}
			out = append(out, next)
			// The key after every key of the namespace: its prefix with
			// the '/' bumped to '0'.
			start = append(append([]byte{}, prefix...), next+"0"...)
		}
	})
	return out, err
}

// Namespace is the memory's namespace ("" for the default).
func (m *Memory) Namespace() string { return m.ns }

// NamespaceInfo is one namespace as `engine namespaces list` shows it.
type NamespaceInfo struct {
	// Name is the namespace's name, "-" for the default.
	Name string `json:"name"`
	// Keys is how many keys it holds (seeds and indexes included).
	Keys int `json:"keys"`
	// Sites is how many sites it holds memory about (the global
	// site of memory bound to no site not counted).
	Sites int `json:"sites"`
}

// Namespaces lists every namespace of the store, the default first, then
// by name: one keys-only scan of the whole store (every namespace's keys
// are counted).
func (m *Memory) Namespaces(ctx context.Context) ([]NamespaceInfo, error) {
	nsPrefix := keyspace.NamespacesPrefix()
	sitesPrefix := keyspace.SitesPrefix()
	tokensPrefix := keyspace.TokensPrefix()
	tokenHashes := keyspace.TokenHashesPrefix()
	var out []NamespaceInfo
	err := m.root.View(ctx, func(r kv.Reader) error {
		out = []NamespaceInfo{{Name: DefaultNamespace}}
		cur := 0 // index in out of the namespace of the key before
		var lastSite []byte
		return r.Scan(nil, kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			at := 0
			if bytes.HasPrefix(k, tokensPrefix) || bytes.HasPrefix(k, tokenHashes) {
				return nil // the store's, not the default namespace's
			}
			if rest, ok := bytes.CutPrefix(k, nsPrefix); ok {
				name, inner, ok := bytes.Cut(rest, []byte("/"))
				if !ok {
					return nil // not a namespace's key
				}
				if at = len(out) - 1; at == 0 || out[at].Name != string(name) {
					out = append(out, NamespaceInfo{Name: string(name)})
					at = len(out) - 1
				}
				k = inner
			}
			if at != cur {
				cur, lastSite = at, lastSite[:0]
			}
			out[at].Keys++
			if rest, ok := bytes.CutPrefix(k, sitesPrefix); ok {
				site, _, _ := bytes.Cut(rest, []byte("/"))
				if string(site) != keyspace.Global && (len(lastSite) == 0 || !bytes.Equal(site, lastSite)) {
					out[at].Sites++
					lastSite = append(lastSite[:0], site...)
				}
			}
			return nil
		})
	})
	return out, err
}
