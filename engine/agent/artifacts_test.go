package agent

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/engine-dev/engine/engine/memory/runfiles"
	"github.com/engine-dev/engine/engine/trust/redact"
)

// The line the agent writes to actions.jsonl is runfiles.Record: its bytes
// keep their field order and omissions (engine learn and older readers
// read them), and runfiles reads back the record that was written.
func TestActionRecordReadsBack(t *testing.T) {
	dir := t.TempDir()
	a, err := openArtifacts(dir)
	if err != nil {
		t.Fatal(err)
	}
	full := record{Record: runfiles.Record{Step: 7, Action: "fill", Ref: "e3", Value: "v", OK: true, Error: "err", URL: "http://x/",
		Role: "textbox", Name: "Q", Replayed: true, Approval: "approved", ToolError: "te", Origin: "browser",
		Screenshot: "/a/b.png", Lessons: []string{"l1", "l2"}, Trajectory: "t1"}, attributed: true, secret: true}
	a.log(full)
	a.log(record{})
	a.close(redact.New(redact.Options{}))

	b, err := os.ReadFile(filepath.Join(dir, ActionsFile))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"step":7,"action":"fill","ref":"e3","value":"v","ok":true,"error":"err","url":"http://x/","role":"textbox","name":"Q","replayed":true,"approval":"approved","tool_error":"te","origin":"browser","screenshot":"/a/b.png","lessons_shown":["l1","l2"],"trajectory_shown":"t1"}
{"step":0,"action":"","ok":false}
`
	if string(b) != want {
		t.Fatalf("actions.jsonl:\n%s\nwant:\n%s", b, want)
	}
	got, more, err := runfiles.Records(dir, 0)
	if err != nil || more {
		t.Fatal(more, err)
	}
	if wantRecs := []runfiles.Record{full.Record, {}}; !reflect.DeepEqual(got, wantRecs) {
		t.Fatalf("read back %+v\nwant %+v", got, wantRecs)
	}
}
