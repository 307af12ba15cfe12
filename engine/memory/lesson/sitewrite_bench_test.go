package lesson

import (
	"context"
	"fmt"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

// BenchmarkSiteWrite is a lesson write into a site of n lessons whose
// compiled index (both parts) is cached, with an error and a domain recall
// of the site after it, as the fleet load mixes them.
func BenchmarkSiteWrite(b *testing.B) {
	for _, n := range []int{20, 2000} {
		b.Run(fmt.Sprintf("site=%d", n), func(b *testing.B) {
			ctx := context.Background()
			s := New(badgertest.OpenMemory(b), Options{Provenance: engine.Provenance{Source: engine.SourceManual}})
			for i := range n {
				if _, _, err := s.Record(ctx, Lesson{Lesson: fmt.Sprintf("scroll it into view (%d)", i), Category: ErrorRecovery, FailedCommand: "click",
					ErrorPattern: fmt.Sprintf("not visible %d", i), Domain: "site1.example"}, ""); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, _, err := s.Record(ctx, Lesson{Lesson: fmt.Sprintf("wait for it (%d)", i), Category: ErrorRecovery, FailedCommand: "click",
					ErrorPattern: fmt.Sprintf("spinner %d still there", i), Domain: "site1.example"}, ""); err != nil {
					b.Fatal(err)
				}
				if _, err := s.RecallError(ctx, "click e3", fmt.Sprintf("element not visible %d", i%n), "site1.example"); err != nil {
					b.Fatal(err)
				}
				if _, err := s.RecallDomain(ctx, "site1.example"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
