package event

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
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

// marshalRef is MarshalJSON as json.Marshal of each part: the name first,
// then the fields in key order.
func marshalRef(e Event) ([]byte, error) {
	name, err := json.Marshal(e.Name)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"event":`)
	b.Write(name)
	for _, k := range slices.Sorted(maps.Keys(e.Fields)) {
		if k == "event" {
			continue
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(e.Fields[k])
		if err != nil {
			return nil, err
		}
		b.WriteByte(',')
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MarshalJSON renders what json.Marshal renders of each part, joined; a
// field that cannot be rendered is an error that names it.
func TestMarshalJSONParts(t *testing.T) {
	for _, e := range []Event{
		{Name: "a<b>"},
		{Name: "context_built", Fields: map[string]any{"dropped": []map[string]any{{"section": "x", "tokens": 3}}, "goal": "<&\u2028>", "n": json.Number("1e3"), "raw": json.RawMessage(` [1, 2] `), "own": spaced{}, "nil": nil, "f": 0.1}},
	} {
		got, err := e.MarshalJSON()
		want, werr := marshalRef(e)
		if err != nil || werr != nil || string(got) != string(want) {
			t.Fatalf("MarshalJSON = %s, %v; want %s, %v", got, err, want, werr)
		}
	}
	_, err := Event{Name: "x", Fields: map[string]any{"bad": make(chan int)}}.MarshalJSON()
	if err == nil || !strings.Contains(err.Error(), "event x: field bad: json: unsupported type: chan int") {
		t.Fatalf("err = %v", err)
	}
}
