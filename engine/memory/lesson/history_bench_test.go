package lesson

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkUse counts uses of existing lessons: every one keeps a version
// (and, past HistoryKeep, drops the oldest).
func BenchmarkUse(b *testing.B) {
	s := benchStore(b, 1000, false)
	ctx := context.Background()
	var ids []string
	for i := range 100 {
		l, _, err := s.Record(ctx, Lesson{Lesson: "x", Category: ErrorRecovery, FailedCommand: "click", ErrorPattern: fmt.Sprintf("use problem %d", i)}, "")
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Use(ctx, ids[i%len(ids)], "www.google.com"); err != nil {
			b.Fatal(err)
		}
	}
}
