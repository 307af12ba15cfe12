package api

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/engine-dev/engine/engine/memory/archive"
	"github.com/engine-dev/engine/engine/memory/forget"
)

// Import, export and forget move whole memory: GET /v1/export answers the
// export document, POST /v1/import reads one back (or a two-tier
// memory.json), POST /v1/forget drops one site's memory of every kind.
//
// Import and forget are exclusive routes (Route.Exclusive): an import's
// commit is atomic but not isolated (a journaled kv.Apply can be seen half
// done) and a forget is several deletes, so each runs while no other
// request does. The site caches need nothing more: an import writes their
// generation tokens in its one Apply, a forget drops them with the site
// (sitecache: a site without a token is never served from a cache).
//
// A client names its input with ?source=NAME (the CLI: the file or
// directory it read), used only in messages: "NAME: line 3: ...", the
// words an import of the same file in this process would say. A directory
// (browser-agent-driver .agent-memory) is read by the client
// (archive.ReadInput) and sent as an export document.

// DefaultImportSource names an import's body in messages when the request
// gives no source.
const DefaultImportSource = "request body"

func init() { routeSets = append(routeSets, archiveRoutes) }

func archiveRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/export", Summary: "All memory (every store) as one versioned export document",
			Response: archive.Document{},
			handle: func(c *call) (any, error) {
				d, err := archive.New(c.m, archive.Options{Redactor: c.red}).Export(c.ctx)
				if err != nil {
					return nil, err
				}
				c.release() // d is whole: a slow reader holds up no one
				c.streamed = true
				c.w.Header().Set("Content-Type", "application/json")
				c.w.WriteHeader(http.StatusOK)
				writeDocument(c.w, d) // a failed write is the client gone; nothing to tell it
				return nil, nil
			}},
		{Method: http.MethodPost, Path: "/v1/import", Summary: "Merge an export document or a two-tier memory.json into memory, all or nothing",
			Query: []Param{{Name: "source", Type: "string",
				Description: "the name of the input (a file name) in error messages and notes, and its base name in the lessons' provenance; default \"" + DefaultImportSource + "\""},
				{Name: "sha256", Type: "string", Description: "the body's SHA-256 (hex), for the lessons' provenance: with it a body over " + fmt.Sprint(StreamImport) + " bytes is imported as it streams in (memory bounded by a chunk of lessons; a digest that does not match rolls it back)"},
				{Name: "trust", Type: "boolean", Description: "keep the trust, source and provenance the file gives each lesson (a lesson without trust is trusted); without it every lesson is a candidate of source imported. The screen applies either way"}},
			Body: archive.Document{}, Limit: MaxUpload, Response: archive.Result{}, Exclusive: true,
			handle: func(c *call) (any, error) {
				source := c.query("source")
				file := filepath.Base(source)
				if source == "" {
					source, file = DefaultImportSource, ""
				}
				trust, err := c.queryBool("trust")
				if err != nil {
					return nil, err
				}
				if c.r.ContentLength > c.limit { // refused before reading it
					return nil, tooLarge(c.limit)
				}
				if want := c.query("sha256"); want != "" && c.r.ContentLength > StreamImport {
					return c.importStream(source, file, want, trust)
				}
				b, err := c.raw()
				if err != nil {
					return nil, err
				}
				return c.importWhole(b, source, file, trust)
			}},
		{Method: http.MethodPost, Path: "/v1/forget", Summary: "Drop everything memory holds about one site (its registrable domain), of every kind",
			Query: []Param{
				{Name: "domain", Type: "string", Required: true, Description: "the domain (or URL) whose site to forget: www.example.com forgets example.com and every subdomain"},
				{Name: "dry_run", Type: "boolean", Description: "only count what would go; nothing is dropped"},
			},
			Response: forget.Survey{}, Exclusive: true,
			handle: func(c *call) (any, error) {
				dry, err := c.queryBool("dry_run")
				if err != nil {
					return nil, err
				}
				var s forget.Survey
				err = c.exclusive(func() (err error) {
					if dry {
						s, err = forget.Count(c.ctx, c.m, c.query("domain"))
					} else {
						s, err = forget.Site(c.ctx, c.m, c.query("domain"))
					}
					return err
				})
				return s, err
			}},
	}
}

// writeDocument writes d as writeJSON would, byte for byte, but record by
// record: the encoding of a large memory is never held whole.
func writeDocument(w io.Writer, d *archive.Document) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	put := func(v any) error {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return err
	}
	v := reflect.ValueOf(d).Elem()
	bw.WriteByte('{')
	wrote := false
	for i := 0; i < v.NumField(); i++ {
		name, opts, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || (opts != "" && opts != "omitempty") {
			panic("api: writeDocument handles plain json names and omitempty only") // TestExportStreamsTheSameBytes
		}
		if opts == "omitempty" && v.Field(i).Len() == 0 {
			continue // a slice (history), left out as json leaves it out
		}
		if wrote {
			bw.WriteByte(',')
		}
		wrote = true
		if err := put(name); err != nil {
			return err
		}
		bw.WriteByte(':')
		f := v.Field(i)
		if f.Kind() != reflect.Slice || f.IsNil() {
			if err := put(f.Interface()); err != nil {
				return err
			}
			continue
		}
		bw.WriteByte('[')
		for j := 0; j < f.Len(); j++ {
			if j > 0 {
				bw.WriteByte(',')
			}
			if err := put(f.Index(j).Interface()); err != nil {
				return err
			}
		}
		bw.WriteByte(']')
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// StreamImport is the body size past which an import that announces its
// digest (sha256) is read as it streams in (archive.ImportStream) instead
// of whole: a smaller one keeps the whole-file messages (line numbers).
const StreamImport = 1 << 20

// importWhole imports b, a whole export document or memory.json.
func (c *call) importWhole(b []byte, source, file string, trust bool) (any, error) {
	d, err := archive.ParseFile(b, source)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	opts := archive.Options{Trust: trust, File: file, SHA256: hex.EncodeToString(sum[:]), Redactor: c.red}
	var res *archive.Result
	err = c.exclusive(func() (err error) {
		res, err = archive.New(c.m, opts).Import(c.ctx, d, source)
		return err
	})
	return res, err
}

// importStream imports the body as it is read (archive.ImportStream),
// hashing it on the way; a digest other than want rolls it back.
func (c *call) importStream(source, file, want string, trust bool) (any, error) {
	h := sha256.New()
	br := bufio.NewReaderSize(io.TeeReader(http.MaxBytesReader(c.w, c.r.Body, c.limit), h), 64<<10)
	// Only an export document streams; a memory.json (no "format") is
	// read whole.
	if head, _ := br.Peek(4 << 10); !bytes.Contains(head, []byte(`"format"`)) {
		b, err := io.ReadAll(br)
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, tooLarge(c.limit)
		}
		if err != nil {
			return nil, err
		}
		return c.importWhole(b, source, file, trust)
	}
	check := func() error {
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			return fmt.Errorf("the body's SHA-256 is %s, not the %s announced", got, want)
		}
		return nil
	}
	opts := archive.Options{Trust: trust, File: file, SHA256: want, Redactor: c.red, Check: check}
	var res *archive.Result
	err := c.exclusive(func() (err error) {
		res, err = archive.New(c.m, opts).ImportStream(c.ctx, br, source)
		return err
	})
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, tooLarge(c.limit)
	}
	return res, err
}

// ImportFrom is Import with the body read from r as it is sent (size
// bytes, its SHA-256 given as sum): a server imports a large one as it
// streams in.
func (c *Client) ImportFrom(ctx context.Context, r io.Reader, size int64, sum, source string, trust bool) (*archive.Result, error) {
	q := url.Values{}
	set(q, "source", source)
	set(q, "sha256", sum)
	if trust {
		q.Set("trust", "true")
	}
	var out archive.Result
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/import", query: q, body: r, size: size, rawType: "application/json"}, &out)
}

// Export is GET /v1/export.
func (c *Client) Export(ctx context.Context) (*archive.Document, error) {
	var out archive.Document
	return &out, c.do(ctx, request{method: http.MethodGet, path: "/v1/export"}, &out)
}

// Import is POST /v1/import: body is an export document or a two-tier
// memory.json (as archive.ReadInput returns it), source the name it goes
// by in messages ("" for the server's default). trust keeps the lessons'
// trust as the file gives it (engine import --trust).
func (c *Client) Import(ctx context.Context, body []byte, source string, trust bool) (*archive.Result, error) {
	q := url.Values{}
	set(q, "source", source)
	if trust {
		q.Set("trust", "true")
	}
	var out archive.Result
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/import", query: q, raw: body, rawType: "application/json"}, &out)
}

// Forget is POST /v1/forget; with dryRun it only counts what would go.
func (c *Client) Forget(ctx context.Context, host string, dryRun bool) (*forget.Survey, error) {
	q := url.Values{"domain": {host}}
	if dryRun {
		q.Set("dry_run", "true")
	}
	var out forget.Survey
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/forget", query: q}, &out)
}
