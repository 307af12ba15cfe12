package engine

import (
	"encoding"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// JSONError words err, an error from decoding JSON, in JSON's terms for
// whoever sent it: a value of the wrong kind names the field and the kind
// wanted ("tier: want an integer, not a string"), never a Go type; other
// errors are the decoder's own words without its "json: " prefix. It adds
// no place (JSONProblem adds the line of a file).
func JSONError(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	var pe *time.ParseError
	switch {
	case errors.As(err, &te):
		msg := "want " + jsonKind(te.Type) + ", not " + jsonValueKind(te.Value)
		if te.Field != "" {
			msg = te.Field + ": " + msg
		}
		return msg
	case errors.As(err, &se):
		if strings.Contains(se.Error(), "unexpected end of JSON input") {
			return "the JSON is cut off"
		}
		return se.Error()
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON is cut off"
	case errors.As(err, &pe):
		return "want an RFC 3339 time (2006-01-02T15:04:05Z), not " + strconv.Quote(pe.Value)
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if _, rest, ok := strings.Cut(msg, ".UnmarshalJSON: "); ok && msg == "Time.UnmarshalJSON: "+rest {
		return "want an RFC 3339 time (2006-01-02T15:04:05Z), not another JSON value"
	}
	return msg
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// jsonKind is the JSON kind a value of t is decoded from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a JSON value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pt := reflect.PointerTo(t)
	if !pt.Implements(jsonUnmarshaler) && pt.Implements(textUnmarshaler) {
		return "a string"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a JSON value"
}

// jsonValueKind words an UnmarshalTypeError's Value ("string", "number",
// "number 1.5", "array", "object", "bool").
func jsonValueKind(v string) string {
	kind, rest, _ := strings.Cut(v, " ")
	switch kind {
	case "string":
		return "a string"
	case "number":
		if rest != "" {
			return "the number " + rest
		}
		return "a number"
	case "array":
		return "an array"
	case "object":
		return "an object"
	case "bool":
		return "true or false"
	case "null":
		return "null"
	}
	return v
}
