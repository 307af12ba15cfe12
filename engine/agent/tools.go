package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/engine-dev/engine/engine"
)

// Tool names the model may call. Every browser action is one tool; finish
// ends the run.
const (
	ToolFinish = "finish"
)

// targetProps are the properties every element-targeting tool takes: a
// snapshot ref, or (when the model gives none) the element's accessible
// name, optionally prefixed by its role ("searchbox Search products").
const targetProps = `"ref": {"type": "string", "description": "the element's ref from the snapshot, e.g. e37"},
    "element": {"type": "string", "description": "the element's name as listed (used when no ref is given)"}`

func schema(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	if len(required) == 0 {
		req = []byte("[]")
	}
	return json.RawMessage(`{"type": "object", "properties": {` + props + `}, "required": ` + string(req) + `}`)
}

// Tools are the tools the step-mode model is offered.
var Tools = []engine.Tool{
	{Name: "click", Description: "Click an element.", Parameters: schema(targetProps)},
	{Name: "fill", Description: "Replace the text of an input with text.", Parameters: schema(targetProps+`, "text": {"type": "string"}`, "text")},
	{Name: "type", Description: "Type text into an element (appends to what is there).", Parameters: schema(targetProps+`, "text": {"type": "string"}`, "text")},
	{Name: "press", Description: "Press a key (Enter, Escape, Tab, ArrowDown, ...), on an element or on the focused one.", Parameters: schema(targetProps+`, "key": {"type": "string"}`, "key")},
	{Name: "select", Description: "Choose an option of a select element.", Parameters: schema(targetProps+`, "option": {"type": "string"}`, "option")},
	{Name: "hover", Description: "Move the pointer over an element.", Parameters: schema(targetProps)},
	{Name: "scroll", Description: "Scroll the page up or down, or scroll an element into view.", Parameters: schema(targetProps + `, "direction": {"type": "string", "enum": ["up", "down"]}`)},
	{Name: "wait", Description: "Wait for some milliseconds, or until a text appears.", Parameters: schema(`"millis": {"type": "integer"}, "text": {"type": "string"}`)},
	{Name: "navigate", Description: "Load a URL.", Parameters: schema(`"url": {"type": "string"}`, "url")},
	{Name: "back", Description: "Go back to the previous page.", Parameters: schema(``)},
	{Name: ToolFinish, Description: "End the task: say what was achieved and whether the goal was met (success: true only when it was).", Parameters: schema(`"answer": {"type": "string"}, "success": {"type": "boolean", "description": "true when the goal was met; leaving it out means it was not"}`, "answer", "success")},
}

// call is a parsed tool call.
type call struct {
	Kind    engine.ActionKind
	Ref     string
	Element string // name to resolve when Ref is empty
	Value   string
	Millis  int
	// Finish.
	Finish  bool
	Answer  string
	Success bool // the model said success: true
	Stated  bool // the model said success at all
}

// args are the union of every tool's arguments.
type args struct {
	Ref       *string `json:"ref"`
	Element   *string `json:"element"`
	Text      *string `json:"text"`
	Key       *string `json:"key"`
	Option    *string `json:"option"`
	Direction *string `json:"direction"`
	Millis    *int    `json:"millis"`
	URL       *string `json:"url"`
	Answer    *string `json:"answer"`
	Success   *bool   `json:"success"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(*p)
}

// toolError is a tool call the engine could not run: an unknown tool or
// malformed arguments. It is told to the model and counted as an error.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

// parseCall turns a model's tool call into a call, or says what is wrong
// with it in words the model can act on.
func parseCall(tc engine.ToolCall) (call, error) {
	name := strings.ToLower(strings.TrimSpace(tc.Name))
	known := false
	for _, t := range Tools {
		if t.Name == name {
			known = true
		}
	}
	if !known {
		names := make([]string, len(Tools))
		for i, t := range Tools {
			names[i] = t.Name
		}
		return call{}, &toolError{fmt.Sprintf("unknown tool %q: call one of %s", tc.Name, strings.Join(names, ", "))}
	}
	if n := len(tc.Arguments); n > MaxToolArgs {
		return call{}, tooLong(name, n)
	}
	var a args
	raw := strings.TrimSpace(tc.Arguments)
	if raw == "" {
		raw = "{}"
	}
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return call{}, &toolError{fmt.Sprintf("malformed arguments for %s: %v (arguments must be a JSON object)", name, err)}
	}
	c := call{Kind: engine.ActionKind(name), Ref: str(a.Ref), Element: str(a.Element)}
	needTarget := func() error {
		if c.Ref == "" && c.Element == "" {
			return &toolError{fmt.Sprintf("%s needs a ref (or an element name)", name)}
		}
		return nil
	}
	need := func(field string, p *string) error {
		if p == nil || strings.TrimSpace(*p) == "" {
			return &toolError{fmt.Sprintf("%s needs %q", name, field)}
		}
		return nil
	}
	var err error
	switch name {
	case ToolFinish:
		if a.Answer == nil {
			return call{}, &toolError{`finish needs "answer"`}
		}
		// Success must be stated: a finish without success: true is not a
		// success (small models leave optional arguments out).
		c = call{Finish: true, Answer: strings.TrimSpace(*a.Answer), Success: a.Success != nil && *a.Success, Stated: a.Success != nil}
	case "click", "hover":
		err = needTarget()
	case "fill", "type":
		if err = needTarget(); err == nil {
			if a.Text == nil {
				err = &toolError{fmt.Sprintf("%s needs \"text\"", name)}
			} else {
				c.Value = *a.Text
			}
		}
	case "press":
		if err = need("key", a.Key); err == nil {
			c.Value = str(a.Key)
		}
	case "select":
		if err = needTarget(); err == nil {
			if err = need("option", a.Option); err == nil {
				c.Value = str(a.Option)
			}
		}
	case "scroll":
		c.Value = str(a.Direction)
		if c.Value == "" && c.Ref == "" && c.Element == "" {
			c.Value = "down"
		}
	case "wait":
		c.Value = str(a.Text)
		if a.Millis != nil {
			c.Millis = *a.Millis
		}
		if c.Value == "" && c.Millis <= 0 {
			c.Millis = 1000
		}
	case "navigate":
		if err = need("url", a.URL); err == nil {
			c.Value = str(a.URL)
		}
	}
	if err != nil {
		return call{}, err
	}
	return c, nil
}
