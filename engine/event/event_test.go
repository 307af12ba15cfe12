package event

import (
	"bytes"
	"encoding/json"
	"testing"
)

type spaced struct{}

func (spaced) MarshalJSON() ([]byte, error) { return []byte(`{ "a" : [ 1, 2 ] }`), nil }

// A line of the JSONL is the event as json.Marshal renders it: HTML
// characters, line separators, raw JSON with spaces and a value's own
// MarshalJSON come out escaped and compact alike.
func TestJSONLLineIsMarshal(t *testing.T) {
	evs := []Event{
		{Name: "tier1_loaded"},
		{Name: "x<y>&z", Fields: map[string]any{
			"text": "a <b> & c \u2028 d \u2029 \xff", "n": json.Number("0.60"), "ok": true, "none": nil,
			"raw": json.RawMessage(`{ "k" : "<v>" }`), "own": spaced{}, "list": []any{"<", 1.5, map[string]any{"z": "&", "a": []string{"\u2028"}}},
			"event": "dropped",
		}},
	}
	var buf bytes.Buffer
	j := NewJSONL(&buf)
	var want bytes.Buffer
	for _, e := range evs {
		j.Write(e)
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		want.Write(append(b, '\n'))
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.String() != want.String() {
		t.Fatalf("JSONL wrote\n%s\nwant\n%s", buf.String(), want.String())
	}
}
