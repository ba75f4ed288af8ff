package console

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcs-go/mcs/approvals"
)

// maxAudit is how many audit records the console keeps for the Audit page and
// for event streams that reconnect.
const maxAudit = 1000

// event is one server-sent event. Audit records have an ID (their sequence
// number) so that a stream that reconnects gets those it missed; the
// notifications ("approvals", "auth") have none.
type event struct {
	id   int64
	name string
	data []byte
}

// hub fans events out to the event streams.
type hub struct {
	mu    sync.Mutex
	seq   int64
	audit []event
	subs  map[chan event]struct{}
}

func newHub() *hub { return &hub{subs: map[chan event]struct{}{}} }

// publish sends an event to every stream. A stream that cannot keep up is
// closed: its browser reconnects and gets the audit records it missed.
func (h *hub) publish(name string, v any) {
	data := []byte("{}")
	if v != nil {
		if b, err := json.Marshal(v); err == nil {
			data = b
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	ev := event{name: name, data: data}
	if name == "audit" {
		h.seq++
		ev.id = h.seq
		h.audit = append(h.audit, ev)
		if len(h.audit) > maxAudit {
			h.audit = h.audit[len(h.audit)-maxAudit:]
		}
	}
	for c := range h.subs {
		select {
		case c <- ev:
		default:
			delete(h.subs, c)
			close(c)
		}
	}
}

// subscribe returns a stream of the events from now on, after the audit
// records later than last.
func (h *hub) subscribe(last int64) (chan event, []event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := make(chan event, 256)
	h.subs[c] = struct{}{}
	var backlog []event
	for _, ev := range h.audit {
		if ev.id > last {
			backlog = append(backlog, ev)
		}
	}
	return c, backlog
}

func (h *hub) unsubscribe(c chan event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[c]; ok {
		delete(h.subs, c)
		close(c)
	}
}

func (h *hub) subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// keepAlive is how often an idle event stream gets a comment, so that proxies
// and the browser keep it open.
var keepAlive = 15 * time.Second

// events serves the event stream: the audit records (replayed after the
// Last-Event-ID the browser sends when it reconnects, or all kept on a first
// connection unless the query says backlog=0), and "approvals" and "auth" notifications. It ends when the
// client goes, or the server closes.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	var last int64
	switch v := r.Header.Get("Last-Event-ID"); {
	case v != "":
		last, _ = strconv.ParseInt(v, 10, 64)
	case r.URL.Query().Get("backlog") == "0":
		last = math.MaxInt64 // a page that shows no audit wants none of the past
	}
	c, backlog := s.hub.subscribe(last)
	defer s.hub.unsubscribe(c)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 1000\n\n")
	for _, ev := range backlog {
		writeEvent(w, ev)
	}
	fl.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-c:
			if !ok {
				return
			}
			writeEvent(w, ev)
			fl.Flush()
		case <-tick.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			fl.Flush()
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}

func writeEvent(w http.ResponseWriter, ev event) {
	if ev.id > 0 {
		fmt.Fprintf(w, "id: %d\n", ev.id)
	}
	// JSON holds no line end: one data line.
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, ev.data)
}

// watchApprovals publishes "approvals" when the requests of the store change
// (other processes share it), checking every second while a page listens.
func (s *Server) watchApprovals(store approvals.Store) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := ""
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		if s.hub.subscribers() == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		list, err := store.List(ctx, approvals.Filter{})
		cancel()
		if err != nil {
			continue
		}
		var b strings.Builder
		for _, r := range list {
			b.WriteString(r.ID + ":" + string(r.State) + ";")
		}
		if b.String() != last {
			last = b.String()
			s.hub.publish("approvals", nil)
		}
	}
}

// auditHandler is the slog.Handler of [Server.AuditLogger]: every record (the
// hooks middleware's, already redacted) becomes an "audit" event.
type auditHandler struct {
	hub    *hub
	attrs  []slog.Attr
	groups []string
}

func (h *auditHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *auditHandler) Handle(_ context.Context, r slog.Record) error {
	rec := map[string]any{"time": r.Time.UTC().Format(time.RFC3339Nano), "level": r.Level.String(), "msg": r.Message}
	fields := map[string]any{}
	target := fields
	for _, g := range h.groups {
		sub := map[string]any{}
		target[g] = sub
		target = sub
	}
	for _, a := range h.attrs {
		putAttr(target, a)
	}
	r.Attrs(func(a slog.Attr) bool { putAttr(target, a); return true })
	rec["fields"] = fields
	h.hub.publish("audit", rec)
	return nil
}

func putAttr(m map[string]any, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		sub := map[string]any{}
		for _, g := range v.Group() {
			putAttr(sub, g)
		}
		if a.Key == "" {
			for k, x := range sub {
				m[k] = x
			}
			return
		}
		m[a.Key] = sub
		return
	}
	switch v.Kind() {
	case slog.KindDuration:
		m[a.Key] = v.Duration().String()
	case slog.KindTime:
		m[a.Key] = v.Time().UTC().Format(time.RFC3339Nano)
	default:
		m[a.Key] = v.Any()
	}
}

func (h *auditHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr{}, h.attrs...), attrs...)
	return &c
}

func (h *auditHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.groups = append(append([]string{}, h.groups...), name)
	return &c
}
