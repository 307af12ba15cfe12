package chromedp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	dp "github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/engine-dev/engine/engine"
)

func actionErr(code, format string, args ...any) error {
	return &engine.ActionError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Act implements engine.Browser.
func (b *Browser) Act(ctx context.Context, a engine.Action) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	cctx, cancel, err := b.callCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	switch a.Kind {
	case engine.ActNavigate:
		if a.Value == "" {
			return actionErr(engine.CodeInvalid, "navigate needs a URL")
		}
		return b.navigate(cctx, a.Value)
	case engine.ActBack:
		return b.back(cctx)
	case engine.ActWait:
		return b.wait(cctx, a)
	case engine.ActScroll:
		if a.Ref == "" {
			return b.scrollPage(cctx, a.Value)
		}
	case engine.ActPress:
		if a.Ref == "" {
			return b.press(cctx, a.Value)
		}
	case engine.ActClick, engine.ActFill, engine.ActType, engine.ActSelect, engine.ActHover:
		if a.Ref == "" {
			return actionErr(engine.CodeInvalid, "%s needs a ref", a.Kind)
		}
	default:
		return actionErr(engine.CodeInvalid, "unknown action %q", a.Kind)
	}

	el, err := b.resolve(cctx, a.Ref)
	if err != nil {
		return err
	}
	defer el.release(cctx)
	switch a.Kind {
	case engine.ActClick:
		return b.settle(cctx, func() error { return b.click(cctx, el, true) })
	case engine.ActHover:
		return b.click(cctx, el, false)
	case engine.ActFill:
		return b.fill(cctx, el, a.Value, true)
	case engine.ActType:
		return b.fill(cctx, el, a.Value, false)
	case engine.ActSelect:
		return b.selectOption(cctx, el, a.Value)
	case engine.ActScroll:
		if _, err := dp.Call(cctx, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: el.id}); err != nil {
			return actionErr(engine.CodeNotVisible, "element is not visible (it has no layout box)")
		}
		return nil
	case engine.ActPress:
		if _, err := dp.Call(cctx, dom.Focus, dom.FocusParams{BackendNodeID: el.id}); err != nil {
			return actionErr(engine.CodeNotEditable, "element cannot take focus")
		}
		return b.press(cctx, a.Value)
	}
	return nil
}

// element is a resolved ref.
type element struct {
	ref string
	id  cdp.BackendNodeID
	obj runtime.RemoteObjectID
}

func (e *element) release(ctx context.Context) {
	_, _ = dp.Call(ctx, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: e.obj})
}

func parseRef(ref string) (cdp.BackendNodeID, bool) {
	if !strings.HasPrefix(ref, "e") {
		return 0, false
	}
	n, err := strconv.ParseInt(ref[1:], 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return cdp.BackendNodeID(n), true
}

// resolve finds the live DOM node of a ref, or says why it cannot.
func (b *Browser) resolve(ctx context.Context, ref string) (*element, error) {
	id, ok := parseRef(ref)
	if !ok {
		return nil, actionErr(engine.CodeInvalid, "%q is not a snapshot ref (refs look like e37)", ref)
	}
	loader, seen := b.refs[id]
	if !seen {
		return nil, actionErr(engine.CodeNotFound, "no element has ref %s (take a snapshot and use one of its refs)", ref)
	}
	ft, err := dp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, fmt.Errorf("chromedp: frame tree: %w", err)
	}
	if ft.FrameTree.Frame.LoaderID != loader {
		return nil, actionErr(engine.CodeStaleRef, "stale ref %s: it is from an earlier page (the page changed since that snapshot); take a new snapshot", ref)
	}
	res, err := dp.Call(ctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: id})
	if err != nil || res.Object == nil || res.Object.ObjectID == "" {
		return nil, actionErr(engine.CodeStaleRef, "stale ref %s: the element is no longer in the page; take a new snapshot", ref)
	}
	el := &element{ref: ref, id: id, obj: res.Object.ObjectID}
	var connected bool
	if err := callOn(ctx, el.obj, `function(){ return this.isConnected }`, &connected); err != nil || !connected {
		el.release(ctx)
		return nil, actionErr(engine.CodeStaleRef, "stale ref %s: the element was removed from the page; take a new snapshot", ref)
	}
	return el, nil
}

// callOn calls a JavaScript function with this = obj and the given
// arguments (object ids or JSON values), decoding the result into out.
func callOn(ctx context.Context, obj runtime.RemoteObjectID, fn string, out any, args ...any) error {
	p := runtime.CallFunctionOnParams{FunctionDeclaration: fn, ObjectID: obj, ReturnByValue: new(true), AwaitPromise: new(true)}
	for _, a := range args {
		switch v := a.(type) {
		case runtime.RemoteObjectID:
			p.Arguments = append(p.Arguments, &runtime.CallArgument{ObjectID: v})
		default:
			raw, err := json.Marshal(v)
			if err != nil {
				return err
			}
			p.Arguments = append(p.Arguments, &runtime.CallArgument{Value: jsonv2.Value(raw)})
		}
	}
	res, err := dp.Call(ctx, runtime.CallFunctionOn, p)
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		msg := res.ExceptionDetails.Text
		if res.ExceptionDetails.Exception != nil && res.ExceptionDetails.Exception.Description != "" {
			msg = res.ExceptionDetails.Exception.Description
		}
		return errors.New("javascript: " + msg)
	}
	if out == nil || res.Result == nil || len(res.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal([]byte(res.Result.Value), out)
}

const jsContains = `function(h){
	for (let n = h; n; n = n.parentNode || n.host || (n.defaultView && n.defaultView.frameElement)) {
		if (n === this) return true;
	}
	const l = h.closest && h.closest('label');
	if (l && l.control === this) return true;
	return false;
}`

const jsDescribe = `function(){
	let e = this.nodeType === 3 ? this.parentElement : this;
	if (!e || !e.tagName) return 'a ' + (this.nodeName || 'node').toLowerCase();
	let s = e.tagName.toLowerCase();
	if (e.id) s += '#' + e.id;
	if (typeof e.className === 'string' && e.className.trim()) s += '.' + e.className.trim().split(/\s+/).slice(0, 3).join('.');
	const t = (e.innerText || e.textContent || '').trim().replace(/\s+/g, ' ');
	if (t) s += ' "' + (t.length > 60 ? t.slice(0, 57) + '...' : t) + '"';
	return s;
}`

// click scrolls el into view, checks that the click point hits el (or
// something inside it), and presses the mouse there; with press false it
// only moves the mouse there (hover).
func (b *Browser) click(ctx context.Context, el *element, press bool) error {
	var disabled bool
	if press {
		_ = callOn(ctx, el.obj, `function(){ return !!(this.disabled || this.getAttribute && this.getAttribute('aria-disabled') === 'true') }`, &disabled)
		if disabled {
			return actionErr(engine.CodeNotVisible, "element is disabled")
		}
	}
	if _, err := dp.Call(ctx, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: el.id}); err != nil {
		return actionErr(engine.CodeNotVisible, "element is not visible (it has no layout box)")
	}
	box, err := dp.Call(ctx, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: el.id})
	if err != nil || box.Model == nil || len(box.Model.Border) < 8 {
		return actionErr(engine.CodeNotVisible, "element is not visible (it has no layout box)")
	}
	if box.Model.Width == 0 || box.Model.Height == 0 {
		return actionErr(engine.CodeNotVisible, "element is not visible (its box is empty)")
	}
	q := box.Model.Border
	x := (q[0] + q[2] + q[4] + q[6]) / 4
	y := (q[1] + q[3] + q[5] + q[7]) / 4
	desc, err := b.hitTest(ctx, el, x, y)
	if err != nil {
		return err
	}
	if desc != "" {
		verb := "click"
		if !press {
			verb = "hover"
		}
		return actionErr(engine.CodeIntercepted, "another element would receive the %s: %s", verb, desc)
	}
	mouse := func(typ input.DispatchMouseEventType, buttons int64) error {
		p := input.DispatchMouseEventParams{Type: typ, X: x, Y: y}
		if buttons >= 0 {
			p.Button = input.MouseButtonLeft
			p.Buttons = buttons
			p.ClickCount = 1
		}
		_, err := dp.Call(ctx, input.DispatchMouseEvent, p)
		return err
	}
	if err := mouse(input.DispatchMouseEventTypeMouseMoved, -1); err != nil {
		return err
	}
	if !press {
		return nil
	}
	if err := mouse(input.DispatchMouseEventTypeMousePressed, 1); err != nil {
		return err
	}
	return mouse(input.DispatchMouseEventTypeMouseReleased, 0)
}

// settle runs an action that may start a navigation and, if one starts
// within a short grace period, waits for it to finish loading.
func (b *Browser) settle(ctx context.Context, action func() error) error {
	started := make(chan struct{}, 1)
	stopped := make(chan struct{}, 1)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	main := b.mainFrame
	_ = dp.Listen(lctx, func(ev any) {
		switch ev := ev.(type) {
		case *page.EventFrameStartedLoading:
			if ev.FrameID == main {
				select {
				case started <- struct{}{}:
				default:
				}
			}
		case *page.EventFrameStoppedLoading:
			if ev.FrameID == main {
				select {
				case stopped <- struct{}{}:
				default:
				}
			}
		}
	})
	if err := action(); err != nil {
		return err
	}
	select {
	case <-started:
	case <-time.After(150 * time.Millisecond):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-stopped:
		return nil
	case <-time.After(b.navTimeout):
		return actionErr(engine.CodeTimeout, "the page did not finish loading within %v after the action", b.navTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// jsHitTest is the hit test in the element's own document, for elements
// in iframes, where DOM.getNodeForLocation finds nothing: it returns "" when
// the element (or something inside it) is at its centre, else a
// description of what is.
const jsHitTest = `function(){
	const r = this.getBoundingClientRect();
	const x = r.left + r.width / 2, y = r.top + r.height / 2;
	let h = this.ownerDocument.elementFromPoint(x, y);
	while (h && h.shadowRoot) {
		const d = h.shadowRoot.elementFromPoint(x, y);
		if (!d || d === h) break;
		h = d;
	}
	if (!h) return 'nothing (the element is outside the viewport)';
	if ((` + jsContains + `).call(this, h)) return '';
	return (` + jsDescribe + `).call(h);
}`

// hitTest checks what the click point (x, y) hits: "" when it is el or
// inside it, else a description of the covering element.
func (b *Browser) hitTest(ctx context.Context, el *element, x, y float64) (string, error) {
	hit, err := dp.Call(ctx, dom.GetNodeForLocation, dom.GetNodeForLocationParams{X: int64(x), Y: int64(y), IgnorePointerEventsNone: new(false)})
	if err != nil {
		var desc string
		if err := callOn(ctx, el.obj, jsHitTest, &desc); err != nil {
			return "", fmt.Errorf("chromedp: hit test: %w", err)
		}
		return desc, nil
	}
	if hit.BackendNodeID == el.id {
		return "", nil
	}
	h, err := dp.Call(ctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: hit.BackendNodeID})
	if err != nil || h.Object == nil {
		return "", nil
	}
	defer func() {
		_, _ = dp.Call(ctx, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: h.Object.ObjectID})
	}()
	var inside bool
	if err := callOn(ctx, el.obj, jsContains, &inside, h.Object.ObjectID); err != nil {
		return "", fmt.Errorf("chromedp: hit test: %w", err)
	}
	if inside {
		return "", nil
	}
	// DOM.getNodeForLocation sometimes answers for another point of a
	// scrolled page than the one the mouse goes to (an element a scroll's
	// height away): the page's own hit test at the element's centre has
	// the last word when it finds the element there.
	var own string
	if err := callOn(ctx, el.obj, jsHitTest, &own); err == nil && own == "" {
		return "", nil
	}
	var desc string
	_ = callOn(ctx, h.Object.ObjectID, jsDescribe, &desc)
	return desc, nil
}

const jsEditable = `function(){
	if (this.disabled) return 'disabled';
	if (this.tagName === 'INPUT') {
		const t = (this.type || 'text').toLowerCase();
		if (['checkbox','radio','submit','button','image','reset','file','hidden','range','color'].includes(t)) return 'input-' + t;
		return this.readOnly ? 'readonly' : 'ok';
	}
	if (this.tagName === 'TEXTAREA') return this.readOnly ? 'readonly' : 'ok';
	if (this.isContentEditable) return 'ok';
	if (this.tagName === 'SELECT') return 'select';
	return 'no';
}`

// fill replaces (replace true) or extends the text of an input.
func (b *Browser) fill(ctx context.Context, el *element, text string, replace bool) error {
	var kind string
	if err := callOn(ctx, el.obj, jsEditable, &kind); err != nil {
		return fmt.Errorf("chromedp: %w", err)
	}
	switch {
	case kind == "ok":
	case kind == "disabled":
		return actionErr(engine.CodeNotEditable, "element is disabled")
	case kind == "readonly":
		return actionErr(engine.CodeNotEditable, "element is read-only")
	case kind == "select":
		return actionErr(engine.CodeNotEditable, "element is not an input (it is a <select>: use select)")
	case strings.HasPrefix(kind, "input-"):
		return actionErr(engine.CodeNotEditable, "element is not an input that takes text (it is a %s input)", strings.TrimPrefix(kind, "input-"))
	default:
		return actionErr(engine.CodeNotEditable, "element is not an input")
	}
	if _, err := dp.Call(ctx, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: el.id}); err != nil {
		return actionErr(engine.CodeNotVisible, "element is not visible (it has no layout box)")
	}
	if _, err := dp.Call(ctx, dom.Focus, dom.FocusParams{BackendNodeID: el.id}); err != nil {
		return actionErr(engine.CodeNotVisible, "element cannot take focus: %v", err)
	}
	if replace {
		// Select everything, so the inserted text replaces it.
		if err := callOn(ctx, el.obj, `function(){
			if (this.select) { this.select(); return; }
			const r = document.createRange(); r.selectNodeContents(this);
			const s = window.getSelection(); s.removeAllRanges(); s.addRange(r);
		}`, nil); err != nil {
			return fmt.Errorf("chromedp: %w", err)
		}
		if text == "" {
			return dp.Do(ctx, dp.KeyEvent(kb.Delete))
		}
		if _, err := dp.Call(ctx, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
			return err
		}
	} else {
		if err := callOn(ctx, el.obj, `function(){
			if (typeof this.selectionStart === 'number') { try { const n = this.value.length; this.setSelectionRange(n, n); } catch (e) {} return; }
			const r = document.createRange(); r.selectNodeContents(this); r.collapse(false);
			const s = window.getSelection(); s.removeAllRanges(); s.addRange(r);
		}`, nil); err != nil {
			return fmt.Errorf("chromedp: %w", err)
		}
		if err := dp.Do(ctx, dp.KeyEvent(text)); err != nil {
			return err
		}
	}
	// Pages listen for change as well as input.
	return callOn(ctx, el.obj, `function(){ this.dispatchEvent(new Event('change', {bubbles: true})) }`, nil)
}

func (b *Browser) selectOption(ctx context.Context, el *element, value string) error {
	var res struct {
		Err     string   `json:"err"`
		Options []string `json:"options"`
	}
	err := callOn(ctx, el.obj, `function(v){
		if (this.tagName !== 'SELECT') return {err: 'not_select'};
		if (this.disabled) return {err: 'disabled'};
		const opts = [...this.options];
		const o = opts.find(o => o.value === v) || opts.find(o => o.label === v) || opts.find(o => o.text.trim() === v.trim());
		if (!o) return {err: 'no_option', options: opts.map(o => o.label || o.text)};
		if (o.disabled) return {err: 'disabled_option'};
		this.value = o.value; o.selected = true;
		this.dispatchEvent(new Event('input', {bubbles: true}));
		this.dispatchEvent(new Event('change', {bubbles: true}));
		return {err: ''};
	}`, &res, value)
	if err != nil {
		return fmt.Errorf("chromedp: %w", err)
	}
	switch res.Err {
	case "":
		return nil
	case "not_select":
		return actionErr(engine.CodeNotEditable, "element is not a select (click it, then click the option)")
	case "disabled":
		return actionErr(engine.CodeNotEditable, "element is disabled")
	case "disabled_option":
		return actionErr(engine.CodeNoSuchOption, "option %q is disabled", value)
	}
	quoted := make([]string, len(res.Options))
	for i, o := range res.Options {
		quoted[i] = strconv.Quote(o)
	}
	return actionErr(engine.CodeNoSuchOption, "no option %q (options: %s)", value, strings.Join(quoted, ", "))
}

// keyNames maps DOM key names ("Enter", "ArrowDown") to chromedp's kb runes.
var keyNames = func() map[string]string {
	m := map[string]string{"Space": " ", "Esc": kb.Escape, "Return": kb.Enter}
	for r, k := range kb.Keys {
		if k.Key != "" && len([]rune(k.Key)) > 1 {
			if _, dup := m[k.Key]; !dup {
				m[k.Key] = string(r)
			}
		}
	}
	return m
}()

// press sends one key to the focused element. A single character is
// typed; longer names are DOM key names (Enter, Tab, Escape, ArrowDown…).
func (b *Browser) press(ctx context.Context, key string) error {
	var keys string
	switch {
	case key == "":
		return actionErr(engine.CodeInvalid, "press needs a key, such as Enter")
	case len([]rune(key)) == 1:
		keys = key
	default:
		k, ok := keyNames[key]
		if !ok {
			return actionErr(engine.CodeInvalid, "unknown key %q (use DOM key names: Enter, Tab, Escape, Backspace, ArrowDown, ...)", key)
		}
		keys = k
	}
	return b.settle(ctx, func() error { return dp.Do(ctx, dp.KeyEvent(keys)) })
}

func (b *Browser) scrollPage(ctx context.Context, dir string) error {
	sign := 1
	switch strings.ToLower(dir) {
	case "", "down":
	case "up":
		sign = -1
	default:
		return actionErr(engine.CodeInvalid, "scroll direction %q: use up or down, or give a ref to scroll to", dir)
	}
	_, err := dp.Run(ctx, dp.Evaluate[dp.Void](fmt.Sprintf(jsScrollBy, sign), dp.EvalAwaitPromise))
	return err
}

// jsScrollBy scrolls by most of a screen and resolves once the page has
// had the scroll event: it fires with the next frame, before that frame's
// animation callbacks, and pages that load more as they scroll (infinite
// lists) add it in their handler, so the next snapshot shows what the
// scroll brought. Asking for an animation frame makes the frame come (a
// page that changes nothing may get none for a long time); a page that
// renders no frames at all (a hidden tab) resolves after a second.
const jsScrollBy = `new Promise(done => {
	window.scrollBy(0, %d * Math.round(window.innerHeight * 0.8));
	requestAnimationFrame(() => done());
	setTimeout(done, 1000);
})`

func (b *Browser) wait(ctx context.Context, a engine.Action) error {
	d := time.Duration(a.Millis) * time.Millisecond
	if a.Value == "" {
		if d <= 0 {
			d = time.Second
		}
		if d > time.Minute {
			return actionErr(engine.CodeInvalid, "wait of %v is longer than a minute", d)
		}
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if d <= 0 {
		d = 5 * time.Second
	}
	deadline := time.Now().Add(d)
	for {
		var found bool
		found, err := dp.Run(ctx, dp.Evaluate[bool](fmt.Sprintf("document.body !== null && document.body.innerText.includes(%s)", strconv.Quote(a.Value))))
		if err == nil && found {
			return nil
		}
		if time.Now().After(deadline) {
			return actionErr(engine.CodeTimeout, "timed out after %v waiting for the text %q", d, a.Value)
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (b *Browser) back(ctx context.Context) error {
	h, err := dp.Call(ctx, page.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		return err
	}
	if h.CurrentIndex <= 0 {
		return actionErr(engine.CodeNavigation, "there is no previous page to go back to")
	}
	nctx, cancel := context.WithTimeout(ctx, b.navTimeout)
	defer cancel()
	if err := dp.Do(nctx, dp.NavigateToHistoryEntry(h.Entries[h.CurrentIndex-1].ID)); err != nil {
		if ctx.Err() == nil && nctx.Err() != nil {
			return actionErr(engine.CodeTimeout, "the previous page did not finish loading within %v", b.navTimeout)
		}
		return err
	}
	return nil
}
