// Package fingerprint computes structural fingerprints of a page from its
// snapshot, so a memory can record what it was checked against and a later
// failure can say how the page changed.
//
// A snapshot lists the elements a user could act on, in document order,
// each with a role, an accessible name, a value and states. Two
// fingerprints are read from it:
//
//   - Element(els, i): the element's role and name, the roles of the K
//     elements before and after it, and the role and name of the nearest
//     preceding heading- or landmark-like element (heading, banner,
//     navigation, main, search, form, region, dialog, tablist, menubar,
//     toolbar). It changes when the element is renamed or moved among other
//     kinds of elements; it does not change when its neighbours are renamed
//     (a new product list beside a search button keeps the button's).
//   - Page(els): the sorted set of (role, name) of every element. It
//     changes when an element appears, goes or is renamed; not when the
//     page shows them in another order or shows one several times.
//
// Values and states are left out of both (what was typed, what is checked
// or focused is not the page's structure), roles are lower-cased and names
// compared with spaces collapsed and case folded. A fingerprint is the
// high 32 bits of a 64-bit FNV-1a hash, as 8 hex digits: short enough for
// a reason line, and a collision only hides a change.
package fingerprint

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engine-dev/engine/engine"
)

// K is how many elements on each side of an element its fingerprint
// takes the roles of.
const K = 2

// anchors are the roles that head a part of a page: the nearest preceding
// one names the part an element is in.
var anchors = map[string]bool{
	"heading": true, "banner": true, "navigation": true, "main": true, "search": true, "form": true,
	"region": true, "dialog": true, "alertdialog": true, "tablist": true, "menubar": true, "toolbar": true,
	"complementary": true, "contentinfo": true,
}

func role(e engine.Element) string { return strings.ToLower(strings.TrimSpace(e.Role)) }

func name(e engine.Element) string { return strings.ToLower(strings.Join(strings.Fields(e.Name), " ")) }

// FNV-1a, 64 bits, inline: no hasher to allocate per element.
const (
	offset64 = 14695981039346656037
	prime64  = 1099511628211
)

func add(h uint64, b byte) uint64 { return (h ^ uint64(b)) * prime64 }

// addNorm adds s to h as role and name are compared: spaces trimmed and
// collapsed to one, letters lower-cased; then a 0 byte ends it.
func addNorm(h uint64, s string) uint64 {
	space := false
	started := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = started
			continue
		}
		if space {
			h = add(h, ' ')
			space = false
		}
		started = true
		r = unicode.ToLower(r)
		if r < utf8.RuneSelf {
			h = add(h, byte(r))
			continue
		}
		var buf [utf8.UTFMax]byte
		for _, b := range buf[:utf8.EncodeRune(buf[:], r)] {
			h = add(h, b)
		}
	}
	return add(h, 0)
}

func short(h uint64) string { return fmt.Sprintf("%08x", uint32(h>>32)) }

// Element returns the fingerprint of els[i] (see the package comment), or
// "" when i is out of range.
func Element(els []engine.Element, i int) string {
	if i < 0 || i >= len(els) {
		return ""
	}
	h := addNorm(addNorm(offset64, els[i].Role), els[i].Name)
	for j := i - K; j <= i+K; j++ {
		switch {
		case j == i:
			h = add(add(h, '|'), 0)
		case j < 0 || j >= len(els):
			h = add(add(h, '-'), 0)
		default:
			h = addNorm(h, els[j].Role)
		}
	}
	for j := i - 1; j >= 0; j-- {
		if anchors[role(els[j])] {
			h = addNorm(addNorm(h, els[j].Role), els[j].Name)
			break
		}
	}
	return short(h)
}

// Page returns the fingerprint of a page's elements (see the package
// comment); "" for a page without any. The set is hashed as the sorted,
// distinct hashes of its (role, name) pairs.
func Page(els []engine.Element) string {
	if len(els) == 0 {
		return ""
	}
	set := make([]uint64, len(els))
	for i, e := range els {
		set[i] = addNorm(addNorm(offset64, e.Role), e.Name)
	}
	slices.Sort(set)
	h := uint64(offset64)
	for i, x := range set {
		if i > 0 && x == set[i-1] {
			continue
		}
		for k := range 8 {
			h = add(h, byte(x>>(8*k)))
		}
	}
	return short(h)
}

// Find returns the index of the first element with role (case aside) and
// name (spaces collapsed, case aside), or -1.
func Find(els []engine.Element, r, n string) int {
	r, n = strings.ToLower(strings.TrimSpace(r)), strings.ToLower(strings.Join(strings.Fields(n), " "))
	for i, e := range els {
		if role(e) == r && name(e) == n {
			return i
		}
	}
	return -1
}

// Of returns what els[i] (i < 0: no element) on the page at path is
// checked against now.
func Of(path string, els []engine.Element, i int) engine.Checked {
	return engine.Checked{Path: path, Fingerprint: Element(els, i), Page: Page(els)}
}

// Change says how the page now (path, els) differs from what a memory of
// the element role+name was checked against (was; empty fingerprints, from
// a record older than fingerprints, compare as unknown), or "" when no
// difference shows:
//
//   - "the element is gone from /search" when no element has its role and
//     name (with the page's change, when its fingerprint was recorded);
//   - "the element moved: its surroundings changed (fingerprint a → b)"
//     when it is there but its neighbourhood is not the recorded one;
//   - "the page changed: fingerprint a → b" when only the page's elements
//     changed.
func Change(was engine.Checked, path string, els []engine.Element, r, n string) string {
	page := Page(els)
	pageChanged := ""
	if was.Page != "" && was.Page != page {
		pageChanged = fmt.Sprintf("the page changed: fingerprint %s → %s", was.Page, page)
	}
	i := -1
	if r != "" || n != "" {
		i = Find(els, r, n)
		if i < 0 {
			s := "the element is gone from " + orRoot(path)
			if pageChanged != "" {
				s += "; " + pageChanged
			}
			return s
		}
		return Compare(was, engine.Checked{Path: path, Fingerprint: Element(els, i), Page: page})
	}
	return pageChanged
}

// Compare says how now differs from was, for an element found on both
// (see Change): "the element moved: …", "the page changed: …", or "" when
// no recorded fingerprint differs.
func Compare(was, now engine.Checked) string {
	switch {
	case was.Fingerprint != "" && now.Fingerprint != "" && was.Fingerprint != now.Fingerprint:
		return fmt.Sprintf("the element moved: its surroundings changed (fingerprint %s → %s)", was.Fingerprint, now.Fingerprint)
	case was.Page != "" && now.Page != "" && was.Page != now.Page:
		return fmt.Sprintf("the page changed: fingerprint %s → %s", was.Page, now.Page)
	}
	return ""
}

func orRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}
