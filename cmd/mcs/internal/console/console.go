package console

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/internal/redact"
	"github.com/mcs-go/mcs/middleware/hooks"
	"github.com/mcs-go/mcs/runner"
	"github.com/mcs-go/mcs/stack"
)

//go:embed assets
var assets embed.FS

// Assets are the files the console serves and renders: its templates, script
// and style sheet.
func Assets() fs.FS { sub, _ := fs.Sub(assets, "assets"); return sub }

// Config configures a [Server].
type Config struct {
	// Hosts are the Host header values the console answers to, the first being
	// the address it is bound to; see [AllowedHosts]. Required.
	Hosts []string
	// Token is the per-launch token of the printed URL; "" draws a random one.
	Token string
	// DecidedBy names who decides approvals in the console, such as the user
	// name of the account; "" is "mcs ui".
	DecidedBy string
	// Model, when set, enables the chat page: the runner asks it, with the
	// stack's driver and the same consent and approvals.
	Model runner.Model
	// Native sends the tools natively in the chat (runner.WithNativeTools).
	Native bool
	// ModelHint says how to point the chat at another endpoint when the model
	// cannot be reached, such as "--base-url URL or OPENAI_BASE_URL".
	ModelHint string
}

// Server is the web console. Create it with [New] before the stack is built,
// give the stack its [Server.Consent] and [Server.AuditLogger], then attach
// the stack with [Server.Attach]. It is an http.Handler; it is safe for
// concurrent use. [Server.Close] ends its event streams.
type Server struct {
	cfg    Config
	hosts  []string
	token  string
	key    []byte
	tmpl   *template.Template
	static http.Handler
	red    *redact.Redactor
	audit  *slog.Logger
	hub    *hub
	mux    *http.ServeMux
	h      http.Handler

	mu        sync.Mutex
	st        *stack.Stack
	driver    mcs.Driver
	buildErr  error
	store     approvals.Store
	storeErr  error
	consents  []*question
	nextQ     int
	signIns   []SignIn             // waiting for the user
	followers map[string]*follower // by scope: the sign-ins followed
	outcomes  map[string]outcome   // by scope: how the last sign-in ended
	chat      *chatSession

	ctx       context.Context // ends with Close: the sign-ins followed
	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

// New returns a console that answers to cfg.Hosts, with no stack attached yet
// (every page says the stack is loading).
func New(cfg Config) (*Server, error) {
	if len(cfg.Hosts) == 0 {
		return nil, errors.New("console: Config.Hosts names no host to answer to")
	}
	tmpl, err := template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, hosts: cfg.Hosts, token: cfg.Token, key: []byte(randomString(32)), tmpl: tmpl,
		static: http.StripPrefix("/assets/", http.FileServerFS(Assets())),
		red:    redact.New(nil, 0), hub: newHub(), done: make(chan struct{}),
		followers: map[string]*follower{}, outcomes: map[string]outcome{},
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if s.token == "" {
		s.token = randomString(24)
	}
	if s.cfg.DecidedBy == "" {
		s.cfg.DecidedBy = "mcs ui"
	}
	s.audit = slog.New(&auditHandler{hub: s.hub})
	s.routes()
	return s, nil
}

// Token is the per-launch token the printed URL carries.
func (s *Server) Token() string { return s.token }

// AuditLogger is the logger the stack's hooks middleware logs its calls to
// (stack.Host.Audit); its records are the Audit page's.
func (s *Server) AuditLogger() *slog.Logger { return s.audit }

// Attach gives the console the stack, its built driver, or the error of a
// build that failed (shown on every page, with the file, line and key). It
// opens the stack's approval store, when it has one, and starts watching it.
func (s *Server) Attach(ctx context.Context, st *stack.Stack, d mcs.Driver, buildErr error) {
	s.mu.Lock()
	s.st, s.driver, s.buildErr = st, d, buildErr
	if st != nil && st.Approvals != nil {
		s.store, s.storeErr = st.ApprovalStore(ctx)
	}
	if s.cfg.Model != nil && d != nil {
		s.chat = &chatSession{}
	}
	store := s.store
	s.mu.Unlock()
	if store != nil {
		go s.watchApprovals(store)
	}
	s.hub.publish("approvals", nil)
}

// Close ends the event streams, the watch of the approval store and the
// sign-ins the console follows; the pages still answer. Safe to call more
// than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { close(s.done); s.cancel() })
	return nil
}

// ServeHTTP serves the console.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.h.ServeHTTP(w, r) }

func (s *Server) routes() {
	m := http.NewServeMux()
	m.Handle("GET /assets/", s.static)
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/tools", http.StatusSeeOther)
	})
	for _, p := range pages {
		m.HandleFunc("GET /"+p.Path, s.page(p))
	}
	m.HandleFunc("POST /api/run", s.apiRun)
	m.HandleFunc("POST /api/process", s.apiProcess)
	m.HandleFunc("GET /api/approvals", s.apiApprovals)
	m.HandleFunc("POST /api/approvals/decide", s.apiDecide)
	m.HandleFunc("POST /api/approvals/run", s.apiRunApproved)
	m.HandleFunc("POST /api/consent", s.apiConsent)
	m.HandleFunc("POST /api/chat", s.apiChat)
	m.HandleFunc("POST /api/chat/reset", s.apiChatReset)
	m.HandleFunc("POST /api/auth/signin", s.apiSignIn)
	m.HandleFunc("POST /api/auth/signout", s.apiSignOut)
	m.HandleFunc("GET /events", s.events)
	s.mux = m
	s.h = s.guard(m)
}

// state returns what is attached, under the lock.
func (s *Server) state() (*stack.Stack, mcs.Driver, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.driver == nil && s.buildErr == nil {
		return s.st, nil, errors.New("the stack is still being built; reload in a moment")
	}
	return s.st, s.driver, s.buildErr
}

func writeJSONStatus(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v) // HTML-escaped: <, > and & as \u003c...
}

func writeJSON(w http.ResponseWriter, v any) { writeJSONStatus(w, http.StatusOK, v) }

// readJSON decodes the body of an API request, at most 16 MiB, into v.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<20))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		writeJSONStatus(w, http.StatusBadRequest, map[string]string{"error": "the request is not the JSON object expected: " + err.Error()})
		return false
	}
	return true
}

// decisionsToAudit records decisions made in the console in the stack's audit
// log (stack.AuditDecisions) and on the Audit page.
func (s *Server) decisionsToAudit(ctx context.Context, store approvals.Store, just ...approvals.Request) error {
	s.mu.Lock()
	st := s.st
	s.mu.Unlock()
	var evs []approvals.Event
	for _, r := range just {
		if ev, ok := approvals.EventOf(r); ok {
			evs = append(evs, ev)
		}
	}
	_ = hooks.SlogDecisions(s.audit)(ctx, evs)
	if st == nil {
		return nil
	}
	_, err := st.AuditDecisions(ctx, store, just...)
	return err
}

var funcs = template.FuncMap{"when": when}

// when is t as the pages show a time; "-" when zero.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}
