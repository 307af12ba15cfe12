// Package problem holds the RFC 9457 problem document every error answer of
// the memory server is written as, so the API's errors and the server's own
// (a missing bearer token) look alike and are parsed alike.
package problem

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// ContentType is the media type of a problem document.
const ContentType = "application/problem+json"

// Problem is an RFC 9457 problem document. Detail is the one-line message
// the CLI prints for the same error.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

// New is the problem of a status with detail (type about:blank, the
// status's own title).
func New(status int, detail string) Problem {
	return Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail}
}

// Write writes p as the response, with its status.
func Write(w http.ResponseWriter, p Problem) {
	b, _ := json.Marshal(p)
	b = append(b, '\n')
	w.Header().Set("Content-Type", ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(p.Status)
	w.Write(b)
}

// Parse reads a problem document; ok is false when b is not one.
func Parse(b []byte) (p Problem, ok bool) {
	if json.Unmarshal(b, &p) != nil || p.Status == 0 {
		return Problem{}, false
	}
	return p, true
}
