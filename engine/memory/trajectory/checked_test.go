package trajectory

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

// Each step keeps the page path and fingerprints it ran on (listed, in
// JSON, and handed to a match); steps without them (older records) still
// record and match; a fingerprint that is not one is bad input.
func TestStepsKeepWhatTheyRanOn(t *testing.T) {
	e := newEnv(t, Options{})
	tr := searchRun()
	tr.Steps[0].Path, tr.Steps[0].Page, tr.Steps[0].Fingerprint = "/", "0a1b2c3d", "44556677"
	got := e.record(tr)
	if st := got.Steps[0]; st.Path != "/" || st.Page != "0a1b2c3d" || st.Fingerprint != "44556677" {
		t.Fatalf("step 1 %+v", st)
	}
	if st := got.Steps[1]; st.Path != "" || st.Page != "" || st.Fingerprint != "" {
		t.Fatalf("step 2 without them %+v", st)
	}
	b, _ := json.Marshal(got.Steps[0])
	if !strings.Contains(string(b), `"path":"/","page":"0a1b2c3d","fingerprint":"44556677"`) {
		t.Fatalf("json %s", b)
	}
	m := e.match("www.shop.example", "search tennis balls")
	if m == nil || m.Steps[0].Page != "0a1b2c3d" {
		t.Fatalf("match %+v", m)
	}
	bad := searchRun()
	bad.Steps[2].Page = "XYZ"
	if _, err := e.s.Record(context.Background(), bad); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("bad page fingerprint: %v", err)
	}
}
