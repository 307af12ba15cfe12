package keyspace

// Namespaces: a named namespace holds the whole layout above (its own
// meta/seeded, site/, id/, list/, run/, ... and kv/journal/) under
// ns/<name>/; the default namespace is the unprefixed layout itself, so a
// data dir from before namespaces is the default namespace unchanged.
// meta/schema lives once per store, outside every namespace: one schema
// version covers them all; so do the tokens (token/), which name the
// namespaces they open.
//
//	ns/<name>/<any key above>                → the same key in namespace <name>

// Namespace is the prefix of every key of the named namespace.
func Namespace(name string) []byte { return []byte("ns/" + name + "/") }

// NamespacesPrefix is the range of every named namespace.
func NamespacesPrefix() []byte { return []byte("ns/") }
