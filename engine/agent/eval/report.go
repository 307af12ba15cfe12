package eval

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Metrics are the numbers each run reports, in report order: success is 1
// for a run that succeeded and 0 otherwise, so its mean is the success rate.
var Metrics = []string{"success", "steps", "errors", "llm_calls", "tokens", "wall_ms"}

func (r Record) metric(name string) float64 {
	switch name {
	case "success":
		if r.Success {
			return 1
		}
		return 0
	case "steps":
		return float64(r.Steps)
	case "errors":
		return float64(r.Errors)
	case "llm_calls":
		return float64(r.LLMCalls)
	case "tokens":
		return float64(r.Tokens)
	case "wall_ms":
		return float64(r.WallMS)
	}
	panic("eval: no metric " + name)
}

// ScriptedNote heads a report whose model is scripted.
const ScriptedNote = "scripted model: these numbers show the mechanism (what memory changes when a model reacts to what it is shown), not a model's behaviour"

// Report is report.json.
type Report struct {
	Note          string       `json:"note,omitempty"`
	LLM           string       `json:"llm"`
	Browser       string       `json:"browser"`
	EngineVersion string       `json:"engine_version"`
	Cases         []Case       `json:"cases"`
	Repeats       int          `json:"repeats"`
	WarmRuns      int          `json:"warm_runs"`
	ChangeAfter   int          `json:"change_after,omitempty"`
	Arms          []ArmReport  `json:"arms"`
	Comparisons   []Comparison `json:"comparisons"`
	Statistics    string       `json:"statistics"`
}

// ArmReport is one arm's runs and their summary.
type ArmReport struct {
	Name    Arm             `json:"name"`
	Variant string          `json:"variant"`
	Runs    []RunReport     `json:"runs"`
	Summary map[string]Stat `json:"summary"`
}

// RunReport is one run in the report.
type RunReport struct {
	Case     string `json:"case"`
	Repeat   int    `json:"repeat"`
	Index    int    `json:"index"`
	Variant  string `json:"variant"` // original or changed
	Status   string `json:"status"`
	Success  bool   `json:"success"`
	Steps    int    `json:"steps"`
	Errors   int    `json:"errors"`
	LLMCalls int    `json:"llm_calls"`
	Tokens   int    `json:"tokens"`
	WallMS   int64  `json:"wall_ms"`
	Reason   string `json:"reason,omitempty"`
	RunID    string `json:"run_id,omitempty"`
	DataDir  string `json:"data_dir"` // relative to the output dir
}

// Stat is a metric's mean over cases and its 95 % bootstrap interval.
type Stat struct {
	Mean Num      `json:"mean"`
	CI95 Interval `json:"ci95"`
}

// Comparison is an arm against the no-memory arm, metric by metric, paired
// by case.
type Comparison struct {
	Arm      Arm              `json:"arm"`
	Baseline Arm              `json:"baseline"`
	Cases    int              `json:"cases"`
	Metrics  map[string]Delta `json:"metrics"`
}

// Delta is one metric of a comparison: the means, their difference and
// relative change with 95 % paired-bootstrap intervals, and the paired
// sign-flip test's two-sided p-value.
type Delta struct {
	Mean               Num      `json:"mean"`
	BaselineMean       Num      `json:"baseline_mean"`
	Difference         Num      `json:"difference"`
	DifferenceCI95     Interval `json:"difference_ci95"`
	RelativeChange     Num      `json:"relative_change"` // null when the baseline's mean is 0
	RelativeChangeCI95 Interval `json:"ci95"`
	P                  Num      `json:"p_value"`
	Exact              bool     `json:"p_exact"`
}

// Num is a number in the report, rounded to 4 decimals; NaN (undefined)
// is null.
type Num float64

// MarshalJSON writes n rounded, or null.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(math.Round(f*1e4)/1e4, 'f', -1, 64)), nil
}

// UnmarshalJSON reads a number or null (NaN).
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// Interval is [low, high].
type Interval [2]Num

func interval(x [2]float64) Interval { return Interval{Num(x[0]), Num(x[1])} }

// statsNote says how the report's statistics are made.
var statsNote = fmt.Sprintf("means are over cases (each case's runs averaged first); ci95 are percentile bootstrap intervals over cases (%d resamples, seed %d; paired for comparisons); p_value is the two-sided paired sign-flip permutation test over cases (exact up to %d cases)",
	Resamples, Seed, exactLimit)

// report builds the report of the plan's runs the log holds.
func (c *Config) report(done map[string]Record) *Report {
	rep := &Report{LLM: c.LLM, Browser: c.Browser, EngineVersion: c.EngineVersion, Cases: c.Cases,
		Repeats: c.Repeats, WarmRuns: c.warmRuns(), Arms: []ArmReport{}, Comparisons: []Comparison{}, Statistics: statsNote}
	if c.Scripted {
		rep.Note = ScriptedNote
	}
	rep.ChangeAfter = c.ChangeAfter
	plan := c.plan()
	arms := c.ReportArms()
	perCase := map[Arm]map[string][]Record{}
	for _, a := range arms {
		changed := a != baseArm(a)
		ar := ArmReport{Name: a, Variant: variant(changed), Runs: []RunReport{}, Summary: map[string]Stat{}}
		perCase[a] = map[string][]Record{}
		for rep := 1; rep <= c.Repeats; rep++ {
			for _, cs := range c.Cases {
				for _, st := range plan {
					if st.arm != baseArm(a) || st.changed != changed {
						continue
					}
					r, ok := done[logKey(cs.Name, st.arm, rep, st.index, st.changed).key()]
					if !ok {
						continue
					}
					r.Variant = variant(changed)
					ar.Runs = append(ar.Runs, r.RunReport)
					perCase[a][cs.Name] = append(perCase[a][cs.Name], r)
				}
			}
		}
		for _, m := range Metrics {
			xs := caseMeans(c.Cases, perCase[a], m)
			ar.Summary[m] = Stat{Mean: Num(meanOrNaN(xs)), CI95: interval(BootstrapCI(xs))}
		}
		rep.Arms = append(rep.Arms, ar)
	}
	// Each arm against no-memory on its own variant.
	for _, a := range arms {
		if baseArm(a) == NoMemory {
			continue
		}
		baseline := reportArm(NoMemory, a != baseArm(a))
		base, ok := perCase[baseline]
		if !ok {
			continue
		}
		cmp := Comparison{Arm: a, Baseline: baseline, Metrics: map[string]Delta{}}
		var paired []Case
		for _, cs := range c.Cases {
			if len(perCase[a][cs.Name]) > 0 && len(base[cs.Name]) > 0 {
				paired = append(paired, cs)
			}
		}
		cmp.Cases = len(paired)
		for _, m := range Metrics {
			xa, xb := caseMeans(paired, perCase[a], m), caseMeans(paired, base, m)
			d := Delta{Mean: Num(meanOrNaN(xa)), BaselineMean: Num(meanOrNaN(xb))}
			d.Difference = d.Mean - d.BaselineMean
			diff, rel, relOK := PairedBootstrap(xa, xb)
			d.DifferenceCI95, d.RelativeChangeCI95 = interval(diff), interval(rel)
			d.RelativeChange = Num(math.NaN())
			if relOK {
				d.RelativeChange = d.Difference / d.BaselineMean
			}
			p, exact := SignFlipP(xa, xb)
			d.P, d.Exact = Num(p), exact
			cmp.Metrics[m] = d
		}
		rep.Comparisons = append(rep.Comparisons, cmp)
	}
	return rep
}

// caseMeans is, for each case with runs, the mean of metric m over them.
func caseMeans(cases []Case, runs map[string][]Record, m string) []float64 {
	var out []float64
	for _, cs := range cases {
		rs := runs[cs.Name]
		if len(rs) == 0 {
			continue
		}
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = r.metric(m)
		}
		out = append(out, Mean(xs))
	}
	return out
}

func meanOrNaN(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return Mean(xs)
}

// Mean is the arm's mean of metric m, and whether the arm has runs.
func (r *Report) Mean(arm Arm, m string) (float64, bool) {
	for _, a := range r.Arms {
		if a.Name == arm {
			v := float64(a.Summary[m].Mean)
			return v, !math.IsNaN(v)
		}
	}
	return 0, false
}

// Runs counts the report's runs.
func (r *Report) Runs() int {
	n := 0
	for _, a := range r.Arms {
		n += len(a.Runs)
	}
	return n
}

// Write writes report.json, report.html and junit.xml into dir, each whole or not at
// all (written aside, then renamed).
func (r *Report) Write(dir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "report.json"), append(b, '\n')); err != nil {
		return err
	}
	var hb strings.Builder
	if err := r.HTML(&hb); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "report.html"), []byte(hb.String())); err != nil {
		return err
	}
	var sb strings.Builder
	if err := r.JUnit(&sb); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "junit.xml"), []byte(sb.String()))
}

func writeFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// JUnit writes junit.xml: a test suite per arm, a test case per case in
// it, failed when one of the case's runs in the arm did not succeed.
func (r *Report) JUnit(w io.Writer) error {
	out := junitSuites{Name: "engine eval"}
	for _, a := range r.Arms {
		s := junitSuite{Name: string(a.Name)}
		var armMS int64
		for _, cs := range r.Cases {
			var ms int64
			var failed []string
			n := 0
			for _, run := range a.Runs {
				if run.Case != cs.Name {
					continue
				}
				n++
				ms += run.WallMS
				if !run.Success {
					failed = append(failed, fmt.Sprintf("repeat %d run %d (%s): %s, %s", run.Repeat, run.Index, orNone(run.RunID), run.Status, run.Reason))
				}
			}
			if n == 0 {
				continue
			}
			tc := junitCase{Name: cs.Name, Classname: "eval." + string(a.Name), Time: seconds(ms)}
			if len(failed) > 0 {
				tc.Failure = &junitFailure{Message: fmt.Sprintf("%d of %d runs did not succeed", len(failed), n), Text: strings.Join(failed, "\n")}
				s.Failures++
			}
			armMS += ms
			s.Cases = append(s.Cases, tc)
			s.Tests++
		}
		s.Time = seconds(armMS)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Suites = append(out.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func orNone(id string) string {
	if id == "" {
		return "no run id"
	}
	return id
}

func seconds(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64) }
