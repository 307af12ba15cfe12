package api_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/server/service"
)

// recallLessons files n lessons on one site under the command the recall
// benchmarks fail with: the store they share has 200 (the store a few
// runs leave, 5).
func recallLessons(b *testing.B, m *memory.Memory, n int) {
	ctx := context.Background()
	for i := range n {
		if _, _, err := m.Lessons.Record(ctx, lesson.Lesson{Lesson: "scroll first", Category: "site_specific", FailedCommand: "click",
			ErrorPattern: "not visible " + string(rune('a'+i%26)) + string(rune('a'+i/26)), Domain: "shop.example"}, ""); err != nil {
			b.Fatal(err)
		}
	}
}

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
	recallLessons(b, m, 200)
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
// "socket" is one client calling again and again, as an agent run does
// (the client connects per request: see engine/server/service's Dial); "dial"
// also finds the server for every call (service.Dial, the request, close),
// as one CLI command does.
func BenchmarkRecallSocket(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	recallLessons(b, serveDir(b, dir, memory.Options{}).m, 200)
	b.Run("socket", func(b *testing.B) {
		c := dialAPI(b, dir)
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
	m := serveDir(b, dir, memory.Options{}).m
	recallLessons(b, m, 5)
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.Lessons.RecallError(ctx, "click e12", "element not visible aa", "shop.example"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("socket", func(b *testing.B) {
		c := dialAPI(b, dir)
		for b.Loop() {
			if _, err := c.RecallError(ctx, "click e12", "element not visible aa", "shop.example"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMixedLoad is a server under load: clients at once (two per
// core) sending TestServedLoad's mix of requests through the HTTP handler
// (api.Local, so no socket) to a memory on badger on disk — per ten
// requests: recall on an error twice, recall on a domain, a new lesson, a
// dedup of a shared pattern, three uses of a shared lesson (one helped), a
// page of a site's lessons, a pattern every client records. One op is one
// request; the store starts with the seeds, the shared lessons and 200
// lessons on one site, and grows by a lesson every ten requests.
func BenchmarkMixedLoad(b *testing.B) {
	ctx := context.Background()
	m, err := memory.Open(ctx, b.TempDir(), memory.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	recallLessons(b, m, 200)
	c := api.Local(api.Handler(m, api.Options{}), api.ClientOptions{})
	defer c.Close()
	var shared [loadShared]string
	for k := range loadShared {
		r, err := c.RecordLesson(ctx, sharedLesson(k))
		if err != nil {
			b.Fatal(err)
		}
		shared[k] = r.Lesson.ID
	}
	var clients atomic.Int64
	b.SetParallelism(2)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(clients.Add(1))
		for j := 0; pb.Next(); j++ {
			if err := mixedRequest(ctx, c.Client, i, j, shared); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// mixedRequest sends client i's request j of BenchmarkMixedLoad's mix.
func mixedRequest(ctx context.Context, c *api.Client, i, j int, shared [loadShared]string) error {
	k := (i + j) % loadShared
	host := loadHosts[(i+j/10)%len(loadHosts)]
	var err error
	switch j % 10 {
	case 0, 8:
		_, err = c.RecallError(ctx, "click e12", fmt.Sprintf("element intercepts pointer events %d", k), host)
	case 1:
		_, err = c.RecallDomain(ctx, host)
	case 2:
		_, err = c.RecordLesson(ctx, lesson.Lesson{Lesson: fmt.Sprintf("client %d learned %d", i, j), Category: lesson.SiteSpecific,
			FailedCommand: "fill", ErrorPattern: fmt.Sprintf("client %d error %d", i, j), Domain: host})
	case 3:
		_, err = c.RecordLesson(ctx, sharedLesson(k))
	case 4, 5, 9:
		_, err = c.UseLesson(ctx, shared[k], api.UseRequest{Domain: host, Helped: j%10 == 5})
	case 6:
		_, err = c.Lessons(ctx, api.LessonFilter{Domain: host, Limit: 10})
	case 7:
		_, err = c.RecordLesson(ctx, raceLesson(k%loadRace))
	}
	if err != nil {
		return fmt.Errorf("client %d, request %d: %w", i, j, err)
	}
	return nil
}
