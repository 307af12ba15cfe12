// Package redact is a TEMPORARY stand-in for branch wp-redact's package of
// the same API, so that this branch builds until that one lands; it is
// removed before merging wp-redact.
package redact

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"sync"
)

const (
	Secret = "[redacted]"
	Email  = "[email]"
	Phone  = "[phone]"
)

type Options struct{ KeepContacts bool }

type Redactor struct {
	opts   Options
	mu     sync.RWMutex
	values []string
}

func New(opts Options) *Redactor { return &Redactor{opts: opts} }

func (r *Redactor) Add(value string) {
	if r == nil || len(value) < 3 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.values {
		if v == value {
			return
		}
	}
	r.values = append(r.values, value)
}

func (r *Redactor) Secrets() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.values)
}

var (
	keyRe   = regexp.MustCompile(`\b(sk|pk|rk)-[A-Za-z0-9_-]{16,}\b|\bBearer [A-Za-z0-9._~+/-]{16,}=*`)
	emailRe = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
	phoneRe = regexp.MustCompile(`\+?\d[\d ()-]{8,}\d`)
)

func (r *Redactor) String(s string) string {
	if r != nil {
		r.mu.RLock()
		for _, v := range r.values {
			s = strings.ReplaceAll(s, v, Secret)
			if q, err := json.Marshal(v); err == nil {
				if esc := string(q[1 : len(q)-1]); esc != v {
					s = strings.ReplaceAll(s, esc, Secret)
				}
			}
		}
		r.mu.RUnlock()
	}
	s = keyRe.ReplaceAllString(s, Secret)
	if r == nil || !r.opts.KeepContacts {
		s = emailRe.ReplaceAllString(s, Email)
		s = phoneRe.ReplaceAllString(s, Phone)
	}
	return s
}

func (r *Redactor) Value(ptr any) { r.walk(reflect.ValueOf(ptr)) }

func (r *Redactor) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		if v.Kind() == reflect.Interface {
			e := v.Elem()
			if e.Kind() == reflect.String && v.CanSet() {
				v.Set(reflect.ValueOf(r.String(e.String())).Convert(e.Type()))
				return
			}
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			r.walk(c)
			if v.CanSet() {
				v.Set(c)
			}
			return
		}
		r.walk(v.Elem())
	case reflect.String:
		if v.CanSet() {
			v.SetString(r.String(v.String()))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				r.walk(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := 0; i < v.Len(); i++ {
			r.walk(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			c := reflect.New(v.Type().Elem()).Elem()
			c.Set(v.MapIndex(k))
			r.walk(c)
			v.SetMapIndex(k, c)
		}
	}
}

var secretWords = regexp.MustCompile(`(?i)(password|passwd|passcode|passphrase|\bpin\b|cvv|cvc|csc|card.?number|cc.?num|secret|token|api.?key|otp|one.?time)`)

func SecretField(inputType, autocomplete, name string) bool {
	if strings.EqualFold(strings.TrimSpace(inputType), "password") {
		return true
	}
	for _, w := range strings.Fields(strings.ToLower(autocomplete)) {
		switch w {
		case "current-password", "new-password", "one-time-code", "cc-number", "cc-csc", "cc-exp", "cc-exp-month", "cc-exp-year":
			return true
		}
	}
	return secretWords.MatchString(name)
}
