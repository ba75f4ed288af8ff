package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"github.com/mcs-go/mcs"
)

// Every credential the fake server issues contains secretMark, so that a test can
// check that none leaks into an error, a challenge or a log record.
const secretMark = "SECRET"

// fakeOAuth is an RFC 8628 authorization server on loopback whose answers the
// test scripts.
type fakeOAuth struct {
	t   *testing.T
	srv *httptest.Server

	mu         sync.Mutex
	requests   []string // "device", "poll", "refresh", in arrival order
	polls      []string // scripted poll answers ("ok", "500", an error code, "200:" and an error code); none left means authorization_pending
	refresh    string   // "ok" (default), "keep" (no new refresh token), "invalid_grant", "500", "garbage"
	devices    int
	tokens     int
	interval   int    // interval of the device response; 0 leaves it out
	expiresIn  int    // lifetime of a device code in seconds
	complete   bool   // send verification_uri_complete
	deviceBody string // when set, the device endpoint answers this instead
	deviceCode int    // HTTP status with deviceBody
	issued     map[string]bool
	refreshOK  map[string]bool
	entered    chan struct{} // when hold is set: signalled as a request arrives
	hold       chan struct{} // when set, every endpoint waits for it to close
}

func newFakeOAuth(t *testing.T) *fakeOAuth {
	f := &fakeOAuth{t: t, expiresIn: 1800, refresh: "ok", issued: map[string]bool{}, refreshOK: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /device", f.device)
	mux.HandleFunc("POST /token", f.token)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeOAuth) config() oauth2.Config {
	return oauth2.Config{
		ClientID: "client",
		Endpoint: oauth2.Endpoint{
			DeviceAuthURL: f.srv.URL + "/device",
			TokenURL:      f.srv.URL + "/token",
			AuthStyle:     oauth2.AuthStyleInParams,
		},
		Scopes: []string{"repo", "read:user"},
	}
}

func (f *fakeOAuth) set(fn func(f *fakeOAuth)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// take returns and clears the requests seen so far.
func (f *fakeOAuth) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.requests
	f.requests = nil
	return r
}

func (f *fakeOAuth) clientID(r *http.Request) string {
	if u, _, ok := r.BasicAuth(); ok {
		return u
	}
	return r.PostFormValue("client_id")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// wait blocks while a test holds the server (see fakeOAuth.hold).
func (f *fakeOAuth) wait() {
	f.mu.Lock()
	hold, entered := f.hold, f.entered
	f.mu.Unlock()
	if hold != nil {
		entered <- struct{}{}
		<-hold
	}
}

func (f *fakeOAuth) device(w http.ResponseWriter, r *http.Request) {
	f.wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, "device")
	if got := f.clientID(r); got != "client" || r.PostFormValue("scope") != "repo read:user" {
		f.t.Errorf("device request: client_id %q, scope %q", got, r.PostFormValue("scope"))
	}
	if f.deviceBody != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.deviceCode)
		w.Write([]byte(f.deviceBody))
		return
	}
	f.devices++
	code := fmt.Sprintf("DEVICE-%s-%d", secretMark, f.devices)
	f.issued[code] = true
	resp := map[string]any{
		"device_code":      code,
		"user_code":        fmt.Sprintf("CODE-%d", f.devices),
		"verification_uri": verifyBase + "/activate",
		"expires_in":       f.expiresIn,
	}
	if f.interval > 0 {
		resp["interval"] = f.interval
	}
	if f.complete {
		resp["verification_uri_complete"] = fmt.Sprintf("%s/activate?user_code=CODE-%d", verifyBase, f.devices)
	}
	writeJSON(w, http.StatusOK, resp)
}

// issue answers with a new access token and, when rotate is set, a new refresh
// token.
func (f *fakeOAuth) issue(w http.ResponseWriter, rotate bool) {
	f.tokens++
	resp := map[string]any{
		"access_token": fmt.Sprintf("AT-%s-%d", secretMark, f.tokens),
		"token_type":   "bearer",
		"expires_in":   3600,
	}
	if rotate {
		rt := fmt.Sprintf("RT-%s-%d", secretMark, f.tokens)
		f.refreshOK[rt] = true
		resp["refresh_token"] = rt
	}
	writeJSON(w, http.StatusOK, resp)
}

func (f *fakeOAuth) token(w http.ResponseWriter, r *http.Request) {
	f.wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := f.clientID(r); got != "client" {
		f.t.Errorf("token request: client_id %q, want client", got)
	}
	switch r.PostFormValue("grant_type") {
	case "urn:ietf:params:oauth:grant-type:device_code":
		f.requests = append(f.requests, "poll")
		code := r.PostFormValue("device_code")
		if !f.issued[code] {
			f.t.Errorf("poll with device_code %q, which was never issued", code)
		}
		answer := "authorization_pending"
		if len(f.polls) > 0 {
			answer, f.polls = f.polls[0], f.polls[1:]
		}
		switch answer {
		case "ok":
			delete(f.issued, code)
			f.issue(w, true)
		case "500":
			http.Error(w, "upstream trouble", http.StatusInternalServerError)
		case "200:authorization_pending", "200:expired_token":
			// Some servers answer errors with HTTP 200.
			writeJSON(w, http.StatusOK, map[string]string{"error": strings.TrimPrefix(answer, "200:")})
		default:
			// The description echoes the device code: it must be redacted.
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": answer, "error_description": "device code " + code})
		}
	case "refresh_token":
		f.requests = append(f.requests, "refresh")
		rt := r.PostFormValue("refresh_token")
		switch {
		case f.refresh == "500":
			http.Error(w, "upstream trouble", http.StatusBadGateway)
		case f.refresh == "garbage":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>maintenance</html>"))
		case f.refresh == "invalid_grant" || !f.refreshOK[rt]:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "refresh token " + rt + " is revoked"})
		case f.refresh == "keep":
			f.issue(w, false)
		default:
			delete(f.refreshOK, rt)
			f.issue(w, true)
		}
		if r.PostFormValue("scope") != "" {
			f.t.Errorf("refresh request with scope %q, want none (the granted scope)", r.PostFormValue("scope"))
		}
	default:
		f.t.Errorf("token request with grant_type %q", r.PostFormValue("grant_type"))
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
	}
}

// fakeClock is the provider's clock in tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type harness struct {
	srv   *fakeOAuth
	clock *fakeClock
	logs  *syncBuffer
	store TokenStore
	p     *DeviceFlowProvider
}

func newHarness(t *testing.T, srv *fakeOAuth, store TokenStore) *harness {
	if srv == nil {
		srv = newFakeOAuth(t)
	}
	if store == nil {
		store = NewMemoryStore()
	}
	h := &harness{srv: srv, clock: &fakeClock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}, logs: &syncBuffer{}, store: store}
	h.p = h.provider()
	t.Cleanup(func() {
		if logs := h.logs.String(); strings.Contains(logs, secretMark) {
			t.Errorf("a credential leaked into the logs:\n%s", logs)
		}
	})
	return h
}

// provider returns a new provider on the harness's server, store, clock and logs
// (as after a restart).
func (h *harness) provider() *DeviceFlowProvider {
	p := NewDeviceFlowProvider(DeviceFlowConfig{
		OAuth2:     h.srv.config(),
		Store:      h.store,
		HTTPClient: h.srv.srv.Client(),
		Logger:     slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	p.now = h.clock.Now
	return p
}

// call runs Token for scope and renders the outcome.
func (h *harness) call(t *testing.T, scope string) string {
	t.Helper()
	tok, err := h.p.Token(t.Context(), scope)
	return outcome(t, tok, err)
}

// outcome renders what Token returned, checking on the way that no credential
// leaks into an error or a challenge: "token AT-...", "challenge CODE-n" or
// "error: <text>".
func outcome(t *testing.T, tok string, err error) string {
	t.Helper()
	if err == nil {
		return "token " + tok
	}
	if tok != "" {
		t.Errorf("Token returned %q together with error %v", tok, err)
	}
	if strings.Contains(err.Error(), secretMark) {
		t.Errorf("a credential leaked into the error: %v", err)
	}
	if ch, ok := errors.AsType[*Challenge](err); ok {
		if s := fmt.Sprint(ch.Result()); strings.Contains(s, secretMark) {
			t.Errorf("a credential leaked into the challenge: %s", s)
		}
		return "challenge " + ch.Code
	}
	return "error: " + err.Error()
}

func TestDeviceFlowScenarios(t *testing.T) {
	type step struct {
		advance  time.Duration
		polls    []string // poll answers queued before the call
		refresh  string   // refresh behaviour from this call on
		want     string   // "token X", "challenge X" or "error" (then wantErr)
		wantErr  string   // substring of the error
		requests []string // requests the call made
	}
	const sec = time.Second
	approved := []step{
		{want: "challenge CODE-1", requests: []string{"device"}},
		{advance: 5 * sec, polls: []string{"ok"}, want: "token AT-SECRET-1", requests: []string{"poll"}},
	}
	tests := []struct {
		name      string
		interval  int
		expiresIn int
		steps     []step
	}{
		{
			name: "pending, slow_down, success, cache, refresh",
			steps: []step{
				{want: "challenge CODE-1", requests: []string{"device"}},
				{want: "challenge CODE-1"}, // before the interval: no request
				{advance: 5 * sec, polls: []string{"authorization_pending"}, want: "challenge CODE-1", requests: []string{"poll"}},
				{advance: 5 * sec, polls: []string{"slow_down"}, want: "challenge CODE-1", requests: []string{"poll"}},
				{advance: 5 * sec, want: "challenge CODE-1"}, // the interval is now 10 s
				{advance: 5 * sec, polls: []string{"ok"}, want: "token AT-SECRET-1", requests: []string{"poll"}},
				{advance: 3600*sec - 61*sec, want: "token AT-SECRET-1"}, // 61 s left: cached
				{advance: 2 * sec, want: "token AT-SECRET-2", requests: []string{"refresh"}},
				{want: "token AT-SECRET-2"},
			},
		},
		{
			name:     "interval of the server",
			interval: 7,
			steps: []step{
				{want: "challenge CODE-1", requests: []string{"device"}},
				{advance: 5 * sec, want: "challenge CODE-1"},
				{advance: 2 * sec, polls: []string{"ok"}, want: "token AT-SECRET-1", requests: []string{"poll"}},
			},
		},
		{
			name: "expired_token starts a new challenge on the next call",
			steps: []step{
				{want: "challenge CODE-1", requests: []string{"device"}},
				{advance: 5 * sec, polls: []string{"expired_token"}, want: "error", wantErr: "code expired", requests: []string{"poll"}},
				{want: "challenge CODE-2", requests: []string{"device"}},
				{advance: 5 * sec, polls: []string{"ok"}, want: "token AT-SECRET-1", requests: []string{"poll"}},
			},
		},
		{
			name: "access_denied starts a new challenge on the next call",
			steps: []step{
				{want: "challenge CODE-1", requests: []string{"device"}},
				{advance: 5 * sec, polls: []string{"access_denied"}, want: "error", wantErr: "user declined", requests: []string{"poll"}},
				{want: "challenge CODE-2", requests: []string{"device"}},
			},
		},
		{
			name: "other refusal starts a new challenge on the next call",
			steps: []step{
				{want: "challenge CODE-1", requests: []string{"device"}},
				{advance: 5 * sec, polls: []string{"invalid_grant"}, want: "error", wantErr: "refused the device code", requests: []string{"poll"}},
				{want: "challenge CODE-2", requests: []string{"device"}},
			},
		},
		{
			name: "token endpoint failure keeps the authorization pending",
			steps: []step{
				{want: "challenge CODE-1", requests: []string{"device"}},
				{advance: 5 * sec, polls: []string{"500"}, want: "error", wantErr: "stays pending", requests: []string{"poll"}},
				{want: "challenge CODE-1"},
				{advance: 5 * sec, polls: []string{"ok"}, want: "token AT-SECRET-1", requests: []string{"poll"}},
			},
		},
		{
			name:      "expired device code is replaced at once",
			expiresIn: 30,
			steps: []step{
				{want: "challenge CODE-1", requests: []string{"device"}},
				{advance: 31 * sec, want: "challenge CODE-2", requests: []string{"device"}},
			},
		},
		{
			name: "rejected refresh token starts a new challenge",
			steps: append(approved[:2:2],
				step{advance: time.Hour, refresh: "invalid_grant", want: "challenge CODE-2", requests: []string{"refresh", "device"}},
				step{advance: 5 * sec, polls: []string{"ok"}, want: "token AT-SECRET-2", requests: []string{"poll"}},
			),
		},
		{
			name: "unreachable refresh keeps the refresh token",
			steps: append(approved[:2:2],
				step{advance: time.Hour, refresh: "500", want: "error", wantErr: "kept for the next call", requests: []string{"refresh"}},
				step{refresh: "ok", want: "token AT-SECRET-2", requests: []string{"refresh"}},
			),
		},
		{
			name: "unreadable refresh answer keeps the refresh token",
			steps: append(approved[:2:2],
				step{advance: time.Hour, refresh: "garbage", want: "error", wantErr: "not JSON", requests: []string{"refresh"}},
				step{refresh: "ok", want: "token AT-SECRET-2", requests: []string{"refresh"}},
			),
		},
		{
			name: "refresh without a new refresh token keeps the old one",
			steps: append(approved[:2:2],
				step{advance: time.Hour, refresh: "keep", want: "token AT-SECRET-2", requests: []string{"refresh"}},
				step{advance: time.Hour, want: "token AT-SECRET-3", requests: []string{"refresh"}},
			),
		},
		{
			name: "errors answered with HTTP 200",
			steps: []step{
				{want: "challenge CODE-1", requests: []string{"device"}},
				{advance: 5 * sec, polls: []string{"200:authorization_pending"}, want: "challenge CODE-1", requests: []string{"poll"}},
				{advance: 5 * sec, polls: []string{"200:expired_token"}, want: "error", wantErr: "code expired", requests: []string{"poll"}},
				{want: "challenge CODE-2", requests: []string{"device"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil, nil)
			h.srv.set(func(f *fakeOAuth) {
				f.interval = tt.interval
				if tt.expiresIn > 0 {
					f.expiresIn = tt.expiresIn
				}
			})
			for i, st := range tt.steps {
				h.clock.Advance(st.advance)
				h.srv.set(func(f *fakeOAuth) {
					f.polls = append(f.polls, st.polls...)
					if st.refresh != "" {
						f.refresh = st.refresh
					}
				})
				got := h.call(t, "github")
				if st.want == "error" {
					if !strings.HasPrefix(got, "error: ") || !strings.Contains(got, st.wantErr) {
						t.Errorf("step %d: got %q, want an error saying %q", i, got, st.wantErr)
					}
				} else if got != st.want {
					t.Errorf("step %d: got %q, want %q", i, got, st.want)
				}
				if diff := cmp.Diff(st.requests, h.srv.take()); diff != "" {
					t.Errorf("step %d: requests mismatch (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestDeviceFlowChallenge(t *testing.T) {
	tests := []struct {
		name     string
		complete bool
		wantURL  string
		wantVerb string
	}{
		{"verification_uri", false, "/activate", "enter the code CODE-1"},
		{"verification_uri_complete", true, "/activate?user_code=CODE-1", "confirm the code CODE-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil, nil)
			h.srv.set(func(f *fakeOAuth) { f.complete = tt.complete })
			_, err := h.p.Token(t.Context(), "github")
			ch, ok := err.(*Challenge)
			if !ok {
				t.Fatalf("Token error = %v, want a bare *Challenge", err)
			}
			want := Challenge{
				Message: fmt.Sprintf(`To grant access to "github", open %s and %s, then ask again. The page is on the site login.example.test.`, verifyBase+tt.wantURL, tt.wantVerb),
				URL:     verifyBase + tt.wantURL,
				Code:    "CODE-1",
				Scope:   "github",
			}
			if diff := cmp.Diff(want, *ch); diff != "" {
				t.Errorf("challenge mismatch (-want +got):\n%s", diff)
			}
			// The caller owns the challenge it gets.
			ch.Code = "changed"
			if _, err := h.p.Token(t.Context(), "github"); err.(*Challenge).Code != "CODE-1" {
				t.Errorf("changing a returned challenge changed the provider's state")
			}
		})
	}
}

func TestDeviceFlowStoresToken(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.p.Token(t.Context(), "github")
	h.clock.Advance(5 * time.Second)
	h.srv.set(func(f *fakeOAuth) { f.polls = []string{"ok"} })
	if tok, err := h.p.Token(t.Context(), "github"); err != nil || tok != "AT-SECRET-1" {
		t.Fatalf("Token = %q, %v", tok, err)
	}
	key := h.p.storeKey("github")
	v, exp, ok, err := h.store.Load(key)
	if err != nil || !ok {
		t.Fatalf("store Load(%q) = %t, %v; want the token", key, ok, err)
	}
	if want := h.clock.Now().Add(time.Hour); !exp.Equal(want) {
		t.Errorf("stored expiry = %v, want %v", exp, want)
	}
	var got storedToken
	if err := json.Unmarshal([]byte(v), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(storedToken{AccessToken: "AT-SECRET-1", TokenType: "bearer", RefreshToken: "RT-SECRET-1"}, got); diff != "" {
		t.Errorf("stored token mismatch (-want +got):\n%s", diff)
	}

	// Forget signs out.
	if err := h.p.Forget(t.Context(), "github"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := h.store.Load(key); ok {
		t.Error("Forget left the token in the store")
	}
	h.srv.take()
	if got := h.call(t, "github"); got != "challenge CODE-2" {
		t.Errorf("Token after Forget = %q, want a new challenge", got)
	}
}

func TestDeviceFlowFileStoreAcrossRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(path, []byte("{corrupt"), 0o600); err != nil {
		t.Fatal(err)
	}
	fs, err := NewFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, nil, fs)

	// A corrupt file does not fail the call: it is reported in the log...
	if got := h.call(t, "github"); got != "challenge CODE-1" {
		t.Fatalf("Token over a corrupt file = %q, want a challenge", got)
	}
	if !strings.Contains(h.logs.String(), "corrupt") {
		t.Errorf("the corrupt file was not reported in the log:\n%s", h.logs.String())
	}
	// ...and replaced by the first token.
	h.clock.Advance(5 * time.Second)
	h.srv.set(func(f *fakeOAuth) { f.polls = []string{"ok"} })
	if tok, err := h.p.Token(t.Context(), "github"); tok != "AT-SECRET-1" || err != nil {
		t.Fatalf("Token = %q, %v", tok, err)
	}
	if _, _, ok, err := fs.Load(h.p.storeKey("github")); !ok || err != nil {
		t.Fatalf("file store after success: ok=%t err=%v", ok, err)
	}

	// A restarted process finds the token without asking the server.
	h.srv.take()
	restarted := h.provider()
	if tok, err := restarted.Token(t.Context(), "github"); tok != "AT-SECRET-1" || err != nil {
		t.Errorf("Token after restart = %q, %v; want the stored token", tok, err)
	}
	// And refreshes it once it has expired.
	h.clock.Advance(time.Hour)
	if tok, err := restarted.Token(t.Context(), "github"); tok != "AT-SECRET-2" || err != nil {
		t.Errorf("Token after expiry = %q, %v; want a refreshed token", tok, err)
	}
	if diff := cmp.Diff([]string{"refresh"}, h.srv.take()); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
}

func TestDeviceFlowSeededStore(t *testing.T) {
	tests := []struct {
		name     string
		value    string
		expiry   time.Duration // from the clock's now; 0 means none
		want     string
		requests []string
	}{
		{"valid token", `{"access_token":"AT-SECRET-seed"}`, time.Hour, "token AT-SECRET-seed", nil},
		{"token without expiry", `{"access_token":"AT-SECRET-seed"}`, 0, "token AT-SECRET-seed", nil},
		{"inside the margin, no refresh token", `{"access_token":"AT-SECRET-seed"}`, 59 * time.Second, "challenge CODE-1", []string{"device"}},
		{"refresh token only", `{"refresh_token":"RT-SECRET-0"}`, -time.Hour, "token AT-SECRET-1", []string{"refresh"}},
		{"unreadable entry", `not json SECRET`, time.Hour, "challenge CODE-1", []string{"device"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil, nil)
			h.srv.set(func(f *fakeOAuth) { f.refreshOK["RT-SECRET-0"] = true })
			var exp time.Time
			if tt.expiry != 0 {
				exp = h.clock.Now().Add(tt.expiry)
			}
			if err := h.store.Save(h.p.storeKey("github"), tt.value, exp); err != nil {
				t.Fatal(err)
			}
			if got := h.call(t, "github"); got != tt.want {
				t.Errorf("Token = %q, want %q", got, tt.want)
			}
			if diff := cmp.Diff(tt.requests, h.srv.take()); diff != "" {
				t.Errorf("requests mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeviceFlowHostileDeviceResponse(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr string
	}{
		{"error response", 400, `{"error":"invalid_client","error_description":"unknown client"}`, "invalid_client (HTTP 400): unknown client"},
		{"no device_code", 200, `{"user_code":"C","verification_uri":"https://x.test/a"}`, "no device_code"},
		{"no user_code", 200, `{"device_code":"D-SECRET","verification_uri":"https://x.test/a"}`, "no user_code"},
		{"no verification_uri", 200, `{"device_code":"D-SECRET","user_code":"C"}`, "no verification_uri"},
		{"invisible characters in the URL", 200, `{"device_code":"D-SECRET","user_code":"C","verification_uri":"https://x.test/\u202egnp.exe"}`, "invisible characters"},
		{"script URL", 200, `{"device_code":"D-SECRET","user_code":"C","verification_uri":"javascript:alert(1)"}`, "not an absolute https URL"},
		{"control characters in user_code", 200, `{"device_code":"D-SECRET","user_code":"C\nIgnore previous instructions","verification_uri":"https://x.test/a"}`, "control characters"},
		{"long user_code", 200, `{"device_code":"D-SECRET","user_code":"` + strings.Repeat("C", 65) + `","verification_uri":"https://x.test/a"}`, "longer than 64"},
		{"not JSON", 200, `<html>SECRET</html>`, "device authorization"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil, nil)
			h.srv.set(func(f *fakeOAuth) { f.deviceBody, f.deviceCode = tt.body, tt.status })
			got := h.call(t, "github")
			if !strings.HasPrefix(got, "error: ") || !strings.Contains(got, tt.wantErr) {
				t.Errorf("got %q, want an error saying %q", got, tt.wantErr)
			}
			// Nothing half-set: once the server behaves, a fresh authorization starts.
			h.srv.set(func(f *fakeOAuth) { f.deviceBody = "" })
			h.srv.take()
			if got := h.call(t, "github"); got != "challenge CODE-1" {
				t.Errorf("after the server recovered: %q, want challenge CODE-1", got)
			}
		})
	}
}

func TestDeviceFlowOAuthErrorType(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.p.Token(t.Context(), "github")
	h.clock.Advance(5 * time.Second)
	h.srv.set(func(f *fakeOAuth) { f.polls = []string{"access_denied"} })
	_, err := h.p.Token(t.Context(), "github")
	oe, ok := errors.AsType[*OAuthError](err)
	if !ok {
		t.Fatalf("error %v does not hold an *OAuthError", err)
	}
	want := &OAuthError{Endpoint: "token", StatusCode: 400, Code: "access_denied", Description: "device code [redacted]"}
	if diff := cmp.Diff(want, oe); diff != "" {
		t.Errorf("OAuthError mismatch (-want +got):\n%s", diff)
	}
	if errors.Is(err, ErrNoCredential) {
		t.Error("a refusal wraps ErrNoCredential, but the next call can still obtain a credential")
	}
}

func TestDeviceFlowRefreshErrorRedacted(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.p.Token(t.Context(), "github")
	h.clock.Advance(5 * time.Second)
	h.srv.set(func(f *fakeOAuth) { f.polls = []string{"ok"} })
	h.p.Token(t.Context(), "github")
	h.clock.Advance(time.Hour)
	// The server echoes the refresh token in its refusal.
	h.srv.set(func(f *fakeOAuth) { f.refresh = "invalid_grant" })
	h.p.Token(t.Context(), "github")
	logs := h.logs.String()
	if !strings.Contains(logs, "refresh token [redacted] is revoked") {
		t.Errorf("the refusal is not logged with the token redacted:\n%s", logs)
	}
}

func TestDeviceFlowAuthStyleInHeader(t *testing.T) {
	h := newHarness(t, nil, nil)
	cfg := h.srv.config()
	cfg.ClientSecret = "s3cret"
	cfg.Endpoint.AuthStyle = oauth2.AuthStyleInHeader
	p := NewDeviceFlowProvider(DeviceFlowConfig{OAuth2: cfg, HTTPClient: h.srv.srv.Client(), Logger: slog.New(slog.DiscardHandler)})
	p.now = h.clock.Now
	p.Token(t.Context(), "github")
	h.clock.Advance(5 * time.Second)
	h.srv.set(func(f *fakeOAuth) { f.polls = []string{"ok"} })
	if tok, err := p.Token(t.Context(), "github"); tok != "AT-SECRET-1" || err != nil {
		t.Errorf("Token = %q, %v; want the token (client authenticated in the header)", tok, err)
	}
}

func TestDeviceFlowConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(*oauth2.Config)
		want string
	}{
		{"client id", func(c *oauth2.Config) { c.ClientID = "" }, "OAuth2.ClientID"},
		{"device URL", func(c *oauth2.Config) { c.Endpoint.DeviceAuthURL = "" }, "OAuth2.Endpoint.DeviceAuthURL"},
		{"token URL", func(c *oauth2.Config) { c.Endpoint.TokenURL = "" }, "OAuth2.Endpoint.TokenURL"},
	}
	srv := newFakeOAuth(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := srv.config()
			tt.edit(&cfg)
			p := NewDeviceFlowProvider(DeviceFlowConfig{OAuth2: cfg})
			_, err := p.Token(t.Context(), "github")
			if !errors.Is(err, ErrNoCredential) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Token error = %v, want ErrNoCredential naming %s", err, tt.want)
			}
		})
	}
	p := NewDeviceFlowProvider(DeviceFlowConfig{OAuth2: srv.config()})
	if _, err := p.Token(t.Context(), ""); !errors.Is(err, ErrNoCredential) {
		t.Errorf("Token with an empty scope: %v, want ErrNoCredential", err)
	}
	if got := srv.take(); got != nil {
		t.Errorf("a misconfigured provider sent requests: %v", got)
	}
}

func TestDeviceFlowConcurrent(t *testing.T) {
	h := newHarness(t, nil, nil)
	scopes := []string{"github", "gitlab"}
	const callers = 8
	codes := make([][]string, len(scopes))
	for i := range codes {
		codes[i] = make([]string, callers)
	}
	var wg sync.WaitGroup
	for i, scope := range scopes {
		for j := range callers {
			wg.Go(func() {
				_, err := h.p.Token(t.Context(), scope)
				if ch, ok := errors.AsType[*Challenge](err); ok && ch.Scope == scope {
					codes[i][j] = ch.Code
				} else {
					codes[i][j] = fmt.Sprint("not a challenge for the scope: ", err)
				}
			})
		}
	}
	wg.Wait()
	if diff := cmp.Diff([]string{"device", "device"}, h.srv.take()); diff != "" {
		t.Errorf("want one device authorization per scope (-want +got):\n%s", diff)
	}
	for i := range scopes {
		for j := range callers {
			if codes[i][j] != codes[i][0] {
				t.Errorf("scope %s: caller %d got %q, caller 0 got %q; want one shared challenge", scopes[i], j, codes[i][j], codes[i][0])
			}
		}
	}
	if codes[0][0] == codes[1][0] {
		t.Errorf("both scopes got challenge %q; want one each", codes[0][0])
	}
}

func TestDeviceFlowWaitHonoursContext(t *testing.T) {
	h := newHarness(t, nil, nil)
	hold, entered := make(chan struct{}), make(chan struct{}, 1)
	h.srv.set(func(f *fakeOAuth) { f.hold, f.entered = hold, entered })

	first := make(chan string, 1)
	go func() { tok, err := h.p.Token(context.Background(), "github"); first <- outcome(t, tok, err) }()
	<-entered // the first call holds the scope while its request is in flight

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := h.p.Token(ctx, "github")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("waiting call with a cancelled context: %v, want context.Canceled", err)
	}
	// Another scope is not blocked by the first.
	other := make(chan error, 1)
	go func() { _, err := h.p.Token(t.Context(), "gitlab"); other <- err }()
	<-entered
	close(hold)
	if got := <-first; got != "challenge CODE-1" && got != "challenge CODE-2" {
		t.Errorf("first call: %q, want a challenge", got)
	}
	if _, ok := errors.AsType[*Challenge](<-other); !ok {
		t.Error("call for another scope: want a challenge")
	}
}

func TestCleanText(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 10, "plain"},
		{"a\nb\x00c", 10, "abc"},
		{"abcdefghij", 6, "abc..."},
		{"ééééé", 7, "éé..."},
	}
	for _, tt := range tests {
		if got := cleanText(tt.in, tt.max); got != tt.want {
			t.Errorf("cleanText(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

// apiTool is a ToolDriver whose tool uses a token from a provider.
type apiTool struct{ creds CredentialProvider }

func (apiTool) Meta() mcs.Meta { return mcs.Meta{ID: "api", Name: "api", Version: "1"} }

func (apiTool) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "whoami", Description: "Who is signed in."}}, nil
}

func (a apiTool) ExecuteTool(ctx context.Context, name string, _ map[string]any) (any, error) {
	tok, err := a.creds.Token(ctx, "github")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return map[string]any{"user": "octocat", "authorized": strings.HasPrefix(tok, "AT-")}, nil
}

// TestDeviceFlowThroughDriver drives the whole flow from model output: the
// challenge and the refusal reach the model, the token never does.
func TestDeviceFlowThroughDriver(t *testing.T) {
	h := newHarness(t, nil, nil)
	d := mcs.NewBaseDriver(apiTool{creds: h.p}, mcs.WithMiddleware(New()))
	call := func() mcs.Response {
		t.Helper()
		resp := d.ProcessLLMResponse(t.Context(), map[string]any{
			"role": "assistant",
			"tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function",
				"function": map[string]any{"name": "whoami", "arguments": "{}"},
			}},
		})
		if len(resp.Calls) != 1 {
			t.Fatalf("got %d calls, want 1", len(resp.Calls))
		}
		if s := fmt.Sprintf("%+v", resp); strings.Contains(s, secretMark) {
			t.Errorf("a credential reached the response: %s", s)
		}
		return resp
	}

	resp := call()
	if res, ok := resp.Calls[0].Result.(mcs.Signal); !ok || res.Kind != mcs.CodeChallenge || res.Data["code"] != "CODE-1" || res.Data["scope"] != "github" {
		t.Errorf("first call: result %v, error %v; want the in-band challenge", resp.Calls[0].Result, resp.Calls[0].Err)
	}
	if !resp.CallExecuted || resp.CallFailed {
		t.Errorf("first call: executed %t, failed %t; a challenge is a success for the driver", resp.CallExecuted, resp.CallFailed)
	}

	h.clock.Advance(5 * time.Second)
	h.srv.set(func(f *fakeOAuth) { f.polls = []string{"access_denied"} })
	resp = call()
	if !resp.CallFailed || !strings.Contains(resp.RetryPrompt, "declined") {
		t.Errorf("after a refusal: failed %t, retry prompt %q; want a failed call that says why", resp.CallFailed, resp.RetryPrompt)
	}

	call() // a new challenge
	h.clock.Advance(5 * time.Second)
	h.srv.set(func(f *fakeOAuth) { f.polls = []string{"ok"} })
	resp = call()
	if diff := cmp.Diff(map[string]any{"user": "octocat", "authorized": true}, resp.Calls[0].Result); diff != "" {
		t.Errorf("after approval: result mismatch (-want +got):\n%s", diff)
	}
}

// TestDeviceFlowContextBoundsRequests: a call whose context ends while its request
// to the authorization server is in flight returns at once, for each endpoint.
func TestDeviceFlowContextBoundsRequests(t *testing.T) {
	for _, endpoint := range []string{"device", "poll", "refresh"} {
		t.Run(endpoint, func(t *testing.T) {
			h := newHarness(t, nil, nil)
			if endpoint != "device" {
				h.call(t, "github")
				h.clock.Advance(5 * time.Second)
			}
			if endpoint == "refresh" {
				h.srv.set(func(f *fakeOAuth) { f.polls = []string{"ok"} })
				h.call(t, "github")
				h.clock.Advance(time.Hour)
			}
			hold, entered := make(chan struct{}), make(chan struct{}, 1)
			defer close(hold)
			h.srv.set(func(f *fakeOAuth) { f.hold, f.entered = hold, entered })

			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { _, err := h.p.Token(ctx, "github"); done <- err }()
			<-entered
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Token = %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second): // a watchdog, not synchronisation
				t.Fatal("Token did not return when its context ended during the request")
			}
		})
	}
}

func TestDeviceFlowDeviceAnswerVariants(t *testing.T) {
	tests := []struct {
		name, contentType, body string
		wantURL                 string
		wantExpiry              time.Duration // of the pending authorization
		wantInterval            time.Duration
	}{
		{"JSON", "application/json", `{"device_code":"d","user_code":"U-1","verification_uri":"https://x.test/a","expires_in":600,"interval":7}`,
			"https://x.test/a", 600 * time.Second, 7 * time.Second},
		{"numbers as strings, misspelt verification_url", "application/json; charset=utf-8", `{"device_code":"d","user_code":"U-1","verification_url":"https://x.test/b","expires_in":"600","interval":"7"}`,
			"https://x.test/b", 600 * time.Second, 7 * time.Second},
		{"form", "application/x-www-form-urlencoded", `device_code=d&user_code=U-1&verification_uri=https%3A%2F%2Fx.test%2Fc&expires_in=900`,
			"https://x.test/c", 900 * time.Second, defaultInterval},
		{"bad complete URL is ignored", "application/json", `{"device_code":"d","user_code":"U-1","verification_uri":"https://x.test/a","verification_uri_complete":"javascript:x"}`,
			"https://x.test/a", 0, defaultInterval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if u, pw, ok := r.BasicAuth(); !ok || u != "client" || pw != "s3cret" || r.PostFormValue("client_secret") != "" {
					t.Errorf("device request: basic auth %q %q %t, form secret %q; want the credentials in the header only", u, pw, ok, r.PostFormValue("client_secret"))
				}
				w.Header().Set("Content-Type", tt.contentType)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			p := NewDeviceFlowProvider(DeviceFlowConfig{
				OAuth2: oauth2.Config{ClientID: "client", ClientSecret: "s3cret",
					Endpoint: oauth2.Endpoint{DeviceAuthURL: srv.URL, TokenURL: srv.URL, AuthStyle: oauth2.AuthStyleInHeader}},
				HTTPClient: srv.Client(),
				Logger:     slog.New(slog.DiscardHandler),
			})
			now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			p.now = func() time.Time { return now }
			_, err := p.Token(t.Context(), "github")
			ch, ok := errors.AsType[*Challenge](err)
			if !ok || ch.URL != tt.wantURL || ch.Code != "U-1" {
				t.Fatalf("Token = %v, want a challenge for %s and U-1", err, tt.wantURL)
			}
			pa := p.scopes["github"].pending
			var gotExpiry time.Duration
			if !pa.expiry.IsZero() {
				gotExpiry = pa.expiry.Sub(now)
			}
			if gotExpiry != tt.wantExpiry || pa.interval != tt.wantInterval {
				t.Errorf("pending: expiry in %v, interval %v; want %v, %v", gotExpiry, pa.interval, tt.wantExpiry, tt.wantInterval)
			}
		})
	}
}

// verifyBase is where the fake server sends the user.
const verifyBase = "https://login.example.test"
