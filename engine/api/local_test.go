package api_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/engine-dev/engine/engine/api"
)

// A request body past a route's limit is refused with 413 through the
// in-process client as over a socket.
func TestLocalBodyPastTheLimit(t *testing.T) {
	c := api.Local(api.Handler(open(t), api.Options{}), api.ClientOptions{})
	defer c.Close()
	big := bytes.Repeat([]byte(" "), api.MaxBody+10)
	req, _ := http.NewRequest(http.MethodPost, "http://engine/v1/recall/error", bytes.NewReader(big))
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: c.RoundTripper()}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body past the limit: %s, want 413", resp.Status)
	}
}
