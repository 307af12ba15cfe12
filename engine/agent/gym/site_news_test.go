package gym

import (
	"fmt"
	"html"
	"strings"
	"testing"
)

// TestNewsTraps checks the news site on both variants: the chat widget on
// every page with the variant's close button and no Escape handler, the
// pager's name, and that most tasks' articles are on a later page, found
// by following the pager; on the changed variant the stories moved.
func TestNewsTraps(t *testing.T) {
	pageOf := map[bool]map[string]int{false: {}, true: {}}
	for _, changed := range []bool{false, true} {
		srv := aSite(t, "news", changed)
		closeName, next := "Close chat", "Next page"
		if changed {
			closeName, next = "End chat", "Older stories"
		}
		for page := 1; ; page++ {
			resp, body := aGet(t, nil, fmt.Sprintf("%s/?page=%d", srv.URL, page))
			if resp.StatusCode != 200 {
				t.Fatalf("changed %v, page %d: %s", changed, page, resp.Status)
			}
			if !strings.Contains(body, `id="chat-widget"`) || !strings.Contains(body, ">"+closeName+"</button>") || strings.Contains(body, "keydown") {
				t.Errorf("changed %v, page %d: no chat widget closed by %q alone", changed, page, closeName)
			}
			for _, task := range aTasks("news") {
				title := strings.TrimSuffix(strings.TrimPrefix(task.Goal, `open the article titled "`), `"`)
				if strings.Contains(html.UnescapeString(body), ">"+title+"</a>") {
					pageOf[changed][task.Name] = page
				}
			}
			if !strings.Contains(body, ">"+next+"</a>") {
				break
			}
		}
		if resp, _ := aGet(t, nil, srv.URL+"/?page=99"); resp.StatusCode != 404 {
			t.Errorf("changed %v: a page past the last: %s", changed, resp.Status)
		}
		_, article := aGet(t, nil, srv.URL+"/article/harbour-bridge")
		if !strings.Contains(article, "<title>Harbour bridge reopens after two years of repairs</title>") || !strings.Contains(article, `id="chat-widget"`) {
			t.Errorf("changed %v: the article page", changed)
		}
	}
	later, moved := 0, 0
	for _, task := range aTasks("news") {
		p, pc := pageOf[false][task.Name], pageOf[true][task.Name]
		if p == 0 || pc == 0 {
			t.Fatalf("%s: not listed (page %d, changed %d)", task.Name, p, pc)
		}
		if p > 1 {
			later++
		}
		if p != pc {
			moved++
		}
	}
	if later < 3 || moved < 3 {
		t.Errorf("of the tasks' articles %d are on a later page and %d move on the changed variant: want 3 or more each", later, moved)
	}
}
