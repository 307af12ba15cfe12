package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestJSONListForms checks that a streamed list is a JSON array and a
// page is {"items", "next_cursor"}, empty or not, with or without a cursor.
func TestJSONListForms(t *testing.T) {
	type item struct {
		ID string `json:"id"`
	}
	for _, n := range []int{0, 1, 3} {
		var b strings.Builder
		a := newJSONArray(&b)
		for i := range n {
			a.add(item{ID: string(rune('a' + i))})
		}
		a.close()
		var arr []item
		if err := json.Unmarshal([]byte(b.String()), &arr); err != nil || len(arr) != n {
			t.Fatalf("array of %d: %v\n%s", n, err, b.String())
		}
		for _, next := range []string{"", "c\"ur"} {
			var b strings.Builder
			p := newJSONPage(&b)
			for i := range n {
				p.add(item{ID: string(rune('a' + i))})
			}
			p.closePage(next)
			var page struct {
				Items []item  `json:"items"`
				Next  *string `json:"next_cursor"`
			}
			if err := json.Unmarshal([]byte(b.String()), &page); err != nil || len(page.Items) != n || page.Items == nil {
				t.Fatalf("page of %d: %v\n%s", n, err, b.String())
			}
			if (next == "") != (page.Next == nil) || page.Next != nil && *page.Next != next {
				t.Fatalf("page of %d, cursor %q: next_cursor %v\n%s", n, next, page.Next, b.String())
			}
		}
	}
}
