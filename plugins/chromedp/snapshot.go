package chromedp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	dp "github.com/chromedp/chromedp"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/plugins/shared"
)

// actionableRoles are the roles a user can act on; each such node gets a ref.
var actionableRoles = map[string]bool{
	"button": true, "link": true, "textbox": true, "searchbox": true, "checkbox": true,
	"radio": true, "combobox": true, "listbox": true, "option": true, "menuitem": true,
	"menuitemcheckbox": true, "menuitemradio": true, "tab": true, "switch": true,
	"slider": true, "spinbutton": true, "treeitem": true, "textField": true,
	"PopUpButton": true, "ToggleButton": true, "DisclosureTriangle": true,
}

// transparentRoles are rendered through: their children take their place.
var transparentRoles = map[string]bool{
	"generic": true, "none": true, "presentation": true, "GenericContainer": true,
	"RootWebArea": true, "WebArea": true, "Section": true, "LayoutTable": true,
	"LayoutTableRow": true, "LayoutTableCell": true, "Pre": true, "Div": true,
}

// skippedRoles are left out with their subtrees.
var skippedRoles = map[string]bool{"InlineTextBox": true, "LineBreak": true}

// axValue decodes an AX value's JSON into a string.
func axValue(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s any
	if err := json.Unmarshal([]byte(v.Value), &s); err != nil {
		return ""
	}
	switch x := s.(type) {
	case string:
		return x
	case bool, float64:
		return fmt.Sprint(x)
	}
	return ""
}

// states lists the node's user-visible states.
func states(n *accessibility.Node) []string {
	var out []string
	for _, p := range n.Properties {
		v := axValue(p.Value)
		switch p.Name {
		case "focused", "disabled", "selected", "required", "readonly", "modal", "busy":
			if v == "true" {
				out = append(out, string(p.Name))
			}
		case "checked", "pressed":
			switch v {
			case "true":
				out = append(out, string(p.Name))
			case "mixed":
				out = append(out, string(p.Name)+"=mixed")
			}
		case "expanded":
			if v == "true" {
				out = append(out, "expanded")
			} else if v == "false" {
				out = append(out, "collapsed")
			}
		case "invalid":
			if v != "" && v != "false" {
				out = append(out, "invalid")
			}
		}
	}
	return out
}

func focusable(n *accessibility.Node) bool {
	for _, p := range n.Properties {
		if p.Name == "focusable" && axValue(p.Value) == "true" {
			return true
		}
	}
	return false
}

// axTree is the accessibility tree of a page, its iframes spliced in.
type axTree struct {
	nodes map[accessibility.NodeID]*accessibility.Node
	// frames maps an iframe element's backend id to the root of its
	// document's tree.
	frames map[cdp.BackendNodeID]*accessibility.Node
}

func (t *axTree) add(nodes []*accessibility.Node) *accessibility.Node {
	var root *accessibility.Node
	for _, n := range nodes {
		t.nodes[n.NodeID] = n
		if root == nil && n.ParentID == "" {
			root = n
		}
	}
	return root
}

// fetchTree reads the main frame's tree and each child frame's (same-origin
// frames only: a cross-site frame runs in another process and is skipped).
func fetchTree(ctx context.Context) (*axTree, *accessibility.Node, *cdp.Frame, error) {
	ft, err := dp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("chromedp: frame tree: %w", err)
	}
	res, err := dp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("chromedp: accessibility tree: %w", err)
	}
	t := &axTree{nodes: map[accessibility.NodeID]*accessibility.Node{}, frames: map[cdp.BackendNodeID]*accessibility.Node{}}
	root := t.add(res.Nodes)
	var walk func(children []*page.FrameTree)
	walk = func(children []*page.FrameTree) {
		for _, c := range children {
			owner, err := dp.Call(ctx, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: c.Frame.ID})
			if err == nil {
				if sub, err := dp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{FrameID: c.Frame.ID}); err == nil && len(sub.Nodes) > 0 {
					// Node ids are per frame: keep each frame's apart.
					st := &axTree{nodes: t.nodes, frames: t.frames}
					for _, n := range sub.Nodes {
						n.NodeID = accessibility.NodeID(string(c.Frame.ID) + ":" + string(n.NodeID))
						if n.ParentID != "" {
							n.ParentID = accessibility.NodeID(string(c.Frame.ID) + ":" + string(n.ParentID))
						}
						for i, id := range n.ChildIDs {
							n.ChildIDs[i] = accessibility.NodeID(string(c.Frame.ID) + ":" + string(id))
						}
					}
					if r := st.add(sub.Nodes); r != nil {
						t.frames[owner.BackendNodeID] = r
					}
				}
			}
			walk(c.ChildFrames)
		}
	}
	walk(ft.FrameTree.ChildFrames)
	if root == nil {
		return nil, nil, nil, fmt.Errorf("chromedp: accessibility tree has no root")
	}
	return t, root, ft.FrameTree.Frame, nil
}

// renderer turns the tree into the snapshot's tree text, elements and text
// (shared.SnapshotWriter).
type renderer struct {
	*shared.SnapshotWriter
	t    *axTree
	ids  []cdp.BackendNodeID
	seen map[cdp.BackendNodeID]bool
	// secret holds the backend ids of the page's secret fields; with
	// unknown set (they could not be read) no field's value is shown.
	secret  map[cdp.BackendNodeID]bool
	unknown bool
}

func (r *renderer) walk(n *accessibility.Node, depth int, parentName string) {
	if n == nil {
		return
	}
	role := axValue(n.Role)
	if skippedRoles[role] {
		return
	}
	name := strings.TrimSpace(axValue(n.Name))
	children := func(d int, pname string) {
		for _, id := range n.ChildIDs {
			r.walk(r.t.nodes[id], d, pname)
		}
		if sub, ok := r.t.frames[n.BackendDOMNodeID]; ok && n.BackendDOMNodeID != 0 {
			r.walk(sub, d, pname)
		}
	}
	if n.Ignored {
		children(depth, parentName)
		return
	}
	if role == "StaticText" {
		r.Text(name)
		if name != "" && !strings.Contains(parentName, name) {
			r.Line(depth, "- text "+shared.Quote(name))
		}
		return
	}
	// Anything focusable is actionable too (a div with tabindex and a click
	// handler is a button to the user), except documents and frames.
	actionable := n.BackendDOMNodeID != 0 && (actionableRoles[role] ||
		(focusable(n) && role != "RootWebArea" && role != "WebArea" && role != "Iframe" && role != "iframe"))
	secret := n.BackendDOMNodeID != 0 && r.secret[n.BackendDOMNodeID]
	if secret {
		// Its value is never reported: not as its value, its name or the
		// text inside it.
		r.secretNode(n, depth, role, name)
		return
	}
	if actionable && name == "" {
		// Roles like generic take no name from their content; a user
		// still reads the text on them.
		name = r.innerText(n, 100)
	}
	if !actionable && transparentRoles[role] && (name == "" || role == "RootWebArea" || role == "WebArea") {
		children(depth, parentName)
		return
	}
	var el *engine.Element
	if actionable && !r.seen[n.BackendDOMNodeID] {
		r.seen[n.BackendDOMNodeID] = true
		el = &engine.Element{Ref: fmt.Sprintf("e%d", n.BackendDOMNodeID), Role: role, Name: name, Value: axValue(n.Value), States: states(n)}
		if r.unknown && textRoles[role] {
			el.Value = ""
		}
		r.ids = append(r.ids, n.BackendDOMNodeID)
	}
	r.Node(depth, role, name, el)
	if r.unknown && textRoles[role] {
		return // its text is its value
	}
	children(depth+1, name+"\n"+axValue(n.Value))
}

// textRoles are the roles of fields whose value is typed text.
var textRoles = map[string]bool{"textbox": true, "searchbox": true, "combobox": true, "textField": true, "spinbutton": true}

// stateFilled marks a secret field that holds a value (never shown).
const stateFilled = "filled"

// secretNode renders a secret field: marked engine.StateSecret (and
// "filled" when it holds a value), without its value or anything inside.
func (r *renderer) secretNode(n *accessibility.Node, depth int, role, name string) {
	if n.Ignored {
		return
	}
	var el *engine.Element
	if !r.seen[n.BackendDOMNodeID] {
		r.seen[n.BackendDOMNodeID] = true
		el = &engine.Element{Ref: fmt.Sprintf("e%d", n.BackendDOMNodeID), Role: role, Name: name, States: states(n)}
		if axValue(n.Value) != "" {
			el.States = append(el.States, stateFilled)
		}
		el.States = append(el.States, engine.StateSecret)
		r.ids = append(r.ids, n.BackendDOMNodeID)
	}
	r.Node(depth, role, name, el)
}

// innerText joins the static text under n, up to max bytes.
func (r *renderer) innerText(n *accessibility.Node, max int) string {
	var parts []string
	size := 0
	var walk func(*accessibility.Node)
	walk = func(n *accessibility.Node) {
		if n == nil || size > max {
			return
		}
		if axValue(n.Role) == "StaticText" {
			if t := strings.TrimSpace(axValue(n.Name)); t != "" {
				parts = append(parts, t)
				size += len(t) + 1
			}
			return
		}
		for _, id := range n.ChildIDs {
			walk(r.t.nodes[id])
		}
	}
	walk(n)
	s := strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
	if len(s) > max {
		s = s[:max]
	}
	return s
}

// Snapshot implements engine.Browser.
func (b *Browser) Snapshot(ctx context.Context) (*engine.Snapshot, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cctx, cancel, err := b.callCtx(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	t, root, frame, err := fetchTree(cctx)
	if err != nil {
		return nil, err
	}
	title, err := dp.Run(cctx, dp.Title())
	if err != nil {
		return nil, fmt.Errorf("chromedp: title: %w", err)
	}
	secret, err := secretFields(cctx)
	r := &renderer{SnapshotWriter: shared.NewSnapshotWriter(b.bounds), t: t, seen: map[cdp.BackendNodeID]bool{}, secret: secret, unknown: err != nil}
	for _, d := range b.takeDialogs() {
		r.Text(d)
	}
	r.walk(root, 0, "")
	for _, id := range r.ids {
		b.refs[id] = frame.LoaderID
	}
	return r.Snapshot(frame.URL+frame.URLFragment, title), nil
}
