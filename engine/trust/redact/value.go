package redact

import (
	"encoding/json"
	"reflect"
	"strings"
)

// Value redacts in place every string reachable from ptr: struct fields,
// slice and array elements, map values, through pointers and interfaces,
// and the text of json.RawMessage values (a tool's output), which stay
// valid JSON. Unexported fields and map keys are left alone, and so are
// strings it cannot set (ptr must be a pointer for anything to change).
// So are identifiers: string fields (and string slices) whose name is ID
// or ends in ID or IDs (RunID, SessionID): they name records, hold no
// secret, and a run id that turned into [phone] would lose its run.
func (r *Redactor) Value(ptr any) {
	w := walker{r: r}
	w.walk(reflect.ValueOf(ptr))
}

type walker struct {
	r    *Redactor
	seen map[uintptr]bool // pointers walked, against cycles
}

// walk redacts v's strings; it reports whether v (which may not be
// settable, a map value's copy) changed.
func (w *walker) walk(v reflect.Value) bool {
	if v.Type() == rawType {
		return w.raw(v)
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		t := w.r.String(s)
		if t == s || !v.CanSet() {
			return t != s
		}
		v.SetString(t)
		return true
	case reflect.Pointer:
		if v.IsNil() {
			return false
		}
		if w.seen == nil {
			w.seen = map[uintptr]bool{}
		}
		if p := v.Pointer(); !w.seen[p] {
			w.seen[p] = true
			w.walk(v.Elem())
		}
		return false
	case reflect.Interface:
		if v.IsNil() {
			return false
		}
		e := v.Elem()
		if e.Kind() == reflect.Pointer {
			w.walk(e)
			return false
		}
		if !needs(e.Type()) {
			return false
		}
		c := reflect.New(e.Type()).Elem()
		c.Set(e)
		if w.walk(c) && v.CanSet() {
			v.Set(c)
			return true
		}
		return false
	case reflect.Struct:
		changed := false
		for i := range v.NumField() {
			// An unexported field is never settable; nor is any field of a
			// struct Value was not given a pointer to, which it can not
			// change anyway.
			f := v.Field(i)
			if !f.CanSet() || identifier(v.Type(), i, f) {
				continue
			}
			if w.walk(f) {
				changed = true
			}
		}
		return changed
	case reflect.Slice, reflect.Array:
		if !needs(v.Type().Elem()) {
			return false
		}
		changed := false
		for i := range v.Len() {
			if w.walk(v.Index(i)) {
				changed = true
			}
		}
		return changed
	case reflect.Map:
		if v.IsNil() || !needs(v.Type().Elem()) {
			return false
		}
		et := v.Type().Elem()
		it := v.MapRange()
		for it.Next() {
			e := it.Value()
			if et.Kind() == reflect.Pointer {
				w.walk(e)
				continue
			}
			c := reflect.New(et).Elem()
			c.Set(e)
			if w.walk(c) {
				v.SetMapIndex(it.Key(), c)
			}
		}
		return false
	}
	return false
}

var rawType = reflect.TypeFor[json.RawMessage]()

// identifier reports whether field i of struct type t, f, is an
// identifier Value keeps: a string or []string named ID, …ID or …IDs.
func identifier(t reflect.Type, i int, f reflect.Value) bool {
	switch k := f.Kind(); {
	case k == reflect.String, k == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
		name := t.Field(i).Name
		return strings.HasSuffix(name, "ID") || strings.HasSuffix(name, "IDs")
	}
	return false
}

// raw redacts a json.RawMessage's text. Should a replacement have cut
// through the JSON's structure (a typed value that spans quotes), the
// message becomes the redacted text as one JSON string.
func (w *walker) raw(v reflect.Value) bool {
	b := v.Bytes()
	if len(b) == 0 {
		return false
	}
	s := string(b)
	t := w.r.String(s)
	if t == s || !v.CanSet() {
		return t != s
	}
	if !json.Valid([]byte(t)) {
		q, _ := json.Marshal(t)
		t = string(q)
	}
	v.SetBytes([]byte(t))
	return true
}

// needs reports whether values of type t may hold a string Value changes.
func needs(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Interface, reflect.Struct, reflect.Map, reflect.Pointer:
		return true
	case reflect.Slice, reflect.Array:
		return t == rawType || needs(t.Elem())
	}
	return false
}
