//go:build linux

// Command load puts a running `engine serve` under a fleet's mixed load and
// checks that it loses nothing: it imports a store of generated lessons
// into a fresh data dir, starts the server there, runs concurrent clients
// over the server's unix socket (by default half new lessons, 30 % error
// recalls, 20 % domain recalls), kills the server with SIGKILL part-way
// and starts it again, and at the end reads back every lesson a client was
// told was stored. It prints requests per second, latency percentiles and
// the server's RSS before and after, for each store size asked for, and
// the ratio of the largest to the smallest.
//
//	go run ./scripts/load -lessons 1000,100000 -clients 20 -requests 20000 -kills 1
//
// It exits 1 when an acknowledged write is missing or a request got a 5xx
// answer (a transport error while the server is down is expected: such a
// request was never acknowledged). It binds nothing but a unix socket in
// its own temporary dir.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	var (
		bin      = flag.String("engine", "bin/engine", "the engine binary")
		sizes    = flag.String("lessons", "1000", "store sizes to measure, comma-separated (lessons imported before the load)")
		clients  = flag.Int("clients", 20, "concurrent clients")
		requests = flag.Int("requests", 20000, "requests per store size")
		kills    = flag.Int("kills", 1, "times the server is killed (SIGKILL) and started again during the load")
		writes   = flag.Int("writes", 50, "percent of requests that record a new lesson")
		errs     = flag.Int("recalls", 30, "percent of requests that recall tips for an error (the rest recall a domain)")
		keep     = flag.Bool("keep", false, "keep the data dirs")
	)
	flag.Parse()
	if *writes < 0 || *errs < 0 || *writes+*errs > 100 || *clients < 1 || *requests < *clients || *kills < 0 {
		fmt.Fprintln(os.Stderr, "load: want 0 ≤ -writes, -recalls with a sum ≤ 100, -clients ≥ 1, -requests ≥ -clients, -kills ≥ 0")
		os.Exit(2)
	}
	enginePath, err := filepath.Abs(*bin)
	if err == nil {
		_, err = os.Stat(enginePath)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "load: engine binary: %v (make build)\n", err)
		os.Exit(2)
	}
	var results []result
	failed := false
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "load: -lessons: %q is not a count\n", s)
			os.Exit(2)
		}
		cfg := config{engine: enginePath, lessons: n, clients: *clients, requests: *requests, kills: *kills,
			writes: *writes, recalls: *errs, keep: *keep}
		r, err := run(cfg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "load: %d lessons: %v\n", n, err)
			failed = true
			continue
		}
		r.print()
		if r.lost > 0 || r.server5xx > 0 {
			failed = true
		}
		results = append(results, r)
	}
	if len(results) > 1 {
		a, b := results[0], results[len(results)-1]
		fmt.Printf("\n%d lessons against %d: throughput %.2f×, p50 %.2f×, p99 %.2f×\n", b.lessons, a.lessons,
			a.rps/b.rps, float64(b.p50)/float64(a.p50), float64(b.p99)/float64(a.p99))
	}
	if failed {
		os.Exit(1)
	}
}

type config struct {
	engine           string
	lessons, clients int
	requests, kills  int
	writes, recalls  int
	keep             bool
	dir, sock        string
}

type result struct {
	lessons          int
	requests, ok     int
	transport        int // failed while the server was down: never acknowledged
	server5xx        int
	other4xx         int
	acked, lost      int
	wall             time.Duration
	rps              float64
	p50, p99, max    time.Duration
	byOp             [3]opLatency // writes, error recalls, domain recalls
	builds           int          // recall index builds since the last start (the server's /metrics)
	rssBefore        int64        // KiB
	rssAfter         int64
	importTime       time.Duration
	restarts         int
	firstErr         string
	readBackDuration time.Duration
}

func (r result) print() {
	fmt.Printf("lessons %d (import %s): %d requests, %d ok, %d transport errors across %d kills, %d 5xx, %d 4xx\n",
		r.lessons, r.importTime.Round(time.Millisecond), r.requests, r.ok, r.transport, r.restarts, r.server5xx, r.other4xx)
	fmt.Printf("  %.0f req/s; p50 %s, p99 %s, max %s; server RSS %d → %d MiB\n", r.rps,
		r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), r.max.Round(10*time.Microsecond), r.rssBefore/1024, r.rssAfter/1024)
	fmt.Printf("  recall index builds since the last start %d\n", r.builds)
	fmt.Printf("  acknowledged writes %d, missing after the kills %d (read back in %s)\n", r.acked, r.lost, r.readBackDuration.Round(time.Millisecond))
	for i, name := range opNames {
		if o := r.byOp[i]; o.n > 0 {
			fmt.Printf("  %-14s %6d: p50 %s, p99 %s, max %s\n", name, o.n, o.p50.Round(10*time.Microsecond), o.p99.Round(10*time.Microsecond), o.max.Round(10*time.Microsecond))
		}
	}
	if r.firstErr != "" {
		fmt.Printf("  first unexpected answer: %s\n", r.firstErr)
	}
}

// opLatency is the latency of one kind of request.
type opLatency struct {
	n             int
	p50, p99, max time.Duration
}

var opNames = [3]string{"write", "error recall", "domain recall"}

func latencyOf(lat []time.Duration) opLatency {
	slices.Sort(lat)
	if len(lat) == 0 {
		return opLatency{}
	}
	return opLatency{n: len(lat), p50: lat[len(lat)/2], p99: lat[len(lat)*99/100], max: lat[len(lat)-1]}
}

// indexBuilds is how many times the server compiled a site's recall
// index since it started (a cold start's, and any a write did not spare),
// from its /metrics; -1 when it does not say.
func indexBuilds(c *http.Client) int {
	resp, err := c.Get("http://engine/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), `engine_recall_index_rebuild_seconds_count{kind="build"} `); ok {
			n, err := strconv.Atoi(v)
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// server is the engine serve process of a load, started again after
// each kill; ready is closed while a server answers.
type server struct {
	cfg    *config
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan error // cmd's exit
	ready  chan struct{}
}

func (s *server) start() error {
	cmd := exec.Command(s.cfg.engine, "--data-dir", s.cfg.dir, "serve")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlives the tool
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Ready when the health route answers over the socket.
	c := socketClient(s.cfg.sock)
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("engine serve exited at start: %v", err)
		default:
		}
		if resp, err := c.Get("http://engine/v1/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			return errors.New("engine serve did not answer within 60 s")
		}
		time.Sleep(10 * time.Millisecond) // polling the socket: the server sends no event
	}
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	close(s.ready)
	s.mu.Unlock()
	return nil
}

// kill kills the server with SIGKILL, as a crash would, and starts it again.
func (s *server) kill() error {
	s.mu.Lock()
	cmd := s.cmd
	s.ready = make(chan struct{})
	s.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGKILL)
	for { // the process is gone when its pid no longer answers signal 0
		if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return s.start()
}

func (s *server) waitReady() {
	s.mu.Lock()
	ch := s.ready
	s.mu.Unlock()
	<-ch
}

// stop stops the server with SIGTERM and waits for it to exit (SIGKILL
// after 30 s), so that its data dir is removed only once it has closed it:
// a server whose data dir goes while it shuts down never finishes.
func (s *server) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

func (s *server) rss() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

func socketClient(sock string) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConnsPerHost: 64,
	}}
}

const sites = 50

func site(i int) string { return fmt.Sprintf("site%d.example", i%sites) }

// writeExport writes an export of n generated lessons: half bound to one
// of 50 sites, half global, as an imported two-tier memory is.
func writeExport(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprint(w, `{"format":"engine-export","version":1,"exported_at":"2026-03-01T00:00:00Z","lessons":[`)
	for i := range n {
		if i > 0 {
			w.WriteByte(',')
		}
		dom := ""
		if i%2 == 0 {
			dom = site(i)
		}
		fmt.Fprintf(w, `{"lesson":"scroll the element into view and wait for the overlay to close before clicking it again (%d)","category":"error_recovery","failed_command":"click","error_pattern":"not visible %d","domain":%q,"created_at":"2026-03-01","last_used":"2026-03-01","source":"learned"}`, i, i, dom)
	}
	fmt.Fprint(w, "]}\n")
	return errors.Join(w.Flush(), f.Close())
}

func run(cfg config) (result, error) {
	res := result{lessons: cfg.lessons}
	dir, err := os.MkdirTemp("", "engine-load-")
	if err != nil {
		return res, err
	}
	if !cfg.keep {
		defer os.RemoveAll(dir)
	} else {
		fmt.Printf("data dir %s\n", dir)
	}
	cfg.dir = filepath.Join(dir, "data")
	cfg.sock = filepath.Join(cfg.dir, "engine.sock")
	if cfg.lessons > 0 {
		exp := filepath.Join(dir, "export.json")
		if err := writeExport(exp, cfg.lessons); err != nil {
			return res, err
		}
		start := time.Now()
		out, err := exec.Command(cfg.engine, "--data-dir", cfg.dir, "import", exp).CombinedOutput()
		if err != nil {
			return res, fmt.Errorf("import: %v: %s", err, out)
		}
		res.importTime = time.Since(start)
	}
	srv := &server{cfg: &cfg, ready: make(chan struct{})}
	if err := srv.start(); err != nil {
		return res, err
	}
	defer srv.stop()
	res.rssBefore = srv.rss()

	var (
		next      atomic.Int64 // requests handed out
		mu        sync.Mutex
		lat       []time.Duration
		latOp     [3][]time.Duration
		acked     []string
		killEvery = int64(cfg.requests / (cfg.kills + 1))
		killErr   error
		wg        sync.WaitGroup
	)
	count := func(f func()) { mu.Lock(); f(); mu.Unlock() }
	client := socketClient(cfg.sock)
	start := time.Now()
	for c := range cfg.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			for {
				i := next.Add(1)
				if i > int64(cfg.requests) {
					return
				}
				if cfg.kills > 0 && i%killEvery == 0 && i/killEvery <= int64(cfg.kills) {
					// This client kills the server; the others meet
					// transport errors meanwhile, as a fleet would.
					if err := srv.kill(); err != nil {
						count(func() { killErr = err })
						return
					}
					count(func() { res.restarts++ })
				}
				srv.waitReady()
				op := rng.IntN(100)
				var req *http.Request
				write := op < cfg.writes
				kind := 2
				switch {
				case write:
					body, _ := json.Marshal(map[string]string{"lesson": fmt.Sprintf("load %d-%d: wait for the spinner to go before clicking", c, i),
						"category": "error_recovery", "failed_command": "click", "error_pattern": fmt.Sprintf("spinner %d-%d still there", c, i), "domain": site(rng.IntN(sites))})
					req, _ = http.NewRequest("POST", "http://engine/v1/lessons", bytes.NewReader(body))
					kind = 0
				case op < cfg.writes+cfg.recalls:
					body, _ := json.Marshal(map[string]string{"command": "click", "error": fmt.Sprintf("element not visible %d", rng.IntN(max(cfg.lessons, 1))), "domain": site(rng.IntN(sites))})
					req, _ = http.NewRequest("POST", "http://engine/v1/recall/error", bytes.NewReader(body))
					kind = 1
				default:
					req, _ = http.NewRequest("GET", "http://engine/v1/recall/domain?host="+site(rng.IntN(sites)), nil)
				}
				if req.Body != nil {
					req.Header.Set("Content-Type", "application/json")
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				d := time.Since(t0)
				if err != nil {
					count(func() { res.transport++ })
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode >= 500:
					count(func() {
						res.server5xx++
						if res.firstErr == "" {
							res.firstErr = fmt.Sprintf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, b)
						}
					})
					continue
				case resp.StatusCode >= 400:
					count(func() {
						res.other4xx++
						if res.firstErr == "" {
							res.firstErr = fmt.Sprintf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, b)
						}
					})
					continue
				}
				var id string
				if write {
					var out struct {
						Lesson struct {
							ID string `json:"id"`
						} `json:"lesson"`
					}
					if json.Unmarshal(b, &out) == nil {
						id = out.Lesson.ID
					}
				}
				count(func() {
					res.ok++
					lat = append(lat, d)
					latOp[kind] = append(latOp[kind], d)
					if id != "" {
						acked = append(acked, id)
					}
				})
			}
		}()
	}
	wg.Wait()
	res.wall = time.Since(start)
	if killErr != nil {
		return res, killErr
	}
	res.requests = cfg.requests
	res.rssAfter = srv.rss()
	res.builds = indexBuilds(client)
	res.rps = float64(res.ok) / res.wall.Seconds()
	all := latencyOf(lat)
	res.p50, res.p99, res.max = all.p50, all.p99, all.max
	for i := range latOp {
		res.byOp[i] = latencyOf(latOp[i])
	}
	// Every acknowledged write is there, read back through the server
	// started after the last kill.
	res.acked = len(acked)
	t0 := time.Now()
	for _, id := range acked {
		resp, err := client.Get("http://engine/v1/lessons/" + id)
		if err != nil {
			return res, fmt.Errorf("reading back %s: %v", id, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			res.lost++
		}
	}
	res.readBackDuration = time.Since(t0)
	return res, nil
}
