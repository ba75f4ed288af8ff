package approvals

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// memoryStore keeps requests in a map, as rows, so that it reads them back
// exactly as the database stores do.
type memoryStore struct {
	cfg  Config
	mu   sync.Mutex
	rows map[string]*Row
}

var _ Store = (*memoryStore)(nil)

// NewMemoryStore returns a [Store] that keeps its requests in memory, for tests
// and for a single process that may forget pending requests when it exits. It
// behaves as the database stores do, arguments included (kept as JSON).
func NewMemoryStore(opts ...Option) Store {
	return &memoryStore{cfg: Configure(opts...), rows: make(map[string]*Row)}
}

func (s *memoryStore) Create(ctx context.Context, r Request) (Request, error) {
	if err := ctx.Err(); err != nil {
		return Request{}, fmt.Errorf("approvals: create: %w", err)
	}
	r, row, err := Prepare(r, s.cfg.Now())
	if err != nil {
		return Request{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows[r.ID] = &row
	return r, nil
}

func (s *memoryStore) Get(ctx context.Context, id string) (Request, error) {
	if err := ctx.Err(); err != nil {
		return Request{}, fmt.Errorf("approvals: get %q: %w", id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	row, ok := s.rows[id]
	if !ok {
		return Request{}, fmt.Errorf("approvals: get %q: %w", id, ErrNotFound)
	}
	return row.Request(s.cfg.Now())
}

func (s *memoryStore) List(ctx context.Context, f Filter) ([]Request, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("approvals: list: %w", err)
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, row := range s.rows {
		if (f.Label != "" && row.Label != f.Label) || (f.Tool != "" && row.Tool != f.Tool) {
			continue
		}
		r, err := row.Request(now)
		if err != nil {
			return nil, err
		}
		if f.State != "" && r.State != f.State {
			continue
		}
		out = append(out, r)
	}
	slices.SortFunc(out, newestFirst)
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// newestFirst orders requests by Created, newest first, then by ID descending,
// as the database stores do.
func newestFirst(a, b Request) int {
	if c := b.Created.Compare(a.Created); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}

func (s *memoryStore) Decide(ctx context.Context, id string, d Decision) (Request, error) {
	if err := ctx.Err(); err != nil {
		return Request{}, fmt.Errorf("approvals: decide %q: %w", id, err)
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	row, ok := s.rows[id]
	if !ok {
		return Request{}, fmt.Errorf("approvals: decide %q: %w", id, ErrNotFound)
	}
	r, err := row.Request(now)
	if err != nil {
		return Request{}, err
	}
	if err := r.DecideError(); err != nil {
		return Request{}, err
	}
	d.At = Stamp(d.At)
	if d.At.IsZero() {
		d.At = now
	}
	next := *row
	next.State = string(Denied)
	if d.Approve {
		next.State = string(Approved)
	}
	next.Decided, next.Approve, next.By, next.Reason, next.At = true, d.Approve, d.By, d.Reason, d.At
	*row = next
	return row.Request(now)
}

func (s *memoryStore) Claim(ctx context.Context, fingerprint string) (Request, bool, error) {
	if fingerprint == "" {
		return Request{}, false, errors.New("approvals: claim: empty fingerprint")
	}
	if err := ctx.Err(); err != nil {
		return Request{}, false, fmt.Errorf("approvals: claim: %w", err)
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *Row
	var bestReq Request
	for _, row := range s.rows {
		if row.Fingerprint != fingerprint || row.State != string(Approved) || !now.Before(row.Expires) {
			continue
		}
		r, err := row.Request(now)
		if err != nil {
			return Request{}, false, err
		}
		if best == nil || newestFirst(r, bestReq) < 0 {
			best, bestReq = row, r
		}
	}
	if best == nil {
		return Request{}, false, nil
	}
	best.State = string(Used)
	r, err := best.Request(now)
	if err != nil {
		return Request{}, false, err
	}
	return r, true, nil
}

// Close does nothing: the requests stay for as long as the store is referenced.
func (s *memoryStore) Close() error { return nil }
