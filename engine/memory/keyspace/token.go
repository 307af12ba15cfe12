package keyspace

// Tokens: the bearer tokens a memory server accepts besides its
// serve.token, one record each, stored once per store outside every
// namespace (a token names the namespaces it opens, so it belongs to
// none of them). The record holds the SHA-256 of the token, never the
// token itself.
//
//	token/<id>          → token record (JSON): hash, namespace ("*": all),
//	                      role, name, created, expires (see engine/memory/token)
//	token-hash/<sha256> → the id of the token of that hash (hex), so a
//	                      token resolves with one read, not a scan
//	token-hash/v1       → present once every record has its token-hash key

// Token is the key of token id's record.
func Token(id string) []byte { return []byte("token/" + esc(id)) }

// TokensPrefix is the range of every token record.
func TokensPrefix() []byte { return []byte("token/") }

// TokenHash is the key of the id of the token whose SHA-256 is sum (hex).
func TokenHash(sum string) []byte { return []byte("token-hash/" + esc(sum)) }

// TokenHashesPrefix is the range of the token hash index.
func TokenHashesPrefix() []byte { return []byte("token-hash/") }

// TokenHashIndexed is the key present once every token record has its
// TokenHash key (records written before the index existed got theirs).
func TokenHashIndexed() []byte { return []byte("token-hash/v1") }
