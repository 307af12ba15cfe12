package keyspace

import "fmt"

// Plans: planner iteration histories, per run (runs are global).
//
//	plan/<run>/<n>  → one iteration (JSON): planner output and tool
//	                  executions; <n> is 8 hex digits of the 1-based
//	                  iteration number, so a prefix scan reads them in order
//
// Forgetting a site drops the plans of the site's runs with the runs.

// PlanIteration is the key of iteration n of run's planner history.
func PlanIteration(run string, n int) []byte {
	return []byte(fmt.Sprintf("plan/%s/%08x", esc(run), n))
}

// Plan is the range of one run's planner history.
func Plan(run string) []byte { return []byte("plan/" + esc(run) + "/") }

// PlansPrefix is the range of every run's planner history.
func PlansPrefix() []byte { return []byte("plan/") }
