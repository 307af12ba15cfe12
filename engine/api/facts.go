package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/fact"
)

// ObserveFact is POST /v1/facts/observe's body: one sighting of a fact.
type ObserveFact struct {
	Domain string    `json:"domain"` // host or URL
	Type   fact.Type `json:"type"`
	Key    string    `json:"key"`
	Value  string    `json:"value"`
	// Path and Page are the page a fact from a page was seen on: its path
	// and structural fingerprint (engine/memory/fingerprint); omitted for none.
	Path string `json:"path,omitempty"`
	Page string `json:"page,omitempty"`
}

// FactList is GET /v1/facts's answer. Facts at MinConfidence or more
// reach the prompt.
type FactList struct {
	Facts         []fact.Fact `json:"facts"`
	MinConfidence float64     `json:"min_confidence"`
	Next          string      `json:"next,omitempty"` // the next page's cursor, when a page was asked for
}

// FactSet is POST /v1/facts's answer: the stored fact, and whether it was
// kept (a confidence below the floor forgets it).
type FactSet struct {
	Fact fact.Fact `json:"fact"`
	Kept bool      `json:"kept"`
}

func init() { routeSets = append(routeSets, factRoutes) }

func factRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/facts", Summary: "List facts, most confident first",
			Query: []Param{
				{Name: "domain", Type: "string", Description: "facts of this host, its parent domains and its subdomains"},
				{Name: "confident", Type: "boolean", Description: "only the facts that reach the prompt on domain (not paged)"},
				siteLimitParam, cursorParam,
			},
			Response: FactList{},
			handle: func(c *call) (any, error) {
				host := c.query("domain")
				confident, err := c.queryBool("confident")
				if err != nil {
					return nil, err
				}
				var fs []fact.Fact
				if confident {
					if host == "" {
						return nil, engine.Invalid("request", "confident needs domain: which facts reach the prompt depends on the host")
					}
					fs, err = c.m.Facts.Confident(c.ctx, host)
				} else if req, paged, perr := c.pageIfAsked(); perr != nil {
					return nil, perr
				} else if paged {
					p, err := c.m.Facts.Page(c.ctx, host, req)
					return FactList{Facts: nonNilSlice(p.Items), MinConfidence: c.m.Facts.MinConfidence(), Next: p.Next}, err
				} else {
					fs, err = c.m.Facts.List(c.ctx, host)
				}
				return FactList{Facts: nonNilSlice(fs), MinConfidence: c.m.Facts.MinConfidence()}, err
			}},
		{Method: http.MethodPost, Path: "/v1/facts/observe", Summary: "Record one sighting of a fact (confirms it, or contradicts rival values)",
			Body: ObserveFact{}, Required: []string{"domain", "type", "key", "value"}, Response: fact.Outcome{},
			handle: func(c *call) (any, error) {
				var in ObserveFact
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				out, err := c.m.Facts.Observe(c.ctx, fact.Observation{Domain: in.Domain, Type: in.Type, Key: in.Key, Value: in.Value, Path: in.Path, Page: in.Page})
				out.Contradicted, out.Pruned = nonNilSlice(out.Contradicted), nonNilSlice(out.Pruned)
				return out, err
			}},
		{Method: http.MethodPost, Path: "/v1/facts", Summary: "Store a fact with a given confidence (fixing memory by hand)",
			Body: fact.Fact{}, Required: []string{"domain", "type", "key", "value"}, Response: FactSet{},
			handle: func(c *call) (any, error) {
				var in fact.Fact
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				in.Provenance = engine.Provenance{} // who writes is who the request's headers say
				got, kept, err := c.m.Facts.Put(c.ctx, in)
				return FactSet{Fact: got, Kept: kept}, err
			}},
		{Method: http.MethodPost, Path: "/v1/attribution/facts", Summary: "Add a run's shown/used/helped counts to its facts (one request per run)",
			Body: FactAttribution{}, Response: AttributionResult{},
			handle: func(c *call) (any, error) {
				var in FactAttribution
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				n, err := c.m.Facts.Attribute(c.ctx, in.Facts)
				return AttributionResult{Updated: n}, err
			}},
	}
}

// Facts is GET /v1/facts.
func (c *Client) Facts(ctx context.Context, host string, confident bool) (*FactList, error) {
	q := url.Values{}
	set(q, "domain", host)
	if confident {
		q.Set("confident", "true")
	}
	var out FactList
	return &out, c.do(ctx, request{method: http.MethodGet, path: "/v1/facts", query: q}, &out)
}

// ObserveFact is POST /v1/facts/observe.
func (c *Client) ObserveFact(ctx context.Context, in ObserveFact) (*fact.Outcome, error) {
	var out fact.Outcome
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/facts/observe", json: in}, &out)
}

// SetFact is POST /v1/facts.
func (c *Client) SetFact(ctx context.Context, f fact.Fact) (*FactSet, error) {
	var out FactSet
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/facts", json: f}, &out)
}

// FactAttribution is POST /v1/attribution/facts's body: what a run's
// steps did with the facts they were shown.
type FactAttribution struct {
	Facts []fact.Attribution `json:"facts"`
}

// AttributeFacts is POST /v1/attribution/facts.
func (c *Client) AttributeFacts(ctx context.Context, in FactAttribution) (*AttributionResult, error) {
	var out AttributionResult
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/attribution/facts", json: in}, &out)
}
