package approvals

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// memoryStore keeps requests in a map, as records, so that it reads them back
// exactly as the database stores do.
type memoryStore struct {
	opts options
	mu   sync.Mutex
	recs map[string]*record
}

var _ Store = (*memoryStore)(nil)

// NewMemoryStore returns a [Store] that keeps its requests in memory, for tests
// and for a single process that may forget pending requests when it exits. It
// behaves as the database stores do, arguments included (kept as JSON).
func NewMemoryStore(opts ...Option) Store {
	return &memoryStore{opts: newOptions(opts), recs: make(map[string]*record)}
}

func (s *memoryStore) Create(ctx context.Context, r Request) (Request, error) {
	if err := ctx.Err(); err != nil {
		return Request{}, fmt.Errorf("approvals: create: %w", err)
	}
	r, args, err := prepare(r, s.opts.clock())
	if err != nil {
		return Request{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs[r.ID] = &record{
		id: r.ID, label: r.Label, tool: r.Tool, args: string(args), fingerprint: r.Fingerprint,
		created: r.Created, expires: r.Expires, state: string(Pending),
	}
	return r, nil
}

func (s *memoryStore) Get(ctx context.Context, id string) (Request, error) {
	if err := ctx.Err(); err != nil {
		return Request{}, fmt.Errorf("approvals: get %q: %w", id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.recs[id]
	if !ok {
		return Request{}, fmt.Errorf("approvals: get %q: %w", id, ErrNotFound)
	}
	return rec.request(s.opts.clock())
}

func (s *memoryStore) List(ctx context.Context, f Filter) ([]Request, error) {
	if err := checkFilter(f); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("approvals: list: %w", err)
	}
	now := s.opts.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, rec := range s.recs {
		if (f.Label != "" && rec.label != f.Label) || (f.Tool != "" && rec.tool != f.Tool) {
			continue
		}
		r, err := rec.request(now)
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
	now := s.opts.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.recs[id]
	if !ok {
		return Request{}, fmt.Errorf("approvals: decide %q: %w", id, ErrNotFound)
	}
	r, err := rec.request(now)
	if err != nil {
		return Request{}, err
	}
	if r.State != Pending {
		return Request{}, undecided(r)
	}
	d.At = stamp(d.At)
	if d.At.IsZero() {
		d.At = now
	}
	next := *rec
	next.state = string(Denied)
	if d.Approve {
		next.state = string(Approved)
	}
	next.decided, next.approve, next.by, next.reason, next.at = true, d.Approve, d.By, d.Reason, d.At
	*rec = next
	return rec.request(now)
}

func (s *memoryStore) Claim(ctx context.Context, fingerprint string) (Request, bool, error) {
	if fingerprint == "" {
		return Request{}, false, errors.New("approvals: claim: empty fingerprint")
	}
	if err := ctx.Err(); err != nil {
		return Request{}, false, fmt.Errorf("approvals: claim: %w", err)
	}
	now := s.opts.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *record
	var bestReq Request
	for _, rec := range s.recs {
		if rec.fingerprint != fingerprint || rec.state != string(Approved) || !now.Before(rec.expires) {
			continue
		}
		r, err := rec.request(now)
		if err != nil {
			return Request{}, false, err
		}
		if best == nil || newestFirst(r, bestReq) < 0 {
			best, bestReq = rec, r
		}
	}
	if best == nil {
		return Request{}, false, nil
	}
	best.state = string(Used)
	r, err := best.request(now)
	if err != nil {
		return Request{}, false, err
	}
	return r, true, nil
}

// Close does nothing: the requests stay for as long as the store is referenced.
func (s *memoryStore) Close() error { return nil }
