// Package demo is the embedded demo of the mcs command: a pet store API served on
// loopback with its data in memory, and a small CSV data set, declared in a stack
// file with hooks (audit to stderr) and permission (reads allowed, writes asked).
package demo

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcs-go/mcs/cmd/mcs/internal/tomlstr"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// APIKey is the key the demo store accepts for writes; the demo stack reads it
// from MCS_TOKEN_PETS (its REST driver is labelled pets). It is not a secret:
// the store lives in the process and its data in memory.
const APIKey = "demo-key"

//go:embed petstore.json
var spec []byte

//go:embed data/*.csv
var data embed.FS

// Demo is a running demo: the store's server and the extracted data set.
type Demo struct {
	// URL is the base URL of the store's server, such as http://127.0.0.1:40123.
	URL string
	// Dir is the directory of the CSV data set.
	Dir string

	srv  *http.Server
	done chan struct{}
}

// Start serves the store on a loopback port and writes the CSV data set to a new
// temporary directory. Close stops both.
func Start() (*Demo, error) {
	dir, err := os.MkdirTemp("", "mcs-demo-")
	if err != nil {
		return nil, fmt.Errorf("demo: create the data directory: %w", err)
	}
	entries, err := data.ReadDir("data")
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("demo: %w", err)
	}
	for _, e := range entries {
		b, err := data.ReadFile("data/" + e.Name())
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600)
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("demo: write the data set: %w", err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("demo: listen on loopback: %w", err)
	}
	d := &Demo{URL: "http://" + ln.Addr().String(), Dir: dir, done: make(chan struct{})}
	d.srv = &http.Server{Handler: NewStore().Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(d.done)
		_ = d.srv.Serve(ln)
	}()
	return d, nil
}

// Stack returns the demo's stack file.
func (d *Demo) Stack() []byte {
	return []byte(fmt.Sprintf(`# The embedded demo stack of mcs: a pet store API and a CSV data set.
[[driver]]
label = "pets"
type = "rest"
spec = %s
credentials = "env"          # writes need MCS_TOKEN_PETS=%s (the label in upper case)

[[driver]]
label = "shelter"
type = "csv"
root = %s

[middleware]
order = ["hooks", "validate", "permission", "auth"]   # validate: bad arguments never reach the API
[middleware.hooks]
audit_log = "-"              # audit lines on stderr
[middleware.permission]
read_only = true             # reads (GET, every CSV tool) run without asking
ask = true                   # every other call (the writes) is asked
`, tomlstr.Quote(d.URL+"/openapi.json"), APIKey, tomlstr.Quote(d.Dir)))
}

// Close stops the server and removes the data set.
func (d *Demo) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := d.srv.Shutdown(ctx)
	<-d.done
	return errors.Join(err, os.RemoveAll(d.Dir))
}

// Pet is one pet of the store.
type Pet struct {
	ID      int    `json:"id"`
	Name    string `json:"name"`
	Species string `json:"species"`
	Status  string `json:"status"`
}

// Store is the pet store's data, in memory. It is safe for concurrent use.
type Store struct {
	mu   sync.Mutex
	pets map[int]Pet
	next int
}

// NewStore returns a store with five pets.
func NewStore() *Store {
	s := &Store{pets: map[int]Pet{}, next: 1}
	for _, p := range []Pet{
		{Name: "Mimi", Species: "cat", Status: "available"},
		{Name: "Rex", Species: "dog", Status: "available"},
		{Name: "Tom", Species: "cat", Status: "pending"},
		{Name: "Bella", Species: "dog", Status: "sold"},
		{Name: "Kiki", Species: "bird", Status: "available"},
	} {
		p.ID = s.next
		s.pets[p.ID] = p
		s.next++
	}
	return s
}

var statuses = []string{"available", "pending", "sold"}

// Handler serves the spec at /openapi.json and the API under /api.
func (s *Store) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(spec)
	})
	mux.HandleFunc("GET /api/pets/findByStatus", s.find)
	mux.HandleFunc("GET /api/pets/{petId}", s.get)
	mux.HandleFunc("DELETE /api/pets/{petId}", s.keyed(s.delete))
	mux.HandleFunc("POST /api/pets", s.keyed(s.add))
	mux.HandleFunc("GET /api/store/inventory", s.inventory)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("mcs demo pet store: the spec is at /openapi.json\n"))
	})
	return mux
}

func (s *Store) keyed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-API-Key") != APIKey {
			http.Error(w, `{"error":"missing or wrong API key; the demo key is `+APIKey+`"}`, http.StatusUnauthorized)
			return
		}
		h(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func (s *Store) find(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	if !slices.Contains(statuses, status) {
		fail(w, http.StatusBadRequest, "status must be one of available, pending, sold")
		return
	}
	limit := 20
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 100 {
			fail(w, http.StatusBadRequest, "limit must be an integer from 1 to 100")
			return
		}
		limit = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Pet{}
	for id := 1; id < s.next && len(out) < limit; id++ {
		if p, ok := s.pets[id]; ok && p.Status == status {
			out = append(out, p)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Store) id(w http.ResponseWriter, r *http.Request) (int, bool) {
	id, err := strconv.Atoi(r.PathValue("petId"))
	if err != nil || id < 1 {
		fail(w, http.StatusBadRequest, "petId must be a positive integer")
		return 0, false
	}
	return id, true
}

func (s *Store) get(w http.ResponseWriter, r *http.Request) {
	id, ok := s.id(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	p, found := s.pets[id]
	s.mu.Unlock()
	if !found {
		fail(w, http.StatusNotFound, "no pet with id "+strconv.Itoa(id))
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Store) delete(w http.ResponseWriter, r *http.Request) {
	id, ok := s.id(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	_, found := s.pets[id]
	delete(s.pets, id)
	s.mu.Unlock()
	if !found {
		fail(w, http.StatusNotFound, "no pet with id "+strconv.Itoa(id))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Store) add(w http.ResponseWriter, r *http.Request) {
	var p Pet
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	if err := dec.Decode(&p); err != nil {
		fail(w, http.StatusBadRequest, "the body must be a JSON object with a name")
		return
	}
	p.Name = strings.TrimSpace(p.Name)
	if p.Name == "" {
		fail(w, http.StatusBadRequest, "name is required")
		return
	}
	if p.Species == "" {
		p.Species = "cat"
	}
	if p.Status == "" {
		p.Status = "available"
	}
	if !slices.Contains(statuses, p.Status) {
		fail(w, http.StatusBadRequest, "status must be one of available, pending, sold")
		return
	}
	s.mu.Lock()
	p.ID = s.next
	s.next++
	s.pets[p.ID] = p
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, p)
}

func (s *Store) inventory(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	counts := map[string]int{}
	for _, p := range s.pets {
		counts[p.Status]++
	}
	writeJSON(w, http.StatusOK, counts)
}
