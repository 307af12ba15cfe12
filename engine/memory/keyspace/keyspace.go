// Package keyspace is the one place the engine's key layout is written down.
// Every store builds its keys here and nowhere else.
//
// Keys are printable ASCII with '/' between parts; free-text parts are
// path-escaped so they never contain '/'. Memory is domain first: everything
// remembered about one site (its registrable domain, eTLD+1) lies in one
// contiguous range, so a site's memory is read with one prefix scan and
// forgotten with one DropPrefix.
//
//	meta/schema                              → schema version, decimal
//	meta/seeded                              → "1" once the seed lessons were written
//	meta/migrating                           → version a migration started from, while
//	                                            one is unfinished            (see schema.go)
//
//	id/lesson/<id>                           → <site> the lesson is stored under
//	id/trajectory/<id>                       → <site> the trajectory is stored under, TTL
//	                                            (see trajectory.go)
//	due/lesson/<yyyy-mm-dd>/<id>             → "" learned lessons by last_used (pruning)
//	list/lesson/<pos>                        → <site>: every lesson in list order
//	list/lesson-cat/<category>/<pos>         → <site>: one category's lessons in list order
//	  <pos> = <tier>/<use><src>/<id>: Tier 1 first, then most used, then seeds ("0")
//	  before learned ("1"), then id; a page of lessons is one range scan (see lesson.go)
//
//	run/<id>                                 → run manifest (JSON)           (see run.go)
//	runidx/all/<started>/<id>                → "" every run, by start time
//	runidx/status/<status>/<started>/<id>    → "" runs by status
//	runidx/session/<session>/<started>/<id>  → "" runs by session id
//	plan/<run>/<n>                           → planner iteration n (JSON)    (see plan.go)
//
//	site/<site>/                             ── one site's memory; <site> is "-" for
//	                                            memory bound to no site (global lessons)
//	site/<site>/lesson/<id>                  → lesson (JSON)
//	site/<site>/lesson-cmd/<cmd>/<use>/<id>  → match entry: lessons by failed_command
//	                                            ("" = none), most used first
//	site/<site>/lesson-host/<host>/<use>/<id> → rank entry: lessons by the host they are
//	                                            bound to, most used first
//	site/<site>/lesson-gen                   → random token, rewritten by every lesson write in
//	                                            the site: the compiled recall index's check
//	site/<site>/lesson-list/<host>/<pos>     → <category>: lessons bound to exactly <host>,
//	                                            in list order (pages with a domain filter)
//	site/<site>/tier1/<rank>/<id>            → lesson (JSON) in Tier 1 order (global site only):
//	                                            rank = <use>, then "0" for seeds, "1" for
//	                                            learned
//	  <use> is 16 hex digits of ^use_count, so the most used sort first
//	site/<site>/learned-log/<sha256>         → RFC 3339 time: an action log post-run learning
//	                                            read (lesson.LogDigest); read once only
//	site/<site>/fact/<host>/<type>/<key>/<vhash>
//	                                         → fact candidate (JSON)   (see fact.go)
//	site/<site>/fact-gen                     → token changed by every fact write
//	site/<site>/selector/<host>/<path>/<role>/<name>/<shash>
//	                                         → known selector (JSON)   (see selector.go)
//	site/<site>/selector-gen                 → token changed by every selector write
//	site/<site>/trajectory/rec/<id>          → trajectory (JSON), TTL  (see trajectory.go)
//	site/<site>/trajectory/idx/<id>          → compact match entry, TTL
//	site/<site>/trajectory/gen               → token changed by every trajectory write
//	site/<site>/session/<when>/<shash>       → session (JSON), newest last  (see session.go)
//	site/<site>/session-gen                  → write counter + kept list, read by Get (see session.go)
//	site/<site>/run/<started>/<id>           → "" the site's runs             (see run.go)
//
//	quarantine/lesson/<id>                   → lesson (JSON) held out of every prompt, with its
//	                                            reason (engine/trust/injection), until approved or rejected
//	quarantine/fact/<site>/<id>              → fact (JSON) held likewise        (see fact.go)
//	quarantine/trajectory/<site>/<id>        → trajectory (JSON) held likewise, TTL (see trajectory.go)
//	damaged/<key>                            → a record that did not decode, moved aside
//	                                            byte for byte by engine doctor --repair
//
//	kv/journal/                              ── reserved for kv's undo journal (kv.Apply);
//	                                            no store writes there
//	ns/<name>/                               ── a named namespace: every key above again,
//	                                            meta/schema and token/ excepted (see namespace.go)
//	token/<id>                               → a scoped bearer token's record (its hash, never
//	                                            the token), once per store     (see token.go)
//
// Secondary indexes outside the site ranges (id/, due/, list/, runidx/) are kept in the same
// transaction as the record they point at; forgetting a site deletes its
// entries there before it drops the range.
package keyspace

import (
	"fmt"
	"net/url"
	"strings"
)

// Global is the site part of keys for memory bound to no site.
const Global = "-"

// Schema is the key of the stored schema version.
func Schema() []byte { return []byte("meta/schema") }

// Seeded is the key that marks the seed lessons as written.
func Seeded() []byte { return []byte("meta/seeded") }

// SitePrefix is the range of everything remembered about site.
func SitePrefix(site string) []byte { return []byte("site/" + esc(site) + "/") }

// SitesPrefix is the range of all sites' memory.
func SitesPrefix() []byte { return []byte("site/") }

// SiteOf returns the site part of a key in a site range.
func SiteOf(key []byte) (string, error) {
	rest, ok := strings.CutPrefix(string(key), "site/")
	if !ok {
		return "", fmt.Errorf("keyspace: %q is not a site key", key)
	}
	s, _, ok := strings.Cut(rest, "/")
	if !ok {
		return "", fmt.Errorf("keyspace: %q is not a site key", key)
	}
	return url.PathUnescape(s)
}

// LastPart returns the part of key after its last '/', unescaped: the id of
// an index entry.
func LastPart(key []byte) string {
	k := string(key)
	s, err := url.PathUnescape(k[strings.LastIndexByte(k, '/')+1:])
	if err != nil {
		return k[strings.LastIndexByte(k, '/')+1:]
	}
	return s
}

// esc path-escapes one free-text key part so it holds no '/'.
func esc(s string) string { return url.PathEscape(s) }
