// Package token keeps the bearer tokens a memory server accepts besides its
// serve.token: each opens one namespace (or all) with one role (read,
// write or admin), may expire, and is stored as the SHA-256 of the token,
// never the token itself, which Create returns once.
//
// Tokens live once per store, outside every namespace (keyspace.Token),
// so the same tokens open a badger data dir and an etcd cluster through
// the kv contract alone. Each record is indexed by its hash
// (keyspace.TokenHash), so a token resolves with two reads whatever the
// number of tokens; a store whose records predate the index gets it the
// first time one of its tokens is resolved.
package token

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// Role is what a token may do within the namespaces it opens.
type Role string

// The roles, each allowing what the one before allows.
const (
	// Read reads memory: lists, recall, context, export.
	Read Role = "read"
	// Write also records and changes memory: lessons, facts, selectors,
	// trajectories, sessions, runs, learning, deleting one record.
	Write Role = "write"
	// Admin also forgets, imports, reverts, approves or rejects held
	// records, and manages tokens (of its own namespace unless it opens
	// all) and namespaces.
	Admin Role = "admin"
)

// AllNamespaces is the namespace of a token that opens every namespace.
const AllNamespaces = "*"

// rank orders the roles; 0 is no role.
func (r Role) rank() int {
	switch r {
	case Read:
		return 1
	case Write:
		return 2
	case Admin:
		return 3
	}
	return 0
}

// Allows reports whether r may do what need requires.
func (r Role) Allows(need Role) bool { return r.rank() >= need.rank() && need.rank() > 0 }

// ParseRole reads a role name; another is bad input.
func ParseRole(s string) (Role, error) {
	r := Role(s)
	if r.rank() == 0 {
		return "", engine.Invalidf("token", "role %q: want read, write or admin", s)
	}
	return r, nil
}

// MaxName is the longest token label, in bytes.
const MaxName = 200

// Token is a token as it is listed: never the token itself.
type Token struct {
	ID string `json:"id"`
	// Namespace is the namespace the token opens ("-" the default), or
	// AllNamespaces.
	Namespace string    `json:"namespace"`
	Role      Role      `json:"role"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	// ExpiresAt is when the token stops working; nil: never.
	ExpiresAt *time.Time `json:"expires_at"`
}

// All reports whether t opens every namespace.
func (t Token) All() bool { return t.Namespace == AllNamespaces }

// Opens reports whether t opens namespace ns ("-" the default).
func (t Token) Opens(ns string) bool { return t.All() || t.Namespace == ns }

// Expired reports whether t no longer works at now.
func (t Token) Expired(now time.Time) bool { return t.ExpiresAt != nil && !now.Before(*t.ExpiresAt) }

// record is a token as stored.
type record struct {
	Token
	// Hash is the hex SHA-256 of the token.
	Hash string `json:"hash"`
}

// Spec is what Create makes.
type Spec struct {
	Namespace string // a checked namespace name ("-" the default) or AllNamespaces
	Role      Role
	Name      string
	ExpiresAt *time.Time
}

// ErrNotFound is a revoke of a token id the store does not hold.
var ErrNotFound = engine.NotFound("no such token")

// Store keeps the tokens of one store.
type Store struct {
	db  kv.Store
	now func() time.Time

	indexMu sync.Mutex
	indexed bool // the store holds keyspace.TokenHashIndexed
}

// New returns the token store over db (the whole store, never a
// namespace's view); now is the clock (nil: time.Now).
func New(db kv.Store, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, now: now}
}

// secretBytes is a token's entropy; it is written as hex, as serve.token is.
const secretBytes = 32

// Create makes a token and returns it with its secret, the only time the
// secret is known: the store keeps its SHA-256.
func (s *Store) Create(ctx context.Context, spec Spec) (Token, string, error) {
	if _, err := ParseRole(string(spec.Role)); err != nil {
		return Token{}, "", err
	}
	if spec.Namespace == "" {
		return Token{}, "", engine.Invalid("token", "a token needs a namespace, or all of them")
	}
	if len(spec.Name) > MaxName || !utf8.ValidString(spec.Name) || strings.ContainsFunc(spec.Name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return Token{}, "", engine.Invalidf("token", "name: at most %d bytes of text without control characters", MaxName)
	}
	now := s.now().UTC().Truncate(time.Second)
	if spec.ExpiresAt != nil && !spec.ExpiresAt.After(now) {
		return Token{}, "", engine.Invalidf("token", "expires_at %s is not in the future", spec.ExpiresAt.Format(time.RFC3339))
	}
	var b [secretBytes + 6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Token{}, "", fmt.Errorf("token: %w", err)
	}
	secret := hex.EncodeToString(b[:secretBytes])
	t := Token{ID: "t" + hex.EncodeToString(b[secretBytes:]), Namespace: spec.Namespace, Role: spec.Role,
		Name: spec.Name, CreatedAt: now}
	if spec.ExpiresAt != nil {
		e := spec.ExpiresAt.UTC()
		t.ExpiresAt = &e
	}
	sum := sha256.Sum256([]byte(secret))
	v, err := json.Marshal(record{Token: t, Hash: hex.EncodeToString(sum[:])})
	if err != nil {
		return Token{}, "", err
	}
	err = s.db.Update(ctx, func(tx kv.Txn) error {
		if err := tx.Set(keyspace.Token(t.ID), v, 0); err != nil {
			return err
		}
		return tx.Set(keyspace.TokenHash(hex.EncodeToString(sum[:])), []byte(t.ID), 0)
	})
	if err != nil {
		return Token{}, "", err
	}
	return t, secret, nil
}

// List returns every token, oldest first (then by id), expired ones too.
func (s *Store) List(ctx context.Context) ([]Token, error) {
	recs, err := s.all(ctx)
	out := make([]Token, len(recs))
	for i, r := range recs {
		out[i] = r.Token
	}
	return out, err
}

// Get returns the token id.
func (s *Store) Get(ctx context.Context, id string) (Token, error) {
	v, err := kv.Get(ctx, s.db, keyspace.Token(id))
	if errors.Is(err, kv.ErrNotFound) {
		return Token{}, fmt.Errorf("%w %q", ErrNotFound, id)
	}
	if err != nil {
		return Token{}, err
	}
	var r record
	if err := json.Unmarshal(v, &r); err != nil {
		return Token{}, fmt.Errorf("token %s: %w", id, err)
	}
	return r.Token, nil
}

// Revoke deletes the token id and its hash key: from then on it is
// refused.
func (s *Store) Revoke(ctx context.Context, id string) error {
	return s.db.Update(ctx, func(tx kv.Txn) error {
		v, err := tx.Get(keyspace.Token(id))
		if errors.Is(err, kv.ErrNotFound) {
			return fmt.Errorf("%w %q", ErrNotFound, id)
		} else if err != nil {
			return err
		}
		var r record
		if err := json.Unmarshal(v, &r); err == nil && r.Hash != "" {
			// Only this token's: a hash key naming another id (which
			// no hash of two secrets ever would) stays.
			hk := keyspace.TokenHash(r.Hash)
			if owner, err := tx.Get(hk); err == nil && string(owner) == id {
				if err := tx.Delete(hk); err != nil {
					return err
				}
			} else if err != nil && !errors.Is(err, kv.ErrNotFound) {
				return err
			}
		}
		return tx.Delete(keyspace.Token(id))
	})
}

// Resolve returns the token whose secret is secret; ok is false for a
// secret no token has, or whose token has expired. The token is found by
// the SHA-256 of secret (keyspace.TokenHash): a lookup by a hash tells a
// caller nothing of how close a guess came, and the record found is
// checked against it in constant time. A revoked token's keys are gone
// and an expired one is refused on the clock of this call: nothing is
// cached.
func (s *Store) Resolve(ctx context.Context, secret string) (t Token, ok bool, err error) {
	if err := s.ensureIndex(ctx); err != nil {
		return Token{}, false, err
	}
	sum := sha256.Sum256([]byte(secret))
	var rec record
	found := false
	err = s.db.View(ctx, func(r kv.Reader) error {
		found = false
		id, err := r.Get(keyspace.TokenHash(hex.EncodeToString(sum[:])))
		if errors.Is(err, kv.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		v, err := r.Get(keyspace.Token(string(id)))
		if errors.Is(err, kv.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("token record %s: %w", id, err)
		}
		found = true
		return nil
	})
	if err != nil || !found {
		return Token{}, false, err
	}
	want, err := hex.DecodeString(rec.Hash)
	if err != nil || len(want) != sha256.Size || subtle.ConstantTimeCompare(sum[:], want) != 1 {
		return Token{}, false, nil
	}
	if rec.Expired(s.now()) {
		return Token{}, false, nil
	}
	return rec.Token, true, nil
}

// ensureIndex gives every token record its hash key, once per store: a
// store written before the index existed gets it here, in one
// transaction, and keyspace.TokenHashIndexed says it is done.
func (s *Store) ensureIndex(ctx context.Context) error {
	s.indexMu.Lock()
	defer s.indexMu.Unlock()
	if s.indexed {
		return nil
	}
	if _, err := kv.Get(ctx, s.db, keyspace.TokenHashIndexed()); err == nil {
		s.indexed = true
		return nil
	} else if !errors.Is(err, kv.ErrNotFound) {
		return err
	}
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		var recs []record
		err := tx.Scan(keyspace.TokensPrefix(), kv.ScanOptions{}, func(k, v []byte) error {
			var rec record
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("token record %s: %w", k, err)
			}
			recs = append(recs, rec)
			return nil
		})
		if err != nil {
			return err
		}
		for _, rec := range recs {
			if rec.Hash == "" || rec.ID == "" {
				continue // resolves to nothing, as before the index
			}
			if err := tx.Set(keyspace.TokenHash(rec.Hash), []byte(rec.ID), 0); err != nil {
				return err
			}
		}
		return tx.Set(keyspace.TokenHashIndexed(), []byte("1"), 0)
	})
	if err != nil {
		return fmt.Errorf("token: index the stored tokens by hash: %w", err)
	}
	s.indexed = true
	return nil
}

func (s *Store) all(ctx context.Context) ([]record, error) {
	var out []record
	err := s.db.View(ctx, func(r kv.Reader) error {
		out = out[:0]
		return r.Scan(keyspace.TokensPrefix(), kv.ScanOptions{}, func(k, v []byte) error {
			var rec record
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("token record %s: %w", k, err)
			}
			out = append(out, rec)
			return nil
		})
	})
	slices.SortFunc(out, func(a, b record) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, err
}
