package api_test

import (
	"context"
	"testing"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/lesson"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/service"
)

// recallMemory is the store the recall benchmarks share: a memory on disk
// in dir with 200 lessons on one site.
func recallMemory(b *testing.B, dir string) *memory.Memory {
	ctx := context.Background()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		if _, _, err := m.Lessons.Record(ctx, lesson.Lesson{Lesson: "scroll first", Category: "site_specific", FailedCommand: "click",
			ErrorPattern: "not visible " + string(rune('a'+i%26)) + string(rune('a'+i/26)), Domain: "shop.example"}, ""); err != nil {
			b.Fatal(err)
		}
	}
	return m
}

// BenchmarkRecallError compares Trigger A called on the stores with the
// same call through the API served in this process (api.Local): the cost
// of going through HTTP when a command holds the memory itself.
func BenchmarkRecallError(b *testing.B) {
	ctx := context.Background()
	m := recallMemory(b, b.TempDir())
	defer m.Close()
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

// BenchmarkRecallSocket is Trigger A (POST /v1/recall/error) through a
// memory server on the data dir's real unix socket, the whole round trip,
// on BenchmarkRecallError's store (compare with its direct and local):
// "socket" reuses one keep-alive connection, as a long-lived client (an
// agent run) does; "dial" connects for every call (service.Dial, the
// request, close), as one CLI command does.
func BenchmarkRecallSocket(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	m := recallMemory(b, dir)
	defer m.Close()
	srv, err := service.Open(ctx, dir, api.Handler(m, api.Options{}), service.Options{})
	if err != nil {
		b.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()
	b.Run("socket", func(b *testing.B) {
		sc, err := service.Dial(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		defer sc.CloseIdleConnections()
		c := api.NewClient(sc.HTTP, sc.BaseURL, api.ClientOptions{})
		for b.Loop() {
			if _, err := c.RecallError(ctx, "click e12", "element not visible ab", "shop.example"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dial", func(b *testing.B) {
		for b.Loop() {
			sc, err := service.Dial(ctx, dir)
			if err != nil {
				b.Fatal(err)
			}
			c := api.NewClient(sc.HTTP, sc.BaseURL, api.ClientOptions{})
			if _, err := c.RecallError(ctx, "click e12", "element not visible ab", "shop.example"); err != nil {
				b.Fatal(err)
			}
			sc.CloseIdleConnections()
		}
	})
}

// BenchmarkRecallSocketSmall is the socket round trip on a store as a few
// runs leave it (the seeds and one site's handful of lessons), where the
// recall itself is cheap: what the socket and HTTP cost on their own.
func BenchmarkRecallSocketSmall(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	for i := range 5 {
		if _, _, err := m.Lessons.Record(ctx, lesson.Lesson{Lesson: "scroll first", Category: "site_specific", FailedCommand: "click",
			ErrorPattern: "not visible " + string(rune('a'+i)), Domain: "shop.example"}, ""); err != nil {
			b.Fatal(err)
		}
	}
	srv, err := service.Open(ctx, dir, api.Handler(m, api.Options{}), service.Options{})
	if err != nil {
		b.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()
	recall := func(b *testing.B, c *api.Client) {
		for b.Loop() {
			if _, err := c.RecallError(ctx, "click e12", "element not visible a", "shop.example"); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.Lessons.RecallError(ctx, "click e12", "element not visible a", "shop.example"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("socket", func(b *testing.B) {
		sc, err := service.Dial(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		recall(b, api.NewClient(sc.HTTP, sc.BaseURL, api.ClientOptions{}))
	})
}
