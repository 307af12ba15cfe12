package kv

import "testing"

// An image journal's header record does not decode as undo values, so a
// binary from before image journals, which reads every record under the
// marker's id as such, fails its Recover (and its open) instead of
// restoring the image without deleting what the import added.
func TestImageHeaderIsNoUndoRecord(t *testing.T) {
	if ops, err := decodeUndo(nil, imageHeader); err == nil {
		t.Fatalf("the image header decodes as %d undo ops", len(ops))
	}
}
