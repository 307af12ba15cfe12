package eval

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
)

// HTML writes report.html: one self-contained page (inline CSS and SVG, no
// script, nothing fetched) with the scripted note first when there is one,
// a bar chart per metric (each arm's mean with its 95 % interval as a
// whisker), the comparisons and a table of every case in every arm.
// Everything from the cases (names, goals, reasons) is escaped.
func (r *Report) HTML(w io.Writer) error {
	return htmlTmpl.Execute(w, r.htmlView())
}

// The chart's geometry, in SVG user units.
const (
	chartLabelW = 150
	chartBarW   = 420
	chartValueW = 210
	chartRowH   = 26
	chartTop    = 8
)

type htmlView struct {
	*Report
	Charts   []chartView
	CmpRows  []cmpRow
	CaseRows []caseRow
	ArmNames []string
	PNote    string
}

type chartView struct {
	Metric        string
	Width, Height int
	Bars          []barView
	Max           string
}

type barView struct {
	Arm                string
	Y, Y2, TextY, MidY int
	W                  float64 // the bar's length (0 when the mean is undefined)
	LoX, HiX, ValueX   float64 // the whisker's ends, where the value is written
	Whisker            bool
	Value, Interval    string
	Class              string
}

type cmpRow struct {
	Arm, Baseline, Metric         string
	Mean, BaseMean, Change, CI, P string
	Better, Worse                 bool
	Cases                         int
	FirstOfArm                    bool
	DiffCI                        string
	Exact                         bool
}

type caseRow struct {
	Case, Goal, Arm, Variant string
	Runs, Succeeded          int
	Status                   string
	Steps, Errors, LLMCalls  string
	Tokens                   string
	FirstOfCase              bool
	Failed                   bool
}

// lowerIsBetter are the metrics a smaller value of is an improvement.
var lowerIsBetter = map[string]bool{"steps": true, "errors": true, "llm_calls": true, "tokens": true, "wall_ms": true}

func (r *Report) htmlView() htmlView {
	v := htmlView{Report: r, PNote: fmt.Sprintf("* p estimated from %d random sign assignments (more than %d cases); unmarked p are exact.", Resamples, exactLimit)}
	for _, a := range r.Arms {
		v.ArmNames = append(v.ArmNames, string(a.Name))
	}
	for _, m := range Metrics {
		v.Charts = append(v.Charts, r.chart(m))
	}
	for _, c := range r.Comparisons {
		for i, m := range Metrics {
			d := c.Metrics[m]
			rel := float64(d.RelativeChange)
			row := cmpRow{Arm: string(c.Arm), Baseline: string(c.Baseline), Metric: m, Cases: c.Cases, FirstOfArm: i == 0,
				Mean: fmtVal(float64(d.Mean)), BaseMean: fmtVal(float64(d.BaselineMean)), Change: fmtPct(rel),
				CI:     "[" + fmtPct(float64(d.RelativeChangeCI95[0])) + ", " + fmtPct(float64(d.RelativeChangeCI95[1])) + "]",
				DiffCI: "[" + fmtVal(float64(d.DifferenceCI95[0])) + ", " + fmtVal(float64(d.DifferenceCI95[1])) + "]",
				P:      FormatP(float64(d.P)), Exact: d.Exact}
			// An interval of the difference that excludes 0 is a change
			// the data show; its sign says better or worse.
			lo, hi := float64(d.DifferenceCI95[0]), float64(d.DifferenceCI95[1])
			if lo > 0 || hi < 0 {
				improves := hi < 0 == lowerIsBetter[m]
				row.Better, row.Worse = improves, !improves
			}
			v.CmpRows = append(v.CmpRows, row)
		}
	}
	for _, cs := range r.Cases {
		first := true
		for _, a := range r.Arms {
			var runs []RunReport
			for _, run := range a.Runs {
				if run.Case == cs.Name {
					runs = append(runs, run)
				}
			}
			if len(runs) == 0 {
				continue
			}
			row := caseRow{Case: cs.Name, Goal: cs.Goal, Arm: string(a.Name), Variant: a.Variant, Runs: len(runs), FirstOfCase: first}
			first = false
			var steps, errs, calls, toks float64
			statuses := map[string]int{}
			var order []string
			for _, run := range runs {
				if run.Success {
					row.Succeeded++
				}
				if statuses[run.Status] == 0 {
					order = append(order, run.Status)
				}
				statuses[run.Status]++
				steps += float64(run.Steps)
				errs += float64(run.Errors)
				calls += float64(run.LLMCalls)
				toks += float64(run.Tokens)
			}
			for i, s := range order {
				if i > 0 {
					row.Status += ", "
				}
				row.Status += fmt.Sprintf("%s ×%d", s, statuses[s])
			}
			n := float64(len(runs))
			row.Steps, row.Errors, row.LLMCalls, row.Tokens = fmtVal(steps/n), fmtVal(errs/n), fmtVal(calls/n), fmtVal(toks/n)
			row.Failed = row.Succeeded < row.Runs
			v.CaseRows = append(v.CaseRows, row)
		}
	}
	return v
}

// chart lays out one metric's bars: the scale runs from 0 to the largest
// mean or interval end of any arm.
func (r *Report) chart(m string) chartView {
	scale := 0.0
	for _, a := range r.Arms {
		s := a.Summary[m]
		for _, x := range []Num{s.Mean, s.CI95[0], s.CI95[1]} {
			if f := float64(x); !math.IsNaN(f) && f > scale {
				scale = f
			}
		}
	}
	if scale == 0 {
		scale = 1
	}
	c := chartView{Metric: m, Width: chartLabelW + chartBarW + chartValueW, Height: chartTop*2 + chartRowH*len(r.Arms), Max: fmtVal(scale)}
	at := func(x Num) float64 {
		f := float64(x)
		if math.IsNaN(f) || f < 0 {
			return 0
		}
		return math.Round(f/scale*chartBarW*10) / 10
	}
	for i, a := range r.Arms {
		s := a.Summary[m]
		y := chartTop + i*chartRowH
		b := barView{Arm: string(a.Name), Y: y + 4, Y2: y + 22, MidY: y + 13, TextY: y + 17, W: at(s.Mean),
			LoX: chartLabelW + at(s.CI95[0]), HiX: chartLabelW + at(s.CI95[1]),
			Value: fmtShort(float64(s.Mean)), Class: "arm-" + string(baseArm(a.Name))}
		b.ValueX = max(b.HiX, chartLabelW+b.W) + 6
		b.Whisker = !math.IsNaN(float64(s.CI95[0])) && b.HiX > b.LoX
		if !math.IsNaN(float64(s.CI95[0])) {
			b.Interval = "[" + fmtShort(float64(s.CI95[0])) + ", " + fmtShort(float64(s.CI95[1])) + "]"
		}
		if a.Variant == Changed {
			b.Class += " changed"
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

func fmtVal(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64)
}

// fmtShort is a chart's number: whole from 100 up, so labels stay short.
func fmtShort(f float64) string {
	if math.Abs(f) >= 100 {
		return fmtVal(math.Round(f))
	}
	return fmtVal(f)
}

// FormatP shows a p-value: three decimals, and "<0.001" below.
func FormatP(p float64) string {
	switch {
	case math.IsNaN(p):
		return "–"
	case p < 0.001:
		return "<0.001"
	}
	return strconv.FormatFloat(math.Round(p*1000)/1000, 'f', -1, 64)
}

func fmtPct(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return fmt.Sprintf("%+.0f %%", f*100)
}

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"lx": func() int { return chartLabelW },
}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>engine eval report</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1d232b; background: #fafbfc; }
main { max-width: 1080px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #d8dee4; padding-bottom: 4px; }
.note { background: #fff4d6; border: 1px solid #e6c66a; padding: 8px 12px; margin: 0 0 14px; border-radius: 4px; }
.meta { color: #57606a; margin: 0 0 4px; }
.meta code { color: #1d232b; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(480px, 1fr)); gap: 12px 24px; }
figure { margin: 0; background: #fff; border: 1px solid #d8dee4; border-radius: 4px; padding: 8px 10px; }
figcaption { font-weight: 600; margin-bottom: 4px; }
svg { width: 100%; height: auto; display: block; }
svg text { font: 12px system-ui, sans-serif; fill: #1d232b; }
svg .axis { stroke: #8c959f; stroke-width: 1; }
svg .bar { fill: #8c959f; }
svg .arm-no-memory .bar { fill: #afb8c1; }
svg .arm-cold .bar { fill: #7aa2d6; }
svg .arm-warm .bar { fill: #2f7d4f; }
svg .arm-replay .bar { fill: #8250df; }
svg .changed .bar { fill-opacity: .55; stroke: #1d232b; stroke-dasharray: 3 2; }
svg .whisker { stroke: #1d232b; stroke-width: 1.5; }
svg .ci { fill: #57606a; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid #d8dee4; }
th, td { padding: 4px 8px; border-bottom: 1px solid #eaeef2; text-align: left; vertical-align: top; }
th { background: #f3f5f7; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.first td { border-top: 2px solid #d8dee4; }
.better { color: #1a7f37; font-weight: 600; }
.worse { color: #cf222e; font-weight: 600; }
.failed { color: #cf222e; }
.goal { color: #57606a; max-width: 360px; }
.small { color: #57606a; font-size: 12px; }
</style>
</head>
<body>
<main>
{{if .Note}}<p class="note" id="note">{{.Note}}</p>
{{end}}<h1>engine eval</h1>
<p class="meta">llm <code>{{.LLM}}</code> · browser <code>{{.Browser}}</code> · engine <code>{{.EngineVersion}}</code> · {{len .Cases}} cases · {{.Repeats}} repeats · {{.WarmRuns}} warm runs{{if .ChangeAfter}} · on the changed variants after memory-making run {{.ChangeAfter}}{{end}}</p>
<p class="small">{{.Statistics}}</p>

<h2>Arms</h2>
<p class="small">Each bar is the arm's mean over cases; the whisker its 95 % bootstrap interval. Arms ending in @changed ran on the cases' changed variants (hatched).</p>
<div class="charts">
{{range .Charts}}<figure>
<figcaption>{{.Metric}}</figcaption>
<svg viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="{{.Metric}} by arm">
<line class="axis" x1="{{lx}}" y1="0" x2="{{lx}}" y2="{{.Height}}"/>
{{range .Bars}}<g class="{{.Class}}">
<text x="{{lx}}" dx="-8" y="{{.TextY}}" text-anchor="end">{{.Arm}}</text>
<rect class="bar" x="{{lx}}" y="{{.Y}}" width="{{.W}}" height="18"><title>{{.Arm}}: {{.Value}} {{.Interval}}</title></rect>
{{if .Whisker}}<line class="whisker" x1="{{.LoX}}" y1="{{.MidY}}" x2="{{.HiX}}" y2="{{.MidY}}"/>
<line class="whisker" x1="{{.LoX}}" y1="{{.Y}}" x2="{{.LoX}}" y2="{{.Y2}}"/>
<line class="whisker" x1="{{.HiX}}" y1="{{.Y}}" x2="{{.HiX}}" y2="{{.Y2}}"/>
{{end}}<text x="{{.ValueX}}" y="{{.TextY}}">{{.Value}} <tspan class="ci">{{.Interval}}</tspan></text>
</g>
{{end}}</svg>
</figure>
{{end}}</div>

<h2>Against no memory</h2>
{{if .CmpRows}}<p class="small">Each arm against no-memory on the same variant, paired by case: the change with its 95 % paired-bootstrap interval and the sign-flip test's p-value. Green or red: the interval of the difference excludes 0.</p>
<table id="comparisons">
<thead><tr><th>arm</th><th>baseline</th><th>cases</th><th>metric</th><th>mean</th><th>baseline mean</th><th>change</th><th>ci95</th><th>difference ci95</th><th>p</th></tr></thead>
<tbody>
{{range .CmpRows}}<tr{{if .FirstOfArm}} class="first"{{end}}><td>{{.Arm}}</td><td>{{.Baseline}}</td><td class="num">{{.Cases}}</td><td>{{.Metric}}</td><td class="num">{{.Mean}}</td><td class="num">{{.BaseMean}}</td><td class="num{{if .Better}} better{{else if .Worse}} worse{{end}}">{{.Change}}</td><td class="num">{{.CI}}</td><td class="num">{{.DiffCI}}</td><td class="num">{{.P}}{{if not .Exact}}*{{end}}</td></tr>
{{end}}</tbody>
</table>
<p class="small">{{.PNote}}</p>
{{else}}<p>No comparisons: no-memory was not among the arms.</p>
{{end}}
<h2>Cases</h2>
<table id="cases">
<thead><tr><th>case</th><th>arm</th><th>runs</th><th>succeeded</th><th>status</th><th>steps</th><th>errors</th><th>LLM calls</th><th>tokens</th></tr></thead>
<tbody>
{{range .CaseRows}}<tr{{if .FirstOfCase}} class="first"{{end}}><td>{{if .FirstOfCase}}<strong>{{.Case}}</strong><div class="goal">{{.Goal}}</div>{{end}}</td><td>{{.Arm}}</td><td class="num">{{.Runs}}</td><td class="num{{if .Failed}} failed{{end}}">{{.Succeeded}}</td><td>{{.Status}}</td><td class="num">{{.Steps}}</td><td class="num">{{.Errors}}</td><td class="num">{{.LLMCalls}}</td><td class="num">{{.Tokens}}</td></tr>
{{end}}</tbody>
</table>
<p class="small">Means over the case's runs in the arm.</p>
</main>
</body>
</html>
`))
