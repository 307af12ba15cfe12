package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/selector"
)

// SelectorObservation is POST /v1/selectors's body: one use of a selector
// for an element, a success or (Failed) a failure.
type SelectorObservation struct {
	Domain   string `json:"domain"`         // host or URL of the page
	Path     string `json:"path,omitempty"` // scope to this page path (or URL); "" = every page
	Role     string `json:"role"`           // ARIA role: button, link, textbox, ...
	Name     string `json:"name"`           // accessible name
	Selector string `json:"selector"`
	Failed   bool   `json:"failed,omitempty"` // the selector did not find the element
	// Reason says why it failed; a failure with a reason of a selector
	// that had worked marks it stale.
	Reason string `json:"reason,omitempty"`
	// Fingerprint and Page are the element's and the page's structural
	// fingerprints (engine/memory/fingerprint): a success records them as the
	// selector's checked.
	Fingerprint string `json:"fingerprint,omitempty"`
	Page        string `json:"page,omitempty"`
}

// SelectorFilter selects selectors for GET /v1/selectors: those kept for
// Domain and related hosts, or exactly those offered on the page at URL
// (not both; neither lists every site's).
type SelectorFilter struct {
	Domain string
	URL    string
	// Stale lists only the stale selectors (with Domain or none; not with
	// URL: stale ones are never offered).
	Stale bool
}

// SelectorList is GET /v1/selectors's answer, best first.
type SelectorList struct {
	Selectors []selector.Selector `json:"selectors"`
	Next      string              `json:"next,omitempty"` // the next page's cursor, when a page was asked for
}

func init() { routeSets = append(routeSets, selectorRoutes) }

func selectorRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/selectors", Summary: "List known selectors, best first (url: exactly those the prompt gets on that page)",
			Query: []Param{
				{Name: "domain", Type: "string", Description: "selectors of this host, its parent domains and its subdomains"},
				{Name: "url", Type: "string", Description: "only the selectors offered on this page: its host or a parent domain's, for every page or this page's path, with a positive score (not with domain; not paged)"},
				staleParam("selectors"),
				siteLimitParam, cursorParam,
			},
			Response: SelectorList{},
			handle: func(c *call) (any, error) {
				host, page := c.query("domain"), c.query("url")
				stale, err := c.staleOnly()
				if err != nil {
					return nil, err
				}
				var ss []selector.Selector
				switch {
				case host != "" && page != "":
					return nil, engine.Invalid("request", "give domain or url, not both")
				case stale && page != "":
					return nil, engine.Invalid("request", "give stale or url, not both: stale selectors are never offered on a page")
				case stale:
					ss, err = c.m.Selectors.List(c.ctx, host)
					ss = onlyStale(ss, func(s *selector.Selector) bool { return s.Stale != nil })
				case page != "":
					ss, err = c.m.Selectors.Known(c.ctx, page, 0)
				default:
					req, paged, perr := c.pageIfAsked()
					if perr != nil {
						return nil, perr
					}
					if paged {
						p, err := c.m.Selectors.Page(c.ctx, host, req)
						return SelectorList{Selectors: nonNilSlice(p.Items), Next: p.Next}, err
					}
					ss, err = c.m.Selectors.List(c.ctx, host)
				}
				if err != nil {
					return nil, err
				}
				return SelectorList{Selectors: nonNilSlice(ss)}, nil
			}},
		{Method: http.MethodGet, Path: "/v1/selectors/lookup", Summary: "Every known selector for one element on a page, best first, failing ones last (replay's lookup)",
			Query: []Param{
				{Name: "url", Type: "string", Required: true, Description: "the page (or its host)"},
				{Name: "role", Type: "string", Description: "the element's accessible role"},
				{Name: "name", Type: "string", Description: "the element's accessible name"},
			},
			Response: SelectorList{},
			handle: func(c *call) (any, error) {
				page, err := c.required("url")
				if err != nil {
					return nil, err
				}
				ss, err := c.m.Selectors.Lookup(c.ctx, page, c.query("role"), c.query("name"))
				return SelectorList{Selectors: nonNilSlice(ss)}, err
			}},
		{Method: http.MethodPost, Path: "/v1/selectors", Summary: "Record that a selector found an element (or, with failed, did not)",
			Body: SelectorObservation{}, Required: []string{"domain", "role", "name", "selector"}, Response: selector.Selector{},
			handle: func(c *call) (any, error) {
				var in SelectorObservation
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				return c.m.Selectors.Record(c.ctx, selector.Observation{Domain: in.Domain, Path: in.Path,
					Role: in.Role, Name: in.Name, Selector: in.Selector, Failed: in.Failed, Reason: in.Reason,
					Fingerprint: in.Fingerprint, Page: in.Page})
			}},
		{Method: http.MethodPost, Path: "/v1/attribution/selectors", Summary: "Add a run's shown/used/helped counts to its selectors (one request per run)",
			Body: SelectorAttribution{}, Response: AttributionResult{},
			handle: func(c *call) (any, error) {
				var in SelectorAttribution
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				n, err := c.m.Selectors.Attribute(c.ctx, in.Selectors)
				return AttributionResult{Updated: n}, err
			}},
	}
}

// SelectorAttribution is POST /v1/attribution/selectors's body: what a
// run's steps did with the selectors they were shown.
type SelectorAttribution struct {
	Selectors []selector.Attribution `json:"selectors"`
}

// AttributionResult is an attribution route's answer: how many records
// took the counts (one no longer kept is skipped).
type AttributionResult struct {
	Updated int `json:"updated"`
}

// AttributeSelectors is POST /v1/attribution/selectors.
func (c *Client) AttributeSelectors(ctx context.Context, in SelectorAttribution) (*AttributionResult, error) {
	var out AttributionResult
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/attribution/selectors", json: in}, &out)
}

// Selectors is GET /v1/selectors.
func (c *Client) Selectors(ctx context.Context, f SelectorFilter) (*SelectorList, error) {
	q := url.Values{}
	set(q, "domain", f.Domain)
	set(q, "url", f.URL)
	if f.Stale {
		q.Set("stale", "true")
	}
	var out SelectorList
	return &out, c.do(ctx, request{method: http.MethodGet, path: "/v1/selectors", query: q}, &out)
}

// RecordSelector is POST /v1/selectors.
func (c *Client) RecordSelector(ctx context.Context, in SelectorObservation) (*selector.Selector, error) {
	var out selector.Selector
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/selectors", json: in}, &out)
}

// LookupSelectors is GET /v1/selectors/lookup.
func (c *Client) LookupSelectors(ctx context.Context, pageURL, role, name string) ([]selector.Selector, error) {
	q := url.Values{"url": {pageURL}}
	set(q, "role", role)
	set(q, "name", name)
	var out SelectorList
	return out.Selectors, c.do(ctx, request{method: http.MethodGet, path: "/v1/selectors/lookup", query: q}, &out)
}
