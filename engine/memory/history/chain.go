package history

import (
	"encoding/json"
	"time"

	"github.com/engine-dev/engine/engine"
)

// OpCreate is the change that made the first version of a record: it was
// written where none was.
const OpCreate = "create"

// Made is the change that made one state of a record: what (op), when and
// who. A version's own op, at and by name the change that replaced it; the
// change that made it is the op of the version before it.
type Made struct {
	Op string            `json:"op"`
	At time.Time         `json:"at,omitzero"`
	By engine.Provenance `json:"by,omitzero"`
}

// Current is the record in force (null when it was removed or retracted)
// and the change that made it (nil when no version says and the record
// does not).
type Current struct {
	Record json.RawMessage `json:"record"`
	Made   *Made           `json:"made,omitempty"`
}

// Version is one kept version with the change that made it: nil when
// that change is no longer kept (the versions before it fell out of the
// last N) or the version is the absence before an import.
type Version struct {
	Entry
	Made *Made `json:"made,omitempty"`
}

// Chain labels the kept versions es of one record (newest first, as
// Entries returns them) and the record in force (nil when not stored)
// with the change that made each: a version was made by the change the
// next older version records, the record in force by the newest version's
// change, and version 0, when still kept, by its creation (when and who
// as the record itself says).
func Chain(es []Entry, current []byte) (Current, []Version) {
	cur := Current{Record: json.RawMessage(current)}
	if current == nil {
		cur.Record = json.RawMessage(Absent)
	}
	vs := make([]Version, len(es))
	for i, e := range es {
		vs[i] = Version{Entry: e}
		switch {
		case i+1 < len(es):
			o := es[i+1]
			vs[i].Made = &Made{Op: o.Op, At: o.At, By: o.By}
		case e.Version == 0:
			vs[i].Made = created(e.Record)
		}
	}
	switch {
	case len(es) > 0:
		cur.Made = &Made{Op: es[0].Op, At: es[0].At, By: es[0].By}
	case current != nil:
		cur.Made = created(current)
	}
	return cur, vs
}

// created is the creation of rec as the record says (its provenance, and
// the time its provenance, first_seen, recorded_at or created_at gives),
// or nil for the absence.
func created(rec []byte) *Made {
	if IsAbsent(rec) {
		return nil
	}
	var v struct {
		Provenance engine.Provenance `json:"provenance"`
		FirstSeen  string            `json:"first_seen"`
		RecordedAt string            `json:"recorded_at"`
		CreatedAt  string            `json:"created_at"`
	}
	_ = json.Unmarshal(rec, &v) // a record that does not decode says nothing
	m := &Made{Op: OpCreate, By: v.Provenance, At: v.Provenance.At}
	for _, s := range []string{v.FirstSeen, v.RecordedAt, v.CreatedAt} {
		if !m.At.IsZero() {
			break
		}
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			m.At = t
			break
		}
		if t, err := time.Parse(time.DateOnly, s); err == nil {
			m.At = t
			break
		}
	}
	return m
}
