package eval

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Condition is a comparison of arm means (or numbers) that --fail-if
// checks against a report: ARM.METRIC OP (ARM.METRIC | NUMBER), OP one of
// < <= > >= == !=.
type Condition struct {
	Text        string
	Left, Right operand
	Op          string
}

type operand struct {
	arm    Arm
	metric string
	num    float64
}

func (o operand) String() string {
	if o.arm == "" {
		return strconv.FormatFloat(o.num, 'g', -1, 64)
	}
	return string(o.arm) + "." + o.metric
}

// ops are the comparison operators, two-character ones first so that
// "<=" is not read as "<".
var ops = []string{"<=", ">=", "==", "!=", "<", ">"}

// ParseCondition parses a condition over the arms an evaluation reports
// (Config.ReportArms: "warm", "warm@changed", …).
func ParseCondition(s string, arms []Arm) (Condition, error) {
	c := Condition{Text: strings.TrimSpace(s)}
	at, op := -1, ""
	for _, o := range ops {
		if i := strings.Index(c.Text, o); i >= 0 && (at < 0 || i < at) {
			at, op = i, o
		}
	}
	if at < 0 {
		return c, fmt.Errorf("condition %q: want ARM.METRIC OP ARM.METRIC or a number, OP one of %s (for example warm.errors>=no-memory.errors)", s, strings.Join(ops, " "))
	}
	c.Op = op
	var err error
	if c.Left, err = parseOperand(c.Text[:at], arms); err != nil {
		return c, fmt.Errorf("condition %q: %v", s, err)
	}
	if c.Right, err = parseOperand(c.Text[at+len(op):], arms); err != nil {
		return c, fmt.Errorf("condition %q: %v", s, err)
	}
	if c.Left.arm == "" && c.Right.arm == "" {
		return c, fmt.Errorf("condition %q compares two numbers: name an arm's metric, such as warm.errors", s)
	}
	return c, nil
}

func parseOperand(s string, arms []Arm) (operand, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return operand{}, fmt.Errorf("a side is empty")
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return operand{}, fmt.Errorf("%q is not a finite number", s)
		}
		return operand{num: f}, nil
	}
	// Arm names hold "-" and "@", never "."; the metric follows the last ".".
	i := strings.LastIndex(s, ".")
	if i < 0 {
		return operand{}, fmt.Errorf("%q is neither ARM.METRIC nor a number", s)
	}
	a, m := Arm(s[:i]), s[i+1:]
	if !slices.Contains(AllArms, baseArm(a)) || (a != baseArm(a) && a != reportArm(baseArm(a), true)) {
		return operand{}, fmt.Errorf("unknown arm %q: use %s, each with %s for its runs on the changed variant", a, armList(AllArms), ChangedSuffix)
	}
	if !slices.Contains(arms, a) {
		asked := false
		for _, r := range arms {
			asked = asked || baseArm(r) == baseArm(a)
		}
		if asked {
			return operand{}, fmt.Errorf("arm %q has no runs in this evaluation (its arms: %s; --change-after decides which runs are on the changed variant)", a, armList(arms))
		}
		return operand{}, fmt.Errorf("arm %q is not among --arms (%s)", a, armList(arms))
	}
	if !slices.Contains(Metrics, m) {
		return operand{}, fmt.Errorf("unknown metric %q: use %s", m, strings.Join(Metrics, ", "))
	}
	return operand{arm: a, metric: m}, nil
}

// Holds says whether the condition holds on the report, with the values it
// compared; an arm without runs makes it an error.
func (c Condition) Holds(r *Report) (bool, string, error) {
	l, err := c.Left.value(r)
	if err != nil {
		return false, "", err
	}
	rv, err := c.Right.value(r)
	if err != nil {
		return false, "", err
	}
	var ok bool
	switch c.Op {
	case "<":
		ok = l < rv
	case "<=":
		ok = l <= rv
	case ">":
		ok = l > rv
	case ">=":
		ok = l >= rv
	case "==":
		ok = l == rv
	case "!=":
		ok = l != rv
	}
	return ok, fmt.Sprintf("%s %s %s (%s %s %s)", c.Left, c.Op, c.Right, fmtNum(l), c.Op, fmtNum(rv)), nil
}

func (o operand) value(r *Report) (float64, error) {
	if o.arm == "" {
		return o.num, nil
	}
	v, ok := r.Mean(o.arm, o.metric)
	if !ok {
		return 0, fmt.Errorf("arm %s has no runs to compare", o.arm)
	}
	// Compare the means as the report shows them.
	return math.Round(v*1e4) / 1e4, nil
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
