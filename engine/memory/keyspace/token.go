package keyspace

// Tokens: the bearer tokens a memory server accepts besides its
// serve.token, one record each, stored once per store outside every
// namespace (a token names the namespaces it opens, so it belongs to
// none of them). The record holds the SHA-256 of the token, never the
// token itself.
//
//	token/<id>  → token record (JSON): hash, namespace ("*": all), role,
//	              name, created, expires                (see engine/memory/token)

// Token is the key of token id's record.
func Token(id string) []byte { return []byte("token/" + esc(id)) }

// TokensPrefix is the range of every token record.
func TokensPrefix() []byte { return []byte("token/") }
