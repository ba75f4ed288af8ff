package rest

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/auth"
)

// secrets are the credentials of the security fixture, one per scheme.
var secrets = map[string]string{
	"headerKey": "hk-secret-1",
	"queryKey":  "qk-secret-2",
	"cookieKey": "ck-secret-3",
	"bearer":    "bearer-secret-4",
	"basic":     "ann:pa55word",
	"oauth":     "oauth-secret-5",
	"oidc":      "oidc-secret-6",
}

// schemeScopes binds each scheme of the security fixture to the scope of the
// same name, as an operator does with Config.Scopes.
var schemeScopes = map[string]string{
	"headerKey": "headerKey", "queryKey": "queryKey", "cookieKey": "cookieKey", "bearer": "bearer",
	"basic": "basic", "oauth": "oauth", "oidc": "oidc", "nowhere": "nowhere",
}

// recordingProvider serves tokens from a map and records the scopes asked.
type recordingProvider struct {
	tokens map[string]string
	mu     sync.Mutex
	asked  []string
}

func (p *recordingProvider) Token(_ context.Context, scope string) (string, error) {
	p.mu.Lock()
	p.asked = append(p.asked, scope)
	p.mu.Unlock()
	if tok, ok := p.tokens[scope]; ok {
		return tok, nil
	}
	return "", fmt.Errorf("%w for %q", auth.ErrNoCredential, scope)
}

func (p *recordingProvider) scopes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.asked)
}

func securityAPI(t *testing.T, creds auth.CredentialProvider, respond http.HandlerFunc) (*apiServer, *ToolDriver) {
	t.Helper()
	api := newAPI(t, respond)
	td := mustToolDriver(t, Config{Spec: fixture(t, "security.yaml"), BaseURL: api.URL, Scopes: schemeScopes, Credentials: creds})
	return api, td
}

func TestSecuritySchemes(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("ann:pa55word"))
	tests := []struct {
		tool  string
		args  map[string]any
		want  recorded
		asked []string
	}{
		{"withHeaderKey", nil, recorded{Method: "GET", URI: "/header", Header: hdr("X-Api-Key", "hk-secret-1")}, []string{"headerKey"}},
		{"withQueryKey", map[string]any{"q": "x"}, recorded{Method: "GET", URI: "/query?api_key=qk-secret-2&q=x", Header: hdr()}, []string{"queryKey"}},
		{"withCookieKey", map[string]any{"theme": "dark"}, recorded{Method: "GET", URI: "/cookie", Header: hdr("Cookie", "theme=dark; sid=ck-secret-3")}, []string{"cookieKey"}},
		{"withBearer", nil, recorded{Method: "GET", URI: "/bearer", Header: hdr("Authorization", "Bearer bearer-secret-4")}, []string{"bearer"}},
		{"withBasic", nil, recorded{Method: "GET", URI: "/basic", Header: hdr("Authorization", basic)}, []string{"basic"}},
		{"withOAuth2", nil, recorded{Method: "GET", URI: "/oauth", Header: hdr("Authorization", "Bearer oauth-secret-5")}, []string{"oauth"}},
		{"withOpenIDConnect", nil, recorded{Method: "GET", URI: "/oidc", Header: hdr("Authorization", "Bearer oidc-secret-6")}, []string{"oidc"}},
		{"withBoth", nil, recorded{Method: "GET", URI: "/both?api_key=qk-secret-2", Header: hdr("X-Api-Key", "hk-secret-1")}, []string{"headerKey", "queryKey"}},
		{"withEither", nil, recorded{Method: "GET", URI: "/either", Header: hdr("Authorization", "Bearer bearer-secret-4")}, []string{"bearer"}},
		{"withOptional", nil, recorded{Method: "GET", URI: "/optional", Header: hdr("Authorization", "Bearer bearer-secret-4")}, []string{"bearer"}},
		{"publicOp", nil, recorded{Method: "GET", URI: "/public", Header: hdr()}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			p := &recordingProvider{tokens: secrets}
			api, td := securityAPI(t, p, nil)
			if _, err := td.ExecuteTool(context.Background(), tc.tool, tc.args); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]recorded{tc.want}, api.requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.asked, p.scopes()); diff != "" {
				t.Errorf("scopes asked (-want +got):\n%s", diff)
			}
		})
	}
}

// When the first alternative has no credential the next one is used; an
// empty alternative allows anonymous access.
func TestSecurityAlternatives(t *testing.T) {
	p := &recordingProvider{tokens: map[string]string{"basic": "ann:pa55word"}}
	api, td := securityAPI(t, p, nil)
	ctx := context.Background()
	for _, tool := range []string{"withEither", "withOptional"} {
		if _, err := td.ExecuteTool(ctx, tool, nil); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
	}
	want := []recorded{
		{Method: "GET", URI: "/either", Header: hdr("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("ann:pa55word")))},
		{Method: "GET", URI: "/optional", Header: hdr()},
	}
	if diff := cmp.Diff(want, api.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestSecurityFailures(t *testing.T) {
	tests := []struct {
		name   string
		tool   string
		tokens map[string]string
		is     error
		want   string
	}{
		{"no credential", "withHeaderKey", nil, auth.ErrNoCredential, `credential for security scheme "headerKey": no credential for "headerKey"`},
		{"empty token", "withBearer", map[string]string{"bearer": ""}, auth.ErrNoCredential, `credential for security scheme "bearer": no credential (the provider returned an empty token)`},
		{"one of two missing", "withBoth", map[string]string{"headerKey": "k1234"}, auth.ErrNoCredential, `"queryKey"`},
		{"undefined scheme", "withUndefined", secrets, nil, `security scheme "nowhere" is not defined`},
		{"token with a line break", "withBearer", map[string]string{"bearer": "abcd\r\nX-Evil: 1"}, nil, "contains a line break"},
		{"cookie-unsafe token", "withCookieKey", map[string]string{"cookieKey": "a;b=c"}, nil, "characters a cookie cannot carry"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api, td := securityAPI(t, &recordingProvider{tokens: tc.tokens}, nil)
			_, err := td.ExecuteTool(context.Background(), tc.tool, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error = %v, want it to wrap %v", err, tc.is)
			}
			if n := len(api.requests()); n != 0 {
				t.Errorf("%d requests sent, want none", n)
			}
			for _, s := range tc.tokens {
				if s != "" && strings.Contains(err.Error(), s) {
					t.Errorf("the error shows the credential: %v", err)
				}
			}
		})
	}
}

// Without a provider, requests go out without credentials.
func TestNoProvider(t *testing.T) {
	api, td := securityAPI(t, nil, nil)
	if _, err := td.ExecuteTool(context.Background(), "withBearer", nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]recorded{{Method: "GET", URI: "/bearer", Header: hdr()}}, api.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// A challenge from the provider travels up unchanged, so that the auth
// middleware can show it; a challenge is preferred over a missing credential
// of an earlier alternative.
func TestChallengeTravelsUp(t *testing.T) {
	ch := &auth.Challenge{Message: "open the URL and enter the code", URL: "https://auth.example.com/device", Code: "WDJB-MJHT", Scope: "basic"}
	p := providerFunc(func(_ context.Context, scope string) (string, error) {
		if scope == "basic" {
			return "", ch
		}
		return "", auth.ErrNoCredential
	})
	api, td := securityAPI(t, p, nil)
	_, err := td.ExecuteTool(context.Background(), "withEither", nil)
	if err != ch {
		t.Fatalf("error = %#v, want the provider's challenge itself", err)
	}

	d, err := New(Config{Spec: fixture(t, "security.yaml"), BaseURL: api.URL, Scopes: schemeScopes, Credentials: p}, mcs.WithMiddleware(auth.New()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.ExecuteTool(context.Background(), "withBasic", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ch.Result(), res); diff != "" {
		t.Errorf("result through the auth middleware (-want +got):\n%s", diff)
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

// Credentials never appear in results or errors, whatever the server or the
// transport echoes.
func TestCredentialsNeverLeak(t *testing.T) {
	echo := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			fmt.Fprintf(w, "%s %s\n", r.Method, r.RequestURI)
			_ = r.Header.Write(w)
		}
	}
	leaks := func(s string) []string {
		var out []string
		all := []string{
			"static-secret-7", "pw-secret-8", "pa55word",
			base64.StdEncoding.EncodeToString([]byte("ann:pa55word")),
			base64.StdEncoding.EncodeToString([]byte("user:pw-secret-8")),
		}
		for _, v := range secrets {
			all = append(all, v)
		}
		for _, v := range all {
			if strings.Contains(s, v) {
				out = append(out, v)
			}
		}
		return out
	}
	tools := []string{"withHeaderKey", "withQueryKey", "withCookieKey", "withBearer", "withBasic", "withOAuth2", "withOpenIDConnect", "withBoth"}
	headers := map[string]string{"X-Api-Token": "static-secret-7", "X-Client": "mcs-client"}

	for _, status := range []int{200, 500} {
		api := newAPI(t, echo(status))
		// The password in BaseURL is sent as basic authentication when no
		// scheme sets Authorization.
		base := strings.Replace(api.URL, "http://", "http://user:pw-secret-8@", 1)
		td := mustToolDriver(t, Config{Spec: fixture(t, "security.yaml"), BaseURL: base, Scopes: schemeScopes, Credentials: auth.NewStaticProvider(secrets), Headers: headers})
		for _, tool := range tools {
			res, err := td.ExecuteTool(context.Background(), tool, nil)
			text := fmt.Sprint(res, err)
			if l := leaks(text); l != nil {
				t.Errorf("status %d, %s: the output shows %q:\n%s", status, tool, l, text)
			}
			// Every configured header value is a secret (X-Client too); the
			// rest of the echo is kept.
			if !strings.Contains(text, redacted) || strings.Contains(text, "mcs-client") || !strings.Contains(text, "Go-http-client") {
				t.Errorf("status %d, %s: want the echo with credentials replaced by %s:\n%s", status, tool, redacted, text)
			}
		}
	}

	// The transport fails and its error quotes the request.
	failing := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, fmt.Errorf("proxy refused %s with %q", r.URL, r.Header.Get("Authorization"))
	})
	td := mustToolDriver(t, Config{
		Spec: fixture(t, "security.yaml"), BaseURL: "http://user:pw-secret-8@api.test",
		Scopes: schemeScopes, Credentials: auth.NewStaticProvider(secrets), HTTPClient: &http.Client{Transport: failing},
	})
	for _, tool := range tools {
		_, err := td.ExecuteTool(context.Background(), tool, nil)
		if err == nil {
			t.Fatalf("%s: no error from a failing transport", tool)
		}
		if l := leaks(err.Error()); l != nil {
			t.Errorf("%s: the error shows %q: %v", tool, l, err)
		}
	}
}

// A response body echoing a credential across the MaxResponseBytes cut does
// not show part of it, however long the credential.
func TestCredentialAcrossTheCut(t *testing.T) {
	api := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "0123456789"+r.Header.Get("Authorization"))
	})
	for _, token := range []string{"bearer-secret-4", strings.Repeat("jwt.", 5000)} {
		td := mustToolDriver(t, Config{
			Spec: fixture(t, "security.yaml"), BaseURL: api.URL, MaxResponseBytes: 20,
			Scopes: schemeScopes, Credentials: auth.NewStaticProvider(map[string]string{"bearer": token}),
		})
		res, err := td.ExecuteTool(context.Background(), "withBearer", nil)
		if err != nil {
			t.Fatal(err)
		}
		want := "0123456789Bearer [RE\n[response truncated: the body is longer than 20 bytes; only the first 20 bytes are shown]"
		if res != want {
			t.Errorf("token of %d bytes: result = %q, want %q", len(token), res, want)
		}
	}
}

// A credential the server echoes only in part, past the cut, does not move into
// view when the credentials before it shrink to the marker.
func TestPartialCredentialAfterTheCut(t *testing.T) {
	token := "tok" + strings.Repeat("0123456789", 10) // 103 bytes
	tests := []struct {
		name   string
		status int
		max    int64
		body   string
		want   string
	}{
		{
			// 201 bytes are shown; 500+103 are read, which end inside the sixth copy.
			name: "result", status: 200, max: int64(2*len(token) - 5), body: strings.Repeat(token, 10),
			want: "[REDACTED][REDACTED]\n[response truncated: the body is longer than 201 bytes; only the first 201 bytes are shown]",
		},
		{
			// 500 bytes are quoted; 500+103 are read, which end inside the fifth copy.
			name: "error", status: 500, max: 1, body: strings.Repeat("x", 100) + strings.Repeat(token, 6),
			want: "500 Internal Server Error: " + strings.Repeat("x", 100) + strings.Repeat("[REDACTED]", 4),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			})
			td := mustToolDriver(t, Config{
				Spec: fixture(t, "security.yaml"), BaseURL: api.URL, MaxResponseBytes: tc.max,
				Scopes: schemeScopes, Credentials: auth.NewStaticProvider(map[string]string{"bearer": token}),
			})
			res, err := td.ExecuteTool(context.Background(), "withBearer", nil)
			if got := fmt.Sprint(res, err); !strings.Contains(got, tc.want) || strings.Contains(got, token[:4]) {
				t.Errorf("output = %q, want %q and no part of the credential", got, tc.want)
			}
		})
	}
}

// User info in BaseURL, and in a SpecURL that the server URLs resolve against,
// is sent as basic authentication and never shown, also without a password.
func TestUserInfoNeverLeaks(t *testing.T) {
	echo := func(w http.ResponseWriter, r *http.Request) {
		user, pw, _ := r.BasicAuth()
		fmt.Fprintf(w, "%s|%s|%s", r.Header.Get("Authorization"), user, pw)
	}
	const pat = "ghp_patvalue123"
	tests := []struct {
		name     string
		userinfo string
		base     bool // in BaseURL, else in SpecURL
		want     string
	}{
		{"token as user name in BaseURL", pat + "@", true, "Basic [REDACTED]|[REDACTED]|"},
		{"password in SpecURL", "ann:pa55word@", false, "Basic [REDACTED]|ann|[REDACTED]"},
		{"token as user name in SpecURL", pat + "@", false, "Basic [REDACTED]|[REDACTED]|"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := newAPI(t, echo)
			withInfo := func(u string) string { return strings.Replace(u, "http://", "http://"+tc.userinfo, 1) }
			cfg := Config{SpecURL: withInfo(api.serveSpec("/openapi.yaml", fixture(t, "petstore.yaml")))}
			if tc.base {
				cfg.SpecURL = api.serveSpec("/openapi.yaml", fixture(t, "petstore.yaml"))
				cfg.BaseURL = withInfo(api.URL)
			}
			res, err := mustToolDriver(t, cfg).ExecuteTool(context.Background(), "get_store_inventory", nil)
			if err != nil || res != tc.want {
				t.Errorf("result = %q, %v; want %q", res, err, tc.want)
			}
		})
	}
}

// The password of basic credentials is removed even when the server echoes it
// decoded, and when the provider gives the credentials already encoded.
func TestBasicPasswordNotEchoed(t *testing.T) {
	api := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
		user, pw, _ := r.BasicAuth()
		fmt.Fprintf(w, "user %s, password %s, pair %s:%s", user, pw, user, pw)
	})
	want := "user ann, password [REDACTED], pair [REDACTED]"
	for _, token := range []string{"ann:pa55word", base64.StdEncoding.EncodeToString([]byte("ann:pa55word"))} {
		td := mustToolDriver(t, Config{
			Spec: fixture(t, "security.yaml"), BaseURL: api.URL,
			Scopes: schemeScopes, Credentials: auth.NewStaticProvider(map[string]string{"basic": token}),
		})
		res, err := td.ExecuteTool(context.Background(), "withBasic", nil)
		if err != nil || res != want {
			t.Errorf("token %q: result = %q, %v; want %q", token, res, err, want)
		}
	}
}

// Whatever the server puts in the status line or the Content-Type, the
// results that quote them show no credential.
func TestStatusLineRedacted(t *testing.T) {
	tests := []struct {
		status string
		ctype  string
		body   string
		want   string
	}{
		{"204 bearer-secret-4", "", "", "204 [REDACTED] (empty body)"},
		{"200 OK", "image/png; x=bearer-secret-4", "\xff\xfe", "200 OK: binary response of 2 bytes (image/png; x=[REDACTED]), not shown"},
	}
	for _, tc := range tests {
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			code, _, _ := strings.Cut(tc.status, " ")
			n := 0
			fmt.Sscan(code, &n)
			return &http.Response{StatusCode: n, Status: tc.status, Header: http.Header{"Content-Type": {tc.ctype}},
				Body: io.NopCloser(strings.NewReader(tc.body)), Request: r}, nil
		})
		td := mustToolDriver(t, Config{
			Spec: fixture(t, "security.yaml"), BaseURL: "http://api.test", HTTPClient: &http.Client{Transport: rt},
			Scopes: schemeScopes, Credentials: auth.NewStaticProvider(secrets),
		})
		res, err := td.ExecuteTool(context.Background(), "withBearer", nil)
		if err != nil || res != tc.want {
			t.Errorf("status %q: result = %q, %v; want %q", tc.status, res, err, tc.want)
		}
	}
}
