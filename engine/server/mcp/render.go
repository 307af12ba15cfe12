package mcp

import (
	"fmt"
	"strings"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// The tools' text is what a model reads: the lessons as the agent loop
// shows them (lesson.Render), one line per item elsewhere, and a sentence
// when there is nothing, so an empty answer is never mistaken for an error.

func renderLessons(heading string, ls []lesson.Lesson, none string) string {
	if len(ls) == 0 {
		return none
	}
	return lesson.Render(heading, ls)
}

func renderRecorded(r *api.RecordedLesson) string {
	l := r.Lesson
	if l.Quarantine != "" {
		return fmt.Sprintf("Lesson %s held in quarantine (%s): it is not shown to a model until a person approves it: %s", l.ID, l.Quarantine, l.Lesson)
	}
	if r.Created {
		return fmt.Sprintf("Recorded lesson %s (tier %d, %s): %s", l.ID, l.Tier(), l.Category, l.Lesson)
	}
	return fmt.Sprintf("Memory already had this lesson (same failed command and error pattern): %s now has %d uses: %s", l.ID, l.UseCount, l.Lesson)
}

func renderLearned(ls []lesson.Learned) string {
	if len(ls) == 0 {
		return "No failure→recovery pattern in this action log: nothing learned."
	}
	var b strings.Builder
	for i, l := range ls {
		if i > 0 {
			b.WriteByte('\n')
		}
		verb := "new lesson"
		switch {
		case l.Lesson.Quarantine != "":
			verb = "held in quarantine (" + l.Lesson.Quarantine + "), lesson"
		case !l.Created:
			verb = "one more use of"
		}
		fmt.Fprintf(&b, "step %d: %s %s: %s", l.Step, verb, l.Lesson.ID, l.Lesson.Lesson)
	}
	return b.String()
}

func renderOutcome(o *fact.Outcome) string {
	f := o.Fact
	if f.Quarantine != "" {
		return fmt.Sprintf("Fact %s on %s held in quarantine (%s): it is not shown to a model until a person approves it", f.Type, f.Domain, f.Quarantine)
	}
	s := fmt.Sprintf("Fact %s on %s: %s = %s (%s, confidence %.2f, %d sources)", f.Type, f.Domain, f.Key, f.Value, o.Result, f.Confidence, f.Sources)
	if n := len(o.Contradicted); n > 0 {
		s += fmt.Sprintf("; %d rival value(s) lost confidence", n)
	}
	if n := len(o.Pruned); n > 0 {
		s += fmt.Sprintf("; %d rival value(s) forgotten", n)
	}
	return s
}

func renderSelector(s *selector.Selector) string {
	if s.Refused != "" {
		return fmt.Sprintf("Selector for %s on %s not stored (%s)", s.Role, s.Domain, s.Refused)
	}
	return fmt.Sprintf("Selector %s for %s %q on %s%s: %d successes, %d failures (score %d)",
		s.Selector, s.Role, s.Name, s.Domain, s.Path, s.Successes, s.Failures, s.Score())
}

func renderMatch(m *api.TrajectoryMatch) string {
	if m.Match == nil {
		return fmt.Sprintf("No recorded run of a similar task on this site (similarity threshold %.2f): explore, and memory will record this run if it succeeds.", m.Threshold)
	}
	t := m.Match.Trajectory
	var b strings.Builder
	fmt.Fprintf(&b, "A past successful run of a similar task (trajectory %s, goal %q, similarity %.2f", t.ID, t.Goal, m.Match.Similarity)
	if m.Match.Score != m.Match.Similarity {
		fmt.Fprintf(&b, ", weighted score %.2f", m.Match.Score)
	}
	b.WriteString("). Steps for your goal:")
	for i, s := range m.Match.Steps {
		fmt.Fprintf(&b, "\n%d. %s", i+1, renderStep(s))
	}
	return b.String()
}

func renderStep(s trajectory.Step) string {
	var b strings.Builder
	b.WriteString(s.Action)
	if s.Role != "" || s.Name != "" {
		fmt.Fprintf(&b, " %s %q", s.Role, s.Name)
	}
	if s.Value != "" {
		fmt.Fprintf(&b, " value %q", s.Value)
	}
	if s.Selector != "" {
		fmt.Fprintf(&b, " (selector %s)", s.Selector)
	}
	if s.URL != "" {
		fmt.Fprintf(&b, " on %s", s.URL)
	}
	return b.String()
}

func renderQuery(q *QueryResult) string {
	var lines []string
	switch q.Kind {
	case "lessons":
		for _, l := range q.Lessons {
			lines = append(lines, fmt.Sprintf("%s tier %d %s%s, %d uses, %s: %s", l.ID, l.Tier(), l.Category, onDomain(l.Domain), l.UseCount, l.Source, l.Lesson))
		}
	case "facts":
		for _, f := range q.Facts {
			lines = append(lines, fmt.Sprintf("%s %s: %s = %s (confidence %.2f, %d sources)", f.Domain, f.Type, f.Key, f.Value, f.Confidence, f.Sources))
		}
	case "selectors":
		for _, s := range q.Selectors {
			lines = append(lines, fmt.Sprintf("%s%s %s %q: %s (%d successes, %d failures)", s.Domain, s.Path, s.Role, s.Name, s.Selector, s.Successes, s.Failures))
		}
	case "trajectories":
		for _, t := range q.Trajectories {
			lines = append(lines, fmt.Sprintf("%s on %s: %q, %d steps, %d runs, recorded %s", t.ID, t.Domain, t.Goal, len(t.Steps), t.Runs, t.RecordedAt.Format("2006-01-02")))
		}
	case "runs":
		for _, m := range q.Runs {
			lines = append(lines, renderRunLine(m))
		}
	}
	if len(lines) == 0 {
		return "Memory holds no " + q.Kind + " here."
	}
	if q.More {
		lines = append(lines, "(more: raise limit to see them)")
	}
	return strings.Join(lines, "\n")
}

func renderRunLine(m run.Manifest) string {
	return fmt.Sprintf("%s %s on %s: %q, %d turns, started %s", m.RunID, m.Status, m.Domain, m.Goal, m.TurnCount, m.StartedAt.Format("2006-01-02 15:04"))
}

func onDomain(d string) string {
	if d == "" {
		return ""
	}
	return " on " + d
}
