package keyspace

// Selectors: element identity → known selectors.
//
//	site/<site>/selector/<host>/<path>/<role>/<name>/<shash> → selector (JSON)
//	site/<site>/selector-gen → random token rewritten by every selector write
//
// <path> is the normalised page path the selector is scoped to, or "-" for
// one that holds anywhere on the host; <role> and <name> are the element's
// normalised ARIA role and accessible name; <shash> is 16 hex digits of the
// selector's hash. All selectors of one element on one page lie together.

// AnyPath is the path part of a selector that holds on every page.
const AnyPath = "-"

// Selector is the key of one known selector for an element.
func Selector(site, host, path, role, name, selectorHash string) []byte {
	return []byte("site/" + esc(site) + "/selector/" + esc(host) + "/" + esc(path) + "/" + esc(role) + "/" + esc(name) + "/" + selectorHash)
}

// Selectors is the range of one site's selectors.
func Selectors(site string) []byte { return []byte("site/" + esc(site) + "/selector/") }

// IsSelector reports whether key (in a site range) is a selector record.
func IsSelector(key []byte) bool { return kindOf(key) == "selector" }

// SelectorGen is the key of one site's selector generation token.
func SelectorGen(site string) []byte { return []byte("site/" + esc(site) + "/selector-gen") }
