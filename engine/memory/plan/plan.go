// Package plan keeps planner iteration histories: for each run, every
// iteration's planner output (task, execution history, current state,
// challenges, reasoning, TODO list, proposed actions, completion) and the
// tool executions that followed, so the planner's next call sees what it
// thought would work and what actually happened.
//
// Render turns a history into the "=== ITERATION N ===" text of the
// iteration-memory design, kept within a token budget by summarising old
// iterations; Metrics computes the execution metrics and the HIGH ERROR
// RATE warning of the planner's user prompt.
package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// EventIteration is the memory event emitted when an iteration is added.
const EventIteration = "plan_iteration_recorded"

// Output is one planner call's structured output, as the design's
// PlannerOutput, in snake_case.
type Output struct {
	UserTask             string   `json:"user_task"`
	ExecutionHistory     string   `json:"execution_history"`
	CurrentState         string   `json:"current_state"`
	ChallengesIdentified string   `json:"challenges_identified"`
	StepByStepReasoning  string   `json:"step_by_step_reasoning"`
	TodoMarkdown         string   `json:"todo_markdown,omitempty"`
	ProposedActions      []string `json:"proposed_actions"`
	TaskComplete         bool     `json:"task_complete"`
	FinalAnswer          string   `json:"final_answer,omitempty"`
}

// ToolExecution is one tool call the executor made and its result: an
// output when it worked, an error when it did not.
type ToolExecution struct {
	Tool string `json:"tool"`
	OK   bool   `json:"ok"`
	// Output is the tool's result, any JSON value (a string, an object).
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// Iteration is one plan → execute cycle.
type Iteration struct {
	N       int             `json:"iteration"` // 1-based
	Planner Output          `json:"planner"`
	Tools   []ToolExecution `json:"tools"`
	// Observations counts the browser-state observations the iteration
	// took (the planner's view of the page is one).
	Observations int       `json:"observations"`
	StartedAt    time.Time `json:"started_at"`
	EndedAt      time.Time `json:"ended_at"`
}

// History is one run's iterations, in order.
type History struct {
	RunID      string      `json:"run_id"`
	Iterations []Iteration `json:"iterations"`
}

// ErrNotFound is returned for a run with no planner history.
var ErrNotFound = engine.NotFound("no planner history for run")

// Options configure a Store.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Events receives memory events; nil drops them.
	Events event.Func
}

// Store keeps planner histories over a kv.Store. It is safe for concurrent
// use.
type Store struct {
	db   kv.Store
	opts Options
}

// New returns the planner histories kept in db.
func New(db kv.Store, opts Options) *Store {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Store{db: db, opts: opts}
}

// normalize fills defaults and checks one iteration.
func (s *Store) normalize(it *Iteration) error {
	for i := range it.Tools {
		t := &it.Tools[i]
		t.Tool = strings.TrimSpace(t.Tool)
		if t.Tool == "" {
			return engine.Invalid("iteration", fmt.Sprintf("tools[%d]: the tool name is empty", i))
		}
		if len(bytes.TrimSpace(t.Output)) == 0 {
			t.Output = nil
		} else if !json.Valid(t.Output) {
			return engine.Invalid("iteration", fmt.Sprintf("tools[%d] (%s): output is not JSON", i, t.Tool))
		} else {
			var buf bytes.Buffer
			if err := json.Compact(&buf, t.Output); err != nil {
				return engine.Invalid("iteration", fmt.Sprintf("tools[%d] (%s): output: %v", i, t.Tool, err))
			}
			t.Output = buf.Bytes()
		}
		if !t.OK && strings.TrimSpace(t.Error) == "" {
			return engine.Invalid("iteration", fmt.Sprintf("tools[%d] (%s): a failed tool execution needs its error", i, t.Tool))
		}
		if t.OK && t.Error != "" {
			return engine.Invalid("iteration", fmt.Sprintf("tools[%d] (%s): ok but has an error %q", i, t.Tool, t.Error))
		}
	}
	if it.Tools == nil {
		it.Tools = []ToolExecution{}
	}
	if it.Planner.ProposedActions == nil {
		it.Planner.ProposedActions = []string{}
	}
	if it.Observations < 0 {
		return engine.Invalid("iteration", fmt.Sprintf("observations %d is negative", it.Observations))
	}
	if it.EndedAt.IsZero() {
		it.EndedAt = s.opts.Now()
	}
	if it.StartedAt.IsZero() {
		it.StartedAt = it.EndedAt
	}
	it.StartedAt, it.EndedAt = it.StartedAt.UTC(), it.EndedAt.UTC()
	if it.EndedAt.Before(it.StartedAt) {
		return engine.Invalid("iteration", "ended_at is before started_at")
	}
	return nil
}

func checkRun(runID string) error {
	if strings.TrimSpace(runID) == "" {
		return engine.Invalid("iteration", "the run id is empty")
	}
	return nil
}

// Add appends an iteration to run's history and returns it numbered. An
// iteration that gives its number must be the next one.
func (s *Store) Add(ctx context.Context, runID string, it Iteration) (Iteration, error) {
	if err := checkRun(runID); err != nil {
		return Iteration{}, err
	}
	if err := s.normalize(&it); err != nil {
		return Iteration{}, err
	}
	want := it.N
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		// The last key's number (the key is written with the iteration's
		// own), not its value: the next number costs the same however
		// long the iterations are.
		next := 1
		err := tx.Scan(keyspace.Plan(runID), kv.ScanOptions{Reverse: true, KeysOnly: true, Limit: 1}, func(k, _ []byte) error {
			n, err := strconv.ParseUint(string(k[bytes.LastIndexByte(k, '/')+1:]), 16, 31)
			if err != nil {
				return fmt.Errorf("key %s does not end in an iteration number", kv.Short(k))
			}
			next = int(n) + 1
			return nil
		})
		if err != nil {
			return err
		}
		if want != 0 && want != next {
			return engine.Invalid("iteration", fmt.Sprintf("iteration %d given, but the next iteration of run %s is %d", want, runID, next))
		}
		it.N = next
		b, err := json.Marshal(it)
		if err != nil {
			return err
		}
		// Reading the next key makes two concurrent adds conflict (one
		// retries) instead of both writing the same number.
		if _, err := tx.Get(keyspace.PlanIteration(runID, next)); err != nil && !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		return tx.Set(keyspace.PlanIteration(runID, next), b, 0)
	})
	if err != nil {
		return Iteration{}, fmt.Errorf("plan: add iteration to %s: %w", runID, err)
	}
	s.opts.Events.Emit(EventIteration, map[string]any{
		"run_id": runID, "iteration": it.N, "tool_calls": len(it.Tools), "errors": errorsIn(it.Tools), "task_complete": it.Planner.TaskComplete,
	})
	return it, nil
}

func errorsIn(ts []ToolExecution) int {
	n := 0
	for _, t := range ts {
		if !t.OK {
			n++
		}
	}
	return n
}

// Get returns run's iterations in order, or ErrNotFound.
func (s *Store) Get(ctx context.Context, runID string) ([]Iteration, error) {
	var out []Iteration
	err := s.db.View(ctx, func(r kv.Reader) error {
		out = out[:0]
		return r.Scan(keyspace.Plan(runID), kv.ScanOptions{}, func(k, v []byte) error {
			var it Iteration
			if err := json.Unmarshal(v, &it); err != nil {
				return fmt.Errorf("decode %s: %w", k, err)
			}
			out = append(out, it)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("plan: get %s: %w", runID, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("plan: %w %s", ErrNotFound, runID)
	}
	return out, nil
}

// All returns every run's history (for export), by run id.
func (s *Store) All(ctx context.Context) ([]History, error) {
	var out []History
	err := s.db.View(ctx, func(r kv.Reader) error {
		out = out[:0]
		return r.Scan(keyspace.PlansPrefix(), kv.ScanOptions{}, func(k, v []byte) error {
			var it Iteration
			if err := json.Unmarshal(v, &it); err != nil {
				return fmt.Errorf("decode %s: %w", k, err)
			}
			run := runOf(k)
			if len(out) == 0 || out[len(out)-1].RunID != run {
				out = append(out, History{RunID: run})
			}
			h := &out[len(out)-1]
			h.Iterations = append(h.Iterations, it)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("plan: list: %w", err)
	}
	return out, nil
}

// runOf returns the run id of a plan key: plan/<run>/<n>.
func runOf(k []byte) string {
	rest := strings.TrimPrefix(string(k), string(keyspace.PlansPrefix()))
	run := rest[:strings.LastIndexByte(rest, '/')]
	return keyspace.LastPart([]byte("/" + run))
}

// Prepare validates histories for Import: each iteration valid, numbered
// 1, 2, 3... in order. Problems are reported by position.
func (s *Store) Prepare(hs []History) ([]History, error) {
	seen := map[string]bool{}
	out := make([]History, 0, len(hs))
	for i, h := range hs {
		if err := checkRun(h.RunID); err != nil {
			return nil, fmt.Errorf("plans[%d]: %w", i, err)
		}
		if seen[h.RunID] {
			return nil, fmt.Errorf("plans[%d]: %w", i, engine.Invalid("iteration", fmt.Sprintf("run %s appears twice", h.RunID)))
		}
		seen[h.RunID] = true
		if len(h.Iterations) == 0 {
			return nil, fmt.Errorf("plans[%d] (%s): %w", i, h.RunID, engine.Invalid("iteration", "no iterations"))
		}
		its := make([]Iteration, len(h.Iterations))
		for j, it := range h.Iterations {
			it.Tools = append([]ToolExecution(nil), it.Tools...)
			if err := s.normalize(&it); err != nil {
				return nil, fmt.Errorf("plans[%d] (%s) iterations[%d]: %w", i, h.RunID, j, err)
			}
			if it.N == 0 {
				it.N = j + 1
			}
			if it.N != j+1 {
				return nil, fmt.Errorf("plans[%d] (%s) iterations[%d]: %w", i, h.RunID, j, engine.Invalid("iteration", fmt.Sprintf("numbered %d, want %d", it.N, j+1)))
			}
			its[j] = it
		}
		out = append(out, History{RunID: h.RunID, Iterations: its})
	}
	return out, nil
}

// Import writes histories prepared by Prepare, each replacing the run's
// stored history.
func (s *Store) Import(ctx context.Context, hs []History) error {
	for _, h := range hs {
		err := s.db.Update(ctx, func(tx kv.Txn) error {
			if err := deleteRun(tx, h.RunID); err != nil {
				return err
			}
			for _, it := range h.Iterations {
				b, err := json.Marshal(it)
				if err != nil {
					return err
				}
				if err := tx.Set(keyspace.PlanIteration(h.RunID, it.N), b, 0); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("plan: import %s: %w", h.RunID, err)
		}
	}
	return nil
}

func deleteRun(tx kv.Txn, runID string) error {
	var keys [][]byte
	err := tx.Scan(keyspace.Plan(runID), kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
		keys = append(keys, append([]byte(nil), k...))
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes the histories of the given runs (forgetting their site).
func (s *Store) Delete(ctx context.Context, runIDs ...string) error {
	for _, id := range runIDs {
		if err := s.db.Update(ctx, func(tx kv.Txn) error { return deleteRun(tx, id) }); err != nil {
			return fmt.Errorf("plan: delete %s: %w", id, err)
		}
	}
	return nil
}
