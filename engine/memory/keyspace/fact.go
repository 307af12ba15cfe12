package keyspace

// Facts: one record per candidate value of a (type, key) seen on a host.
//
//	site/<site>/fact/<host>/<type>/<key>/<vhash> → fact (JSON); vhash is 16 hex
//	                                               digits of the value's hash
//	site/<site>/fact-gen                         → random token rewritten by every
//	                                               fact write (in-process cache check)
//
// All candidate values of one (host, type, key) lie together, so observing a
// value reads its rivals with one small prefix scan.

// Fact is the key of one fact candidate.
func Fact(site, host, typ, key, valueHash string) []byte {
	return []byte("site/" + esc(site) + "/fact/" + esc(host) + "/" + esc(typ) + "/" + esc(key) + "/" + valueHash)
}

// FactValues is the range of every candidate value of one (host, type, key).
func FactValues(site, host, typ, key string) []byte {
	return []byte("site/" + esc(site) + "/fact/" + esc(host) + "/" + esc(typ) + "/" + esc(key) + "/")
}

// Facts is the range of one site's facts.
func Facts(site string) []byte { return []byte("site/" + esc(site) + "/fact/") }

// IsFact reports whether key (in a site range) is a fact record.
func IsFact(key []byte) bool { return kindOf(key) == "fact" }

// FactGen is the key of one site's fact generation token.
func FactGen(site string) []byte { return []byte("site/" + esc(site) + "/fact-gen") }

// Quarantined facts: a fact whose key or value failed the screen
// (engine/trust/injection) is held outside the site's fact range, so no list,
// recall or context can reach it:
//
//	quarantine/fact/<site>/<id> → fact (JSON) with its reason; id is 16 hex
//	                              digits of the hash of (host, type, key, value)
//
// The site part lets forgetting a site drop its held facts with one range.

// QuarantinedFact is the key of a fact held out of every prompt.
func QuarantinedFact(site, id string) []byte {
	return []byte("quarantine/fact/" + esc(site) + "/" + esc(id))
}

// QuarantinedFactsOf is the range of one site's held facts.
func QuarantinedFactsOf(site string) []byte { return []byte("quarantine/fact/" + esc(site) + "/") }

// QuarantinedFacts is the range of every held fact.
func QuarantinedFacts() []byte { return []byte("quarantine/fact/") }
