package chromedp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// benchPage is plugins/loader's catalogue page (rows × a link, a quantity
// input and a button) with a sign-in form: two secret fields.
func benchPage(rows int) string {
	var sb strings.Builder
	sb.WriteString(`<!doctype html><title>Catalogue</title><h1>Catalogue</h1>
<form><input type="email" aria-label="Email"><input type="password" aria-label="Password" value="pw-123456"><input aria-label="API key" value="sk-0123456789abcdef"></form><form>`)
	for i := range rows {
		fmt.Fprintf(&sb, `<div class="row"><a href="/p/%d">Product number %d, a padel racket</a>
<input aria-label="Quantity %d" value="1"><button type="button">Add %d to cart</button>
<p>Carbon frame, 360 g, balance medium. Ships in 2 days. Item %d.</p></div>`, i, i, i, i, i)
	}
	sb.WriteString("</form>")
	return sb.String()
}

// BenchmarkSecrets: the share of a snapshot and of a screenshot that
// finding (and masking) the secret fields costs.
func BenchmarkSecrets(b *testing.B) {
	for _, rows := range []int{25, 250} {
		br := open(b)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, benchPage(rows)) }))
		ctx := context.Background()
		br.SetSnapshotBounds(1<<20, 1<<20)
		if err := br.Navigate(ctx, ts.URL); err != nil {
			b.Fatal(err)
		}
		run := func(name string, f func() error) {
			b.Run(fmt.Sprintf("rows=%d/%s", rows, name), func(b *testing.B) {
				for b.Loop() {
					if err := f(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		run("snapshot", func() error { _, err := br.Snapshot(ctx); return err })
		run("secret-fields", func() error {
			ids, err := secretFields(br.ctx)
			if err == nil && len(ids) != 2 {
				err = fmt.Errorf("%d secret fields", len(ids))
			}
			return err
		})
		run("screenshot", func() error { _, err := br.Screenshot(ctx); return err })
		run("mask+unmask", func() error { maskSecrets(br.ctx)(); return nil })
		ts.Close()
		br.Close()
	}
}
