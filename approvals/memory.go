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
	cfg    Config
	mu     sync.Mutex
	rows   map[string]*Row
	events []Event          // the journal: Seq i+1 at index i
	sinks  map[string]int64 // Delivered per sink
}

var (
	_ Store   = (*memoryStore)(nil)
	_ Journal = (*memoryStore)(nil)
)

// NewMemoryStore returns a [Store] that keeps its requests in memory, for tests
// and for a single process that may forget pending requests when it exits. It
// behaves as the database stores do, arguments included (kept as JSON).
func NewMemoryStore(opts ...Option) Store {
	return &memoryStore{cfg: Configure(opts...), rows: make(map[string]*Row), sinks: make(map[string]int64)}
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
	s.events = append(s.events, Event{Seq: int64(len(s.events) + 1), ID: row.ID, Label: row.Label, Tool: row.Tool, Decision: d})
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

func (s *memoryStore) ClaimID(ctx context.Context, id, fingerprint string) (Request, bool, error) {
	if fingerprint == "" {
		return Request{}, false, errors.New("approvals: claim: empty fingerprint")
	}
	if err := ctx.Err(); err != nil {
		return Request{}, false, fmt.Errorf("approvals: claim %q: %w", id, err)
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	row, ok := s.rows[id]
	if !ok || row.Fingerprint != fingerprint || row.State != string(Approved) || !now.Before(row.Expires) {
		return Request{}, false, nil
	}
	if _, err := row.Request(now); err != nil {
		return Request{}, false, err
	}
	row.State = string(Used)
	r, err := row.Request(now)
	if err != nil {
		return Request{}, false, err
	}
	return r, true, nil
}

func (s *memoryStore) Events(ctx context.Context, after int64, limit int) ([]Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("approvals: events: %w", err)
	}
	if limit <= 0 {
		return nil, fmt.Errorf("approvals: events: limit %d is not positive", limit)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	after = max(after, 0)
	if after >= int64(len(s.events)) {
		return nil, nil
	}
	evs := s.events[after:]
	return slices.Clone(evs[:min(limit, len(evs))]), nil
}

func (s *memoryStore) Delivered(ctx context.Context, sink string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("approvals: delivered: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sinks[sink], nil
}

func (s *memoryStore) SetDelivered(ctx context.Context, sink string, seq int64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("approvals: set delivered: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sinks[sink] = max(s.sinks[sink], seq)
	return nil
}

// Close does nothing: the requests stay for as long as the store is referenced.
func (s *memoryStore) Close() error { return nil }
