package keyspace

import "strings"

// Trajectories: successful runs' recordings, with a compact match index.
//
//	site/<site>/trajectory/rec/<id>  → trajectory (JSON), TTL = expiry
//	site/<site>/trajectory/idx/<id>  → match entry: NUL-separated fields (id,
//	                                   host, recorded_at, expires_at, duration,
//	                                   verified share, slots, goal template;
//	                                   see engine/memory/trajectory), TTL = expiry
//	site/<site>/trajectory/gen       → random token rewritten by every write,
//	                                   so an in-process index cache knows
//	                                   when to reload
//
// Matching reads the idx range (or a cache of it), never the records, and
// then reads the one record that won.

// Trajectories by id, outside the site ranges:
//
//	id/trajectory/<id> → <site> the trajectory is stored under, TTL = expiry
//
// written and deleted with the record (and its match entry), so a lookup by
// id alone (engine trajectories show ID) is one read. A store written before
// the entry existed has none: a miss falls back to a scan of the site keys.

// TrajectoryID is the key of trajectory id's site entry.
func TrajectoryID(id string) []byte { return []byte("id/trajectory/" + esc(id)) }

// Trajectory is the key of one trajectory record.
func Trajectory(site, id string) []byte {
	return []byte("site/" + esc(site) + "/trajectory/rec/" + esc(id))
}

// Trajectories is the range of one site's trajectory records.
func Trajectories(site string) []byte { return []byte("site/" + esc(site) + "/trajectory/rec/") }

// TrajectoryIndex is the key of one trajectory's match entry.
func TrajectoryIndex(site, id string) []byte {
	return []byte("site/" + esc(site) + "/trajectory/idx/" + esc(id))
}

// TrajectoryIndexes is the range of one site's match entries.
func TrajectoryIndexes(site string) []byte {
	return []byte("site/" + esc(site) + "/trajectory/idx/")
}

// TrajectoryGen is the key of one site's trajectory generation token.
func TrajectoryGen(site string) []byte { return []byte("site/" + esc(site) + "/trajectory/gen") }

// IsTrajectory reports whether key (in a site range) is a trajectory record.
func IsTrajectory(key []byte) bool {
	return kindOf(key) == "trajectory" && strings.Contains(string(key), "/trajectory/rec/")
}

// kindOf returns the <kind> part of a site key: "site/<site>/<kind>/...".
func kindOf(key []byte) string {
	rest, ok := strings.CutPrefix(string(key), "site/")
	if !ok {
		return ""
	}
	_, rest, ok = strings.Cut(rest, "/")
	if !ok {
		return ""
	}
	kind, _, _ := strings.Cut(rest, "/")
	return kind
}

// Quarantined trajectories: a trajectory whose goal or one of whose steps'
// texts failed the screen (engine/trust/injection) is held outside the site's
// trajectory ranges, so no match or list reaches it:
//
//	quarantine/trajectory/<site>/<id> → trajectory (JSON) with its reason, TTL = expiry
//
// The site part lets forgetting a site drop its held trajectories with one
// range.

// QuarantinedTrajectory is the key of a trajectory held out of every prompt.
func QuarantinedTrajectory(site, id string) []byte {
	return []byte("quarantine/trajectory/" + esc(site) + "/" + esc(id))
}

// QuarantinedTrajectoriesOf is the range of one site's held trajectories.
func QuarantinedTrajectoriesOf(site string) []byte {
	return []byte("quarantine/trajectory/" + esc(site) + "/")
}

// QuarantinedTrajectories is the range of every held trajectory.
func QuarantinedTrajectories() []byte { return []byte("quarantine/trajectory/") }
