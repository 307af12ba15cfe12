package chromedp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	dp "github.com/chromedp/chromedp"

	"github.com/engine-dev/engine/engine/trust/redact"
)

// Secret fields: inputs whose value is a secret (redact.SecretField on the
// input's type, autocomplete, name, id, labels, aria-label, placeholder and
// title). A snapshot marks them engine.StateSecret and never reports their
// value; a screenshot hides their text while it is taken.
//
// The page is read with one JavaScript evaluation that lists the text
// fields of the document, its open shadow roots and its same-origin frames
// (their attributes, by value) and keeps the elements on the page under a
// symbol; the Go side decides which are secret, so the rule is
// redact.SecretField's alone. Only when some are does a second evaluation
// hand those elements back, to learn their backend node ids (the refs).

// fieldsKey is where the listed fields wait for the second evaluation.
const fieldsKey = `Symbol.for("engine.fields")`

// jsFields lists the page's text fields as [type, autocomplete, words].
const jsFields = `(() => {
	const skip = new Set(["checkbox","radio","submit","button","reset","image","hidden","file","range","color"]);
	const els = [], out = [];
	const text = (e) => (e && e.textContent || "").replace(/\s+/g, " ").trim();
	const visit = (root) => {
		for (const e of root.querySelectorAll("input,textarea")) {
			const type = e.tagName === "TEXTAREA" ? "textarea" : (e.getAttribute("type") || "text").toLowerCase();
			if (skip.has(type)) continue;
			const words = [e.getAttribute("name"), e.id, e.getAttribute("aria-label"), e.getAttribute("placeholder"), e.getAttribute("title")];
			for (const l of e.labels || []) words.push(text(l));
			for (const id of (e.getAttribute("aria-labelledby") || "").split(/\s+/)) {
				if (id) words.push(text(root.getElementById ? root.getElementById(id) : null));
			}
			els.push(e);
			out.push([type, e.getAttribute("autocomplete") || "", words.filter(Boolean).join(" ")]);
		}
		for (const e of root.querySelectorAll("*")) {
			if (e.shadowRoot) visit(e.shadowRoot);
			if (e.tagName === "IFRAME" || e.tagName === "FRAME") {
				let d = null;
				try { d = e.contentDocument } catch (_) {}
				if (d) visit(d);
			}
		}
	};
	visit(document);
	globalThis[` + fieldsKey + `] = els;
	return out;
})()`

// secretIndexes lists the page's fields and returns the positions of the
// secret ones in globalThis[fieldsKey].
func secretIndexes(ctx context.Context) ([]int, error) {
	var fields [][3]string
	if err := evalValue(ctx, jsFields, &fields); err != nil {
		return nil, fmt.Errorf("chromedp: secret fields: %w", err)
	}
	var idx []int
	for i, f := range fields {
		if redact.SecretField(f[0], f[1], f[2]) {
			idx = append(idx, i)
		}
	}
	return idx, nil
}

// secretFields returns the backend node ids of the page's secret fields.
func secretFields(ctx context.Context) (map[cdp.BackendNodeID]bool, error) {
	idx, err := secretIndexes(ctx)
	if err != nil || len(idx) == 0 {
		return nil, err
	}
	list, _ := json.Marshal(idx)
	const group = "engine-secret"
	defer func() {
		_, _ = dp.Call(ctx, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: group})
	}()
	res, err := dp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{
		Expression: fmt.Sprintf(`%s.map(i => globalThis[%s][i])`, list, fieldsKey), ObjectGroup: group})
	if err == nil && res.ExceptionDetails != nil {
		err = fmt.Errorf("javascript: %s", res.ExceptionDetails.Text)
	}
	if err == nil && (res.Result == nil || res.Result.ObjectID == "") {
		err = fmt.Errorf("no fields came back")
	}
	if err != nil {
		return nil, fmt.Errorf("chromedp: secret fields: %w", err)
	}
	props, err := dp.Call(ctx, runtime.GetProperties, runtime.GetPropertiesParams{ObjectID: res.Result.ObjectID, OwnProperties: new(true)})
	if err != nil {
		return nil, fmt.Errorf("chromedp: secret fields: %w", err)
	}
	out := map[cdp.BackendNodeID]bool{}
	for _, p := range props.Result {
		if p.Value == nil || p.Value.ObjectID == "" || p.Value.Subtype != "node" {
			continue
		}
		n, err := dp.Call(ctx, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: p.Value.ObjectID})
		if err != nil {
			return nil, fmt.Errorf("chromedp: secret fields: %w", err)
		}
		if n.Node != nil {
			out[n.Node.BackendNodeID] = true
		}
	}
	return out, nil
}

// maskStyle hides a field's text and caret (inline, !important: it wins
// over the page's own styles, in shadow roots and frames too).
const maskStyle = `color: transparent !important; -webkit-text-fill-color: transparent !important; text-shadow: none !important; -webkit-text-security: disc !important; caret-color: transparent !important`

// jsMask hides the listed fields' text, remembering their own style
// attribute, and resolves once the page has painted without it.
const jsMask = `((idx) => {
	const els = globalThis[` + fieldsKey + `] || [];
	const saved = [];
	for (const i of idx) {
		const e = els[i];
		if (!e) continue;
		saved.push([e, e.getAttribute("style")]);
		e.setAttribute("style", (e.getAttribute("style") || "") + ";" + %q);
	}
	globalThis[Symbol.for("engine.masked")] = saved;
	return new Promise(done => {
		const t = setTimeout(() => done(saved.length), 200);
		requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(t); done(saved.length) }));
	});
})(%s)`

// jsUnmask puts the masked fields' style attributes back.
const jsUnmask = `(() => {
	const k = Symbol.for("engine.masked");
	for (const [e, s] of globalThis[k] || []) {
		if (s === null) e.removeAttribute("style"); else e.setAttribute("style", s);
	}
	delete globalThis[k];
	return true;
})()`

// maskSecrets hides the text of the page's secret fields for a screenshot;
// the returned func shows it again. A page that cannot be read (it is
// being swapped) is captured as it is: there is nothing typed on it yet.
func maskSecrets(ctx context.Context) func() {
	idx, err := secretIndexes(ctx)
	if err != nil || len(idx) == 0 {
		return func() {}
	}
	list, _ := json.Marshal(idx)
	var n int
	_ = evalValue(ctx, fmt.Sprintf(jsMask, maskStyle, list), &n)
	return func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		var ok bool
		_ = evalValue(uctx, jsUnmask, &ok)
	}
}

// evalValue evaluates expr in the page's main frame (awaiting a promise)
// and decodes its value into out.
func evalValue(ctx context.Context, expr string, out any) error {
	r, err := dp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ReturnByValue: new(true), AwaitPromise: new(true)})
	if err != nil {
		return err
	}
	if exc := r.ExceptionDetails; exc != nil {
		msg := exc.Text
		if exc.Exception != nil && exc.Exception.Description != "" {
			msg = exc.Exception.Description
		}
		return fmt.Errorf("javascript: %s", strings.TrimSpace(msg))
	}
	res := r.Result
	if res == nil || len(res.Value) == 0 {
		return nil
	}
	return json.Unmarshal([]byte(res.Value), out)
}
