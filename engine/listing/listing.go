// Package listing is the one page/cursor type every memory list shares:
// a Request (how many, after which cursor) and a Result (the items and the
// cursor of the next page).
//
// A cursor is opaque to callers: base64url of "<kind>:<position>", where
// <kind> names the list it belongs to ("lesson", "run", ...) and
// <position> is where the last returned item sits in that list's order
// (for an indexed list, the suffix of its index key). The next page starts
// strictly after that position, so a record whose position did not change
// is neither repeated nor skipped by writes between pages, even when the
// record the cursor names was changed or deleted meanwhile. A cursor of
// another list, or one that does not decode, is bad input
// (engine.ErrInvalid).
package listing

import (
	"encoding/base64"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/engine-dev/engine/engine"
)

// Page sizes.
const (
	// DefaultLimit is the page size of a Request whose Limit is 0.
	DefaultLimit = 50
	// MaxLimit is the largest page; a larger Limit is served MaxLimit
	// items (and a Next cursor when there are more).
	MaxLimit = 1000
)

// Request asks for one page: at most Limit items (0: DefaultLimit;
// capped at MaxLimit; negative is invalid) after Cursor ("" = from the
// first item).
type Request struct {
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// Size returns the number of items the request asks for, or an
// engine.ErrInvalid error for a negative Limit.
func (r Request) Size() (int, error) {
	switch {
	case r.Limit < 0:
		return 0, engine.Invalid("page", "limit is negative")
	case r.Limit == 0:
		return DefaultLimit, nil
	case r.Limit > MaxLimit:
		return MaxLimit, nil
	}
	return r.Limit, nil
}

// Result is one page: Items in list order and Next, the cursor of the
// page after it ("" when this is the last page).
type Result[T any] struct {
	Items []T    `json:"items"`
	Next  string `json:"next,omitempty"`
}

// Encode returns the cursor of position pos in list kind.
func Encode(kind, pos string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + pos))
}

// Decode returns the position a cursor of list kind holds: "" for an
// empty cursor (the first page), an engine.ErrInvalid error for a cursor
// that does not decode or belongs to another list. Stores check the
// position's own shape (CheckPosition) before they use it.
func Decode(kind, cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", engine.Invalid("cursor", "not a cursor this engine made (it does not decode)")
	}
	pos, ok := strings.CutPrefix(string(b), kind+":")
	if !ok || pos == "" {
		return "", engine.Invalid("cursor", "not a cursor of a "+kind+" list")
	}
	return pos, nil
}

// Open reads r for a list of kind: the page's size (Size) and the
// position it starts after ("" for the first page). A malformed cursor,
// one of another list, or one whose position valid refuses (nil: any) is
// an engine.ErrInvalid error.
func (r Request) Open(kind string, valid func(pos string) bool) (size int, after string, err error) {
	if size, err = r.Size(); err != nil {
		return 0, "", err
	}
	if after, err = Decode(kind, r.Cursor); err != nil {
		return 0, "", err
	}
	if after != "" && valid != nil && !valid(after) {
		return 0, "", Bad(kind)
	}
	return size, after, nil
}

// Bad is the error for a cursor of list kind whose position does not
// have the shape the list's positions have.
func Bad(kind string) error {
	return engine.Invalid("cursor", "not a cursor of a "+kind+" list (damaged position)")
}

// Slice pages a list already read whole and in order: items are in list
// order and pos renders an item's position so that positions compare (as
// strings) in that order, each position unique. It is how lists without
// an index in their shown order page (a per-site read, bounded by one
// site's data).
func Slice[T any](kind string, items []T, req Request, pos func(*T) string) (Result[T], error) {
	n, after, err := req.Open(kind, nil)
	if err != nil {
		return Result[T]{}, err
	}
	start := 0
	if after != "" {
		start = sort.Search(len(items), func(i int) bool { return pos(&items[i]) > after })
	}
	end := min(start+n, len(items))
	out := Result[T]{Items: append([]T{}, items[start:end]...)}
	if end < len(items) && end > start {
		out.Next = Encode(kind, pos(&items[end-1]))
	}
	return out, nil
}

// SortBy sorts items (stably) by pos, computing each position once: how a
// list read whole is put in the order Slice pages.
func SortBy[T any](items []T, pos func(*T) string) {
	type keyed struct {
		pos string
		i   int
	}
	ks := make([]keyed, len(items))
	for i := range items {
		ks[i] = keyed{pos(&items[i]), i}
	}
	sort.SliceStable(ks, func(a, b int) bool { return ks[a].pos < ks[b].pos })
	sorted := make([]T, len(items))
	for j, k := range ks {
		sorted[j] = items[k.i]
	}
	copy(items, sorted)
}

// Position parts: fixed-width renderings whose string order is the
// order a list shows, so a position is their concatenation.

// TimeDesc renders t so that later times sort first (24 hex digits).
func TimeDesc(t time.Time) string {
	return fmt.Sprintf("%016x%08x", ^(uint64(t.Unix()) ^ 1<<63), ^uint32(t.Nanosecond()))
}

// IntDesc renders n so that larger numbers sort first (16 hex digits).
func IntDesc(n int) string { return fmt.Sprintf("%016x", ^(uint64(int64(n)) ^ 1<<63)) }

// FloatDesc renders f so that larger numbers sort first (16 hex digits).
func FloatDesc(f float64) string {
	b := math.Float64bits(f)
	if b&(1<<63) != 0 {
		b = ^b
	} else {
		b ^= 1 << 63
	}
	return fmt.Sprintf("%016x", ^b)
}

// HexDesc renders a string of lower-case hex digits so that it sorts in
// reverse (each digit d becomes f-d).
func HexDesc(h string) string {
	b := []byte(h)
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			b[i] = "fedcba9876543210"[c-'0']
		case c >= 'a' && c <= 'f':
			b[i] = "543210"[c-'a']
		}
	}
	return string(b)
}

// HexPrefix reports whether pos starts with n lower-case hex digits: the
// shape check of positions that start with fixed-width parts.
func HexPrefix(pos string, n int) bool {
	if len(pos) < n {
		return false
	}
	for _, c := range pos[:n] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// SlicePage is Slice for a list read by list, checking first that the
// cursor's position starts with hexLen hex digits.
func SlicePage[T any](kind string, req Request, hexLen int, pos func(*T) string, list func() ([]T, error)) (Result[T], error) {
	if _, _, err := req.Open(kind, func(pos string) bool { return HexPrefix(pos, hexLen) }); err != nil {
		return Result[T]{}, err
	}
	items, err := list()
	if err != nil {
		return Result[T]{}, err
	}
	return Slice(kind, items, req, pos)
}
