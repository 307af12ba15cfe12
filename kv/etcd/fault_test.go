package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/etcd"
	"github.com/engine-dev/engine/kv/etcd/etcdtest"
)

// A 3-member cluster loses its leader while 4 recorders (each its own
// client, as separate processes would be) count uses: every acknowledged
// write is there afterwards, and the count is exact — every commit wrote
// its increment and its own record together. A write whose answer was
// lost in the election may have landed or not (it is not acknowledged);
// the recorders carry on after it.
func TestLeaderKilled(t *testing.T) {
	c := etcdtest.StartCluster(t, 3)
	const workers, each = 4, 60
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var acked [workers][]bool
	var failed atomic.Int64
	var done atomic.Int64
	killAt := make(chan struct{})
	var killOnce sync.Once
	var wg sync.WaitGroup
	for w := range workers {
		s, err := etcd.Open(ctx, etcd.Options{Endpoints: c.Endpoints, RequestTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		acked[w] = make([]bool, each)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				err := s.Update(ctx, func(tx kv.Txn) error {
					n := 0
					if v, err := tx.Get([]byte("uses")); err == nil {
						n, _ = strconv.Atoi(string(v))
					} else if !errors.Is(err, kv.ErrNotFound) {
						return err
					}
					if err := tx.Set([]byte("uses"), []byte(strconv.Itoa(n+1)), 0); err != nil {
						return err
					}
					return tx.Set(fmt.Appendf(nil, "use/%d/%03d", w, i), []byte("x"), 0)
				})
				if err != nil {
					failed.Add(1)
					t.Logf("recorder %d, write %d: %v", w, i, err)
				} else {
					acked[w][i] = true
				}
				if done.Add(1) == workers*each/3 {
					killOnce.Do(func() { close(killAt) })
				}
			}
		}()
	}
	<-killAt
	killed, err := c.StopLeader()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped the leader, member %d, after %d writes", killed, workers*each/3)
	wg.Wait()

	var live []string
	for i, ep := range c.Endpoints {
		if i != killed {
			live = append(live, ep)
		}
	}
	s, err := etcd.Open(ctx, etcd.Options{Endpoints: live})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dump := map[string]string{}
	err = s.View(ctx, func(r kv.Reader) error {
		return r.Scan(nil, kv.ScanOptions{}, func(k, v []byte) error {
			dump[string(k)] = string(v)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for w := range workers {
		for i, ok := range acked[w] {
			if ok {
				n++
				if _, there := dump[fmt.Sprintf("use/%d/%03d", w, i)]; !there {
					t.Errorf("acknowledged write %d of recorder %d is lost", i, w)
				}
			}
		}
	}
	records := len(dump) - 1
	if got := dump["uses"]; got != strconv.Itoa(records) {
		t.Errorf("uses = %s, but %d records landed", got, records)
	}
	if records < n || records > n+int(failed.Load()) {
		t.Errorf("%d records landed for %d acknowledged and %d failed writes", records, n, failed.Load())
	}
	t.Logf("%d acknowledged, %d failed, %d landed", n, failed.Load(), records)
}
