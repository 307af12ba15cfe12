package gym

import (
	"encoding/json"
	"fmt"
)

// rulebook builds a task's scripted rules in Go (plugins/scripted's
// format), so that a site's tasks share one set of rules with the task's
// words filled in rather than copies of a JSON file. Its rules see what a
// model sees and nothing more: the last message (the step message: the
// page, the memory shown, the last action and its error) and the prompt.
type rulebook struct {
	Rules []rbRule `json:"rules"`
}

// rbRule is one rule: conditions (substrings of the last message, of the
// prompt, of the system prompt) and one tool call.
type rbRule struct {
	Name      string   `json:"name"`
	Last      string   `json:"last_contains,omitempty"`
	Prompt    string   `json:"prompt_contains,omitempty"`
	System    string   `json:"system_contains,omitempty"`
	ToolCalls []rbCall `json:"tool_calls"`
}

type rbCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// on adds a rule that fires when the last message holds last (and the
// prompt holds prompt, when given).
func (b *rulebook) on(name, last, prompt string, c rbCall) *rulebook {
	b.Rules = append(b.Rules, rbRule{Name: name, Last: last, Prompt: prompt, ToolCalls: []rbCall{c}})
	return b
}

// JSON is the rules file.
func (b *rulebook) JSON() json.RawMessage {
	raw, err := json.Marshal(b)
	if err != nil {
		panic(fmt.Sprintf("gym: rules: %v", err))
	}
	return raw
}

func rbClick(element string) rbCall {
	return rbCall{Name: "click", Arguments: map[string]any{"element": element}}
}

func rbFill(element, text string) rbCall {
	return rbCall{Name: "fill", Arguments: map[string]any{"element": element, "text": text}}
}

func rbType(element, text string) rbCall {
	return rbCall{Name: "type", Arguments: map[string]any{"element": element, "text": text}}
}

func rbPress(key string) rbCall {
	return rbCall{Name: "press", Arguments: map[string]any{"key": key}}
}

func rbFinish(answer string) rbCall {
	return rbCall{Name: "finish", Arguments: map[string]any{"answer": answer, "success": true}}
}

// rbOK is the step message's line for an action that went well.
func rbOK(desc string) string { return "Last action: " + desc + " → ok" }

// rbFailed is the start of the step message's block for a failed action,
// with the start of its error.
func rbFailed(err string) string { return "Last action failed:\n" + err }

// rbReference is the heading memory shows a reference trajectory under.
const rbReference = "REFERENCE TRAJECTORY"
