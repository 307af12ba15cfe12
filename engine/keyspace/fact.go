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
