package inspect

import (
	"fmt"
	"slices"
	"strconv"
)

// maxCharts bounds the goals charted on the Runs page.
const maxCharts = 6

// chart is one goal's runs, oldest first, as an SVG bar chart of errors
// and model calls per run: the picture of memory at work (the cold run
// errs and calls the model most, the warm run less, a replay least).
type chart struct {
	Goal          string
	Width, Height int
	Bars          []bar
	Labels        []label
	Axis          int // y of the x axis
	Max           int // the top of the scale
}

type bar struct {
	X, Y, W, H int
	Class      string // errors or calls
	Value      int
	Title      string
}

type label struct {
	X, Y  int
	Text  string
	Title string
}

// Geometry of a chart, in pixels.
const (
	chartTop    = 18
	chartPlot   = 110 // height of the bars' area
	chartBottom = 34  // room for the labels
	groupWidth  = 64
	barWidth    = 22
	chartLeft   = 8
)

// chartsOf groups rows by goal and charts each goal that has runs, the
// goal of the newest run first. A run's kind is replay when it replayed
// steps from a trajectory, cold when it is the goal's oldest run charted,
// else warm.
func chartsOf(rows []runRow) []chart {
	var goals []string
	byGoal := map[string][]*runRow{}
	for i := range rows { // newest first
		r := &rows[i]
		if !r.Sum.Logged {
			continue // registered, not run here: nothing to chart
		}
		if _, ok := byGoal[r.M.Goal]; !ok {
			goals = append(goals, r.M.Goal)
		}
		byGoal[r.M.Goal] = append(byGoal[r.M.Goal], r)
	}
	var out []chart
	for _, g := range goals {
		runs := byGoal[g]
		slices.Reverse(runs) // oldest first
		for i, r := range runs {
			switch {
			case r.M.Replay != nil && r.M.Replay.Replayed > 0:
				r.Kind = "replay"
			case i == 0:
				r.Kind = "cold"
			default:
				r.Kind = "warm"
			}
		}
		if len(out) < maxCharts {
			out = append(out, chartOf(g, runs))
		}
	}
	return out
}

func chartOf(goal string, runs []*runRow) chart {
	c := chart{Goal: goal, Height: chartTop + chartPlot + chartBottom, Axis: chartTop + chartPlot,
		Width: chartLeft*2 + groupWidth*len(runs)}
	for _, r := range runs {
		c.Max = max(c.Max, r.Sum.Errors, r.Sum.LLMCalls)
	}
	scale := max(c.Max, 1)
	for i, r := range runs {
		x := chartLeft + i*groupWidth + (groupWidth-2*barWidth)/2
		for j, v := range []struct {
			class string
			n     int
			what  string
		}{{"errors", r.Sum.Errors, "errors"}, {"calls", r.Sum.LLMCalls, "LLM calls"}} {
			h := v.n * chartPlot / scale
			if v.n > 0 && h < 2 {
				h = 2
			}
			c.Bars = append(c.Bars, bar{X: x + j*barWidth, Y: c.Axis - h, W: barWidth - 2, H: h, Class: v.class, Value: v.n,
				Title: fmt.Sprintf("%s (%s): %d %s", r.M.RunID, r.Kind, v.n, v.what)})
		}
		c.Labels = append(c.Labels, label{X: chartLeft + i*groupWidth + groupWidth/2, Y: c.Axis + 16,
			Text: r.Kind + " " + strconv.Itoa(i+1), Title: r.M.RunID})
	}
	return c
}
