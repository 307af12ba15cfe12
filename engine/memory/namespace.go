package memory

import (
	"bytes"
	"context"
	"fmt"
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
// (journal recovered, seeds written), once per memory from New.
type namespaces struct {
	mu    sync.Mutex
	ready map[string]bool
}

// WithNamespace returns the same memory (same store, clock, events and
// provenance) in the namespace name: every store reads and writes only
// under ns/<name>/ (kv.Prefixed), so nothing recorded in one namespace is
// seen from another or from the default. "" and "-" name the default
// namespace. The first use of a named namespace in a process readies it:
// it writes the seed lessons once, as Open does for the default, and on a
// store this process holds alone (kv.IsExclusive: badger) it first rolls
// back an Apply interrupted there (kv.Recover, which badger's open runs
// only for the default). On a shared store (etcd) that Apply may be
// another process's, still running, so only engine doctor --repair rolls
// it back. A read-only memory writes nothing. The schema stamp is the
// store's, outside every namespace.
func (m *Memory) WithNamespace(ctx context.Context, name string) (*Memory, error) {
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
	if name == "" || m.opts.ReadOnly {
		return d, nil
	}
	s := m.spaces
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready[name] {
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
	s.ready[name] = true
	return d, nil
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
	var out []NamespaceInfo
	err := m.root.View(ctx, func(r kv.Reader) error {
		out = []NamespaceInfo{{Name: DefaultNamespace}}
		cur := 0 // index in out of the namespace of the key before
		var lastSite []byte
		return r.Scan(nil, kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			at := 0
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
