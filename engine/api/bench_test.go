package api_test

import (
	"context"
	"testing"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/lesson"
	"github.com/engine-dev/engine/engine/memory"
)

// BenchmarkRecallError compares Trigger A called on the stores with the
// same call through the API served in this process (api.Local): the cost
// of going through HTTP when a command holds the memory itself.
func BenchmarkRecallError(b *testing.B) {
	ctx := context.Background()
	m, err := memory.Open(ctx, b.TempDir(), memory.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	for i := range 200 {
		if _, _, err := m.Lessons.Record(ctx, lesson.Lesson{Lesson: "scroll first", Category: "site_specific", FailedCommand: "click",
			ErrorPattern: "not visible " + string(rune('a'+i%26)) + string(rune('a'+i/26)), Domain: "shop.example"}, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.Lessons.RecallError(ctx, "click e12", "element not visible ab", "shop.example"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("local", func(b *testing.B) {
		c := api.Local(api.Handler(m, api.Options{}), api.ClientOptions{})
		defer c.Close()
		for b.Loop() {
			if _, err := c.RecallError(ctx, "click e12", "element not visible ab", "shop.example"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
