package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/plan"
	"github.com/engine-dev/engine/engine/memory/runfiles"
	"github.com/engine-dev/engine/engine/memory/selector"
)

// The planner/executor loop: each iteration the planner (the model) sees
// the task, the execution metrics (with the HIGH ERROR RATE warning), its
// previous iterations with their tool results, the memory context and the
// browser state, and answers with the design's structured output; the
// executor runs its proposed actions. Every iteration is stored per run
// (engine/memory/plan), so `engine query plan RUN_ID` shows the history.

const plannerIntro = `You are the planner of a browser automation agent. Each iteration you see the task, the execution metrics, your previous iterations with their tool results, what memory holds about the site, and the current browser state. Answer with one JSON object (as text, or as the arguments of the tool "plan"):
{"user_task": "...", "execution_history": "...", "current_state": "...", "challenges_identified": "...", "step_by_step_reasoning": "...", "proposed_actions": ["..."], "task_complete": false, "final_answer": ""}
The executor runs each proposed action in order and stops at the first that fails. Write each action as one line:
  click "Element name"      fill "Element name" "text"     type "Element name" "text"
  press Enter               press "Element name" Enter     select "Element name" "option"
  hover "Element name"      navigate https://...           scroll down | scroll up
  wait 1000                 back
A ref from the browser state (e37) may stand for "Element name". Set task_complete with the final_answer when the goal is reached.`

// PlanTool is the tool the planner may answer through.
var PlanTool = engine.Tool{Name: "plan", Description: "Give this iteration's plan.", Parameters: json.RawMessage(`{"type": "object", "properties": {
  "user_task": {"type": "string"}, "execution_history": {"type": "string"}, "current_state": {"type": "string"},
  "challenges_identified": {"type": "string"}, "step_by_step_reasoning": {"type": "string"},
  "proposed_actions": {"type": "array", "items": {"type": "string"}}, "task_complete": {"type": "boolean"}, "final_answer": {"type": "string"}},
  "required": ["proposed_actions", "task_complete"]}`)}

// historyBudget bounds the iteration history in the planner prompt.
const historyBudget = 1500

func (r *runner) planLoop(ctx context.Context) {
	var its []plan.Iteration
	for iter := 1; !r.stopped; iter++ {
		if r.res.Steps >= r.cfg.MaxSteps {
			r.stop(false, ReasonMaxSteps)
			break
		}
		if ctx.Err() != nil {
			r.stop(false, ReasonInterrupted)
			break
		}
		started := r.cfg.Now()
		if !r.snapshot(ctx) {
			break
		}
		observations := 1
		mc, err := r.memoryPhase(ctx, r.res.Steps+1)
		if err != nil {
			r.stopFailed(ctx, fmt.Sprintf("memory: %v", err))
			break
		}
		var b strings.Builder
		b.WriteString(plan.Prompt(r.cfg.Goal, its, historyBudget))
		if mc != nil && mc.Text != "" {
			b.WriteString("\n" + mc.Text + "\n")
		}
		r.writeNotesAndFailure(&b) // Trigger A in planner mode too
		b.WriteString("\nBROWSER STATE:\n")
		p := &r.page
		fmt.Fprintf(&b, "URL: %s\nTitle: %s\nType: %s\nSummary: %s\nClickable elements:\n", p.URL, p.Title, p.Type, p.Summary)
		p.renderElements(&b)
		if t := strings.TrimSpace(p.Text); t != "" {
			b.WriteString("Visible text:\n" + clip(t, maxTextChars) + "\n")
		}
		resp, ok := r.complete(ctx, engine.ModelRequest{System: r.system, Messages: []engine.Message{{Role: engine.RoleUser, Content: b.String()}}, Tools: []engine.Tool{PlanTool}})
		if !ok {
			break
		}
		out, perr := parsePlan(resp)
		if perr != nil {
			r.res.Errors++
			r.notes = append(r.notes, "Your last answer was not a plan: "+perr.Error()+". Answer with the JSON object described.")
			r.log(record{Record: runfiles.Record{Step: r.res.Steps, Action: "invalid_plan", ToolError: perr.Error(), Origin: lesson.OriginEngine, URL: r.page.URL}})
			r.onStep(StepInfo{Step: r.res.Steps, Error: perr.Error()})
			if r.res.Errors >= r.cfg.MaxErrors {
				r.stop(false, ReasonMaxErrors)
			}
			continue
		}
		it := plan.Iteration{Planner: out, StartedAt: started}
		if out.TaskComplete {
			r.res.Answer = out.FinalAnswer
			r.stop(true, ReasonFinished)
			r.onStep(StepInfo{Step: r.res.Steps, Action: "finish", OK: true})
		}
		for i, line := range out.ProposedActions {
			if r.stopped {
				break
			}
			if r.res.Steps >= r.cfg.MaxSteps {
				r.stop(false, ReasonMaxSteps)
				break
			}
			if i > 0 {
				if !r.snapshot(ctx) {
					break
				}
				observations++
			}
			r.res.Steps++
			c, err := parseActionLine(line)
			if err != nil {
				r.res.Errors++
				it.Tools = append(it.Tools, plan.ToolExecution{Tool: firstWord(line), Error: err.Error()})
				if r.res.Errors >= r.cfg.MaxErrors {
					r.stop(false, ReasonMaxErrors)
				}
				break
			}
			okAct := r.perform(ctx, r.res.Steps, c, false)
			te := plan.ToolExecution{Tool: string(c.Kind), OK: okAct}
			if okAct {
				te.Output = json.RawMessage(strconv.Quote(r.red.String(r.lastDesc + ": done")))
			} else {
				te.Error = r.lastErr
				if te.Error == "" {
					te.Error = "not run: " + r.lastDesc
				}
			}
			it.Tools = append(it.Tools, te)
			if !okAct {
				break
			}
		}
		it.Observations = observations
		it.EndedAt = r.cfg.Now()
		pctx := context.WithoutCancel(ctx)
		r.red.Value(&it)
		stored, err := r.mem.AddIteration(pctx, r.res.RunID, it)
		if err == nil {
			it = *stored
		}
		if err != nil {
			r.stopFailed(ctx, fmt.Sprintf("memory: %v", err))
			break
		}
		its = append(its, it)
	}
}

// parsePlan reads the planner's structured output from a "plan" tool call
// or from the text (a JSON object, possibly in a code fence).
func parsePlan(resp *engine.ModelResponse) (plan.Output, error) {
	var raw string
	for _, tc := range resp.ToolCalls {
		if tc.Name == PlanTool.Name {
			if n := len(tc.Arguments); n > MaxToolArgs {
				return plan.Output{}, tooLong(tc.Name, n)
			}
			raw = tc.Arguments
			break
		}
	}
	if raw == "" {
		raw = strings.TrimSpace(resp.Text)
		if i, j := strings.Index(raw, "{"), strings.LastIndex(raw, "}"); i >= 0 && j > i {
			raw = raw[i : j+1]
		}
	}
	if raw == "" {
		return plan.Output{}, fmt.Errorf("no JSON object in the answer")
	}
	var out plan.Output
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return plan.Output{}, fmt.Errorf("malformed plan: %v", err)
	}
	if len(out.ProposedActions) == 0 && !out.TaskComplete {
		return plan.Output{}, fmt.Errorf("the plan proposes no actions and does not complete the task")
	}
	return out, nil
}

// parseActionLine reads one proposed action line (see plannerIntro).
func parseActionLine(line string) (call, error) {
	words, err := splitWords(line)
	if err != nil {
		return call{}, err
	}
	if len(words) == 0 {
		return call{}, fmt.Errorf("empty action")
	}
	verb := strings.ToLower(words[0])
	rest := words[1:]
	target := func(c *call, w string) {
		if len(w) > 1 && w[0] == 'e' && isDigits(w[1:]) {
			c.Ref = w
		} else {
			c.Element = w
		}
	}
	bad := func(form string) (call, error) {
		return call{}, fmt.Errorf("cannot read %q: write it as %s", line, form)
	}
	c := call{Kind: engine.ActionKind(verb)}
	switch verb {
	case "click", "hover":
		if len(rest) != 1 {
			return bad(verb + ` "Element name"`)
		}
		target(&c, rest[0])
	case "fill", "type", "select":
		if len(rest) != 2 {
			return bad(verb + ` "Element name" "text"`)
		}
		target(&c, rest[0])
		c.Value = rest[1]
	case "press":
		switch len(rest) {
		case 1:
			c.Value = rest[0]
		case 2:
			target(&c, rest[0])
			c.Value = rest[1]
		default:
			return bad(`press Enter or press "Element name" Enter`)
		}
	case "navigate":
		if len(rest) != 1 {
			return bad("navigate https://...")
		}
		c.Value = rest[0]
	case "scroll":
		c.Value = "down"
		if len(rest) == 1 {
			c.Value = strings.ToLower(rest[0])
		}
	case "wait":
		c.Millis = 1000
		if len(rest) == 1 {
			n, err := strconv.Atoi(rest[0])
			if err != nil {
				c.Millis, c.Value = 0, rest[0]
			} else {
				c.Millis = n
			}
		}
	case "back":
	default:
		return call{}, fmt.Errorf("unknown action %q in %q", verb, line)
	}
	return c, nil
}

// splitWords splits on spaces, keeping "quoted strings" whole.
func splitWords(s string) ([]string, error) {
	var out []string
	s = strings.TrimSpace(s)
	for s != "" {
		if s[0] == '"' {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, fmt.Errorf("unclosed quote in %q", s)
			}
			v, _ := strconv.Unquote(q)
			out = append(out, v)
			s = strings.TrimSpace(s[len(q):])
			continue
		}
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i])
		s = strings.TrimSpace(s[i:])
	}
	return out, nil
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return "action"
}

func engineKind(s string) engine.ActionKind { return engine.ActionKind(s) }

func selectorOnly(sel string) selector.Selector { return selector.Selector{Selector: sel} }
