package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/server/service"
)

// TestInspectorServed opens the inspector of a real `engine serve
// --listen` the way a person does: the URL it printed (token in the
// query) sets the cookie, and from then on pages and the delete action
// work with the cookie alone; without it, 401. The unix socket needs no
// token.
func TestInspectorServed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := startServe(t, dir, "--listen", "127.0.0.1:0")
	var open string
	deadline := time.After(hang)
	for open == "" {
		select {
		case l := <-p.lines:
			if u, ok := strings.CutPrefix(l, "engine: inspector: "); ok {
				open = u
			}
		case <-deadline:
			t.Fatalf("no inspector URL printed\n%s", p.log())
		}
	}
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{64}$`).MatchString(open) {
		t.Fatalf("inspector URL %q", open)
	}
	u, _ := url.Parse(open)
	base := "http://" + u.Host

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	get := func(c *http.Client, path string) (int, string) {
		t.Helper()
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get(http.DefaultClient, "/lessons"); code != 401 {
		t.Fatalf("without the cookie: %d", code)
	}
	resp, err := browser.Get(open)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.RawQuery != "" || resp.Request.URL.Path != "/" {
		t.Fatalf("opening %s: %d at %s", open, resp.StatusCode, resp.Request.URL)
	}
	code, page := get(browser, "/lessons")
	if code != 200 || !strings.Contains(page, "engine inspector") {
		t.Fatalf("lessons with the cookie: %d\n%s", code, page)
	}
	// Delete a seed lesson through the page's form, with the cookie.
	m := regexp.MustCompile(`<tr id="([^"]+)"[\s\S]*?name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no lesson row with a delete form:\n%s", page)
	}
	resp, err = browser.PostForm(base+"/lessons/"+m[1]+"/delete", url.Values{"csrf": {m[2]}, "back": {"/lessons"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "Deleted lesson") {
		t.Fatalf("delete: %d\n%s", resp.StatusCode, body)
	}
	rc, err := service.DialRemote(base, u.Query().Get("token"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.CloseIdleConnections()
	if _, err := api.NewClient(rc.HTTP, rc.BaseURL, api.ClientOptions{}).Lesson(ctx, m[1]); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("the deleted lesson: %v", err)
	}
	// The socket serves the inspector with no token.
	sc, err := service.Dial(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.CloseIdleConnections()
	resp, err = sc.HTTP.Get(sc.BaseURL + "/runs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("socket: %d", resp.StatusCode)
	}
}
