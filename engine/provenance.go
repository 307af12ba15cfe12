package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Source says how a memory record came to be.
type Source string

// The sources of memory records.
const (
	// SourceSeed: written by the engine itself (the seed lessons).
	SourceSeed Source = "seed"
	// SourceManual: written by a person (`engine lessons add`, …).
	SourceManual Source = "manual"
	// SourceLearned: learned by the engine from a run.
	SourceLearned Source = "learned"
	// SourceImported: read from an export file (`engine import`).
	SourceImported Source = "imported"
	// SourceAPI: written by another program over the API or MCP.
	SourceAPI Source = "api"
)

// Sources lists the valid sources.
var Sources = []Source{SourceSeed, SourceManual, SourceLearned, SourceImported, SourceAPI}

// ParseSource returns the source named s, or an ErrInvalid error listing
// the valid ones.
func ParseSource(s string) (Source, error) {
	src := Source(strings.TrimSpace(s))
	if slices.Contains(Sources, src) {
		return src, nil
	}
	return "", Invalid("source", fmt.Sprintf("unknown source %q (want one of seed, manual, learned, imported, api)", s))
}

// Provenance says where a memory record came from: how (Source), from
// which run and model, on which site, when, and for an import which file.
// Every memory store stamps it on the records it writes, from the writer
// its memory view was opened for (memory.Memory.WithProvenance: an API
// request's Engine-Run, Engine-Model and Engine-Source headers).
type Provenance struct {
	Source Source    `json:"source,omitempty"`
	Run    string    `json:"run,omitempty"`    // the run that wrote it
	Model  string    `json:"model,omitempty"`  // that run's model, "provider/name"
	Site   string    `json:"site,omitempty"`   // the site (eTLD+1) it was seen on
	At     time.Time `json:"at,omitzero"`      // when it was written
	File   string    `json:"file,omitempty"`   // an import's file name
	SHA256 string    `json:"sha256,omitempty"` // an import's file digest (hex)
}

// MaxProvenanceField is the longest run id, model or file name a
// provenance may carry.
const MaxProvenanceField = 200

// Check returns an ErrInvalid error naming the first field of p that is not
// a valid provenance value: an unknown source, or a run, model, site or file
// over MaxProvenanceField bytes or holding control characters.
func (p Provenance) Check() error {
	if p.Source != "" {
		if _, err := ParseSource(string(p.Source)); err != nil {
			return err
		}
	}
	for _, f := range []struct{ name, v string }{{"run", p.Run}, {"model", p.Model}, {"site", p.Site}, {"file", p.File}, {"sha256", p.SHA256}} {
		if len(f.v) > MaxProvenanceField {
			return Invalid("provenance", fmt.Sprintf("%s is %d bytes (at most %d)", f.name, len(f.v), MaxProvenanceField))
		}
		if strings.ContainsFunc(f.v, unicode.IsControl) {
			return Invalid("provenance", fmt.Sprintf("%s %q holds control characters", f.name, f.v))
		}
	}
	return nil
}

// Stamp returns p with At set to now when it is unset, and Site set to
// site when it is unset.
func (p Provenance) Stamp(now time.Time, site string) Provenance {
	if p.At.IsZero() {
		p.At = now.UTC()
	}
	if p.Site == "" {
		p.Site = site
	}
	return p
}
