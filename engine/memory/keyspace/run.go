package keyspace

import (
	"net/url"
	"strings"
)

// Runs: the run registry. A run's manifest is global (runs are looked up by
// id); index entries make every list filter a prefix scan, newest first by
// a reverse scan over <started> (16 hex digits of Unix nanoseconds).
//
//	run/<id>                                   → run manifest (JSON)
//	runidx/all/<started>/<id>                  → "" every run
//	runidx/status/<status>/<started>/<id>      → "" runs by status
//	runidx/session/<session>/<started>/<id>    → "" runs by session id
//	site/<site>/run/<started>/<id>             → "" a site's runs
//
// The site entry lies in the site's range, so a site's runs are found by
// prefix; forgetting a site deletes the manifests and the runidx entries it
// points at before the range is dropped.

// Run is the key of a run manifest.
func Run(id string) []byte { return []byte("run/" + esc(id)) }

// RunsPrefix is the range of all run manifests.
func RunsPrefix() []byte { return []byte("run/") }

// RunByTime indexes a run among all runs.
func RunByTime(started, id string) []byte {
	return []byte("runidx/all/" + started + "/" + esc(id))
}

// RunsByTime is the range of the all-runs index.
func RunsByTime() []byte { return []byte("runidx/all/") }

// RunByStatus indexes a run by status.
func RunByStatus(status, started, id string) []byte {
	return []byte("runidx/status/" + esc(status) + "/" + started + "/" + esc(id))
}

// RunsByStatus is the range of the runs with one status.
func RunsByStatus(status string) []byte { return []byte("runidx/status/" + esc(status) + "/") }

// RunBySession indexes a run by its session id.
func RunBySession(session, started, id string) []byte {
	return []byte("runidx/session/" + esc(session) + "/" + started + "/" + esc(id))
}

// RunsBySession is the range of one session's runs.
func RunsBySession(session string) []byte { return []byte("runidx/session/" + esc(session) + "/") }

// SiteRun indexes a run under the site it ran on.
func SiteRun(site, started, id string) []byte {
	return []byte("site/" + esc(site) + "/run/" + started + "/" + esc(id))
}

// SiteRuns is the range of one site's runs.
func SiteRuns(site string) []byte { return []byte("site/" + esc(site) + "/run/") }

// A run's position in a list of runs is the end of its index keys,
// "<started>/<id>"; each index is in that order, and a reverse scan reads
// the newest first.

// RunPos returns the position at the end of a run index key.
func RunPos(key []byte) string {
	k := string(key)
	i := strings.LastIndexByte(k, '/')
	if i < 0 {
		return ""
	}
	j := strings.LastIndexByte(k[:i], '/')
	return k[j+1:]
}

// CheckRunPos reports whether pos has the shape RunPos returns.
func CheckRunPos(pos string) bool {
	stamp, id, ok := strings.Cut(pos, "/")
	if !ok || len(stamp) != 16 || id == "" || strings.Contains(id, "/") {
		return false
	}
	for _, c := range stamp {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	_, err := url.PathUnescape(id)
	return err == nil
}
