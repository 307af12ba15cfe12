package gym

import (
	"encoding/json"
	"fmt"
)

// playbook builds a task's scripted rules (plugins/scripted's format) in
// the order they are tried: the first rule whose conditions hold answers.
// Its rules read only what a step's prompt shows: the page (title,
// elements, text), the last action and its error, and the memory shown
// (a reference trajectory, tips).
type playbook struct {
	rules []pbRule
}

type pbRule struct {
	Name   string   `json:"name"`
	Last   string   `json:"last_contains,omitempty"`
	Prompt string   `json:"prompt_contains,omitempty"`
	Times  int      `json:"times,omitempty"`
	Calls  []pbCall `json:"tool_calls"`
}

type pbCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// on adds a rule: when the step's message holds last (and the whole
// prompt holds prompt, when set), make the call.
func (p *playbook) on(name, last, prompt string, c pbCall) *playbook {
	p.rules = append(p.rules, pbRule{Name: name, Last: last, Prompt: prompt, Calls: []pbCall{c}})
	return p
}

// once adds a rule that fires at most once a run: a step taken from
// memory, which a model tries once and, when it fails, leaves for what the
// page shows.
func (p *playbook) once(name, last, prompt string, c pbCall) *playbook {
	p.rules = append(p.rules, pbRule{Name: name, Last: last, Prompt: prompt, Times: 1, Calls: []pbCall{c}})
	return p
}

// JSON is the rules file.
func (p *playbook) JSON() json.RawMessage {
	b, err := json.Marshal(map[string]any{"rules": p.rules})
	if err != nil {
		panic(err) // maps of strings: cannot fail
	}
	return b
}

func pbClick(element string) pbCall {
	return pbCall{"click", map[string]any{"element": element}}
}

func pbFill(element, text string) pbCall {
	return pbCall{"fill", map[string]any{"element": element, "text": text}}
}

func pbType(element, text string) pbCall {
	return pbCall{"type", map[string]any{"element": element, "text": text}}
}

func pbSelect(element, option string) pbCall {
	return pbCall{"select", map[string]any{"element": element, "option": option}}
}

func pbPress(key string) pbCall { return pbCall{"press", map[string]any{"key": key}} }

func pbScroll() pbCall { return pbCall{"scroll", map[string]any{"direction": "down"}} }

func pbFinish(answer string) pbCall {
	return pbCall{"finish", map[string]any{"answer": answer, "success": true}}
}

// pbOK is the step message's line for a last action that worked.
func pbOK(desc string) string { return "Last action: " + desc + " → ok" }

// pbFailed is the step message's block for a last action that failed.
func pbFailed(err string) string { return "Last action failed:\n" + err }

// pbEl is how the step message lists an element: "e12: button - Accept all".
func pbEl(role, name string) string { return ": " + role + " - " + name }

// pbStep is how a reference trajectory shows a step on an element:
// `click button "Accept all"`.
func pbStep(action, role, name string) string { return fmt.Sprintf("%s %s %q", action, role, name) }

// pbNotFound is the error for an element name the page does not have.
func pbNotFound(name string) string { return fmt.Sprintf("no element named %q", name) }

// pbNone is the first step's last action.
const pbNone = "Last action: (none)"
