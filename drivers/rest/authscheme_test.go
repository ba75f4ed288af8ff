package rest

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/auth"
)

// unsecuredSpec declares no security scheme, as GitHub's description does; its
// /public operation is declared anonymous and its /secured one has a scheme of
// its own.
var unsecuredSpec = []byte(`openapi: 3.0.3
info: {title: Unsecured, version: "1"}
paths:
  /user:
    get:
      operationId: getUser
      responses: {"200": {description: ok}}
  /public:
    get:
      operationId: getPublic
      security: []
      responses: {"200": {description: ok}}
`)

var partlySecuredSpec = []byte(string(unsecuredSpec) + `  /secured:
    get:
      operationId: getSecured
      security: [{key: []}]
      responses: {"200": {description: ok}}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Doc-Key}
`)

// TestAttackCredentialsGoNowhere: a driver given credentials for a document
// that declares no security scheme would send every call without them, and its
// healthcheck would say OK. Loading the document fails instead, cold and from
// the tool-table cache, with an error that names Config.AuthScheme.
func TestAttackCredentialsGoNowhere(t *testing.T) {
	provider := auth.NewStaticProvider(map[string]string{"github": "gh-token-1"})
	check := func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, ErrNoSecurityScheme) || !strings.Contains(err.Error(), "Config.AuthScheme") || !strings.Contains(err.Error(), "auth_scheme") {
			t.Errorf("err = %v, want ErrNoSecurityScheme naming Config.AuthScheme and auth_scheme", err)
		}
	}
	api := newAPI(t, nil)
	t.Run("cold", func(t *testing.T) {
		td := mustToolDriver(t, Config{Spec: unsecuredSpec, BaseURL: api.URL, Credentials: provider, Name: "github", NoCache: true})
		_, err := td.ListTools(context.Background())
		check(t, err)
		_, err = td.ExecuteTool(context.Background(), "getUser", nil)
		check(t, err)
		if n := len(api.requests()); n != 0 {
			t.Errorf("the API received %d requests", n)
		}
	})
	t.Run("warm", func(t *testing.T) {
		dir := t.TempDir()
		// A driver without credentials writes the cache entry.
		if _, err := mustToolDriver(t, Config{Spec: unsecuredSpec, BaseURL: api.URL, CacheDir: dir}).ListTools(context.Background()); err != nil {
			t.Fatal(err)
		}
		td := mustToolDriver(t, Config{Spec: unsecuredSpec, BaseURL: api.URL, Credentials: provider, Name: "github", CacheDir: dir})
		_, err := td.ListTools(context.Background())
		check(t, err)
	})
	t.Run("one secured operation is enough", func(t *testing.T) {
		td := mustToolDriver(t, Config{Spec: partlySecuredSpec, BaseURL: api.URL, Credentials: provider, Name: "github", NoCache: true})
		if _, err := td.ListTools(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("filtered out", func(t *testing.T) {
		// The secured operation is not listed: nothing listed takes credentials.
		td := mustToolDriver(t, Config{Spec: partlySecuredSpec, BaseURL: api.URL, Credentials: provider, Name: "github", NoCache: true, IncludePaths: []string{"/user"}})
		_, err := td.ListTools(context.Background())
		check(t, err)
	})
}

// TestAuthScheme: Config.AuthScheme sends the credential of the driver's own
// scope, where it says, on the operations the document gives no security
// requirement; an operation declared anonymous gets none, one with a scheme of
// the document's keeps it, and an echoed credential is redacted.
func TestAuthScheme(t *testing.T) {
	const tok = "gh-Token-42"
	provider := providerFunc(func(_ context.Context, scope string) (string, error) {
		switch scope {
		case "github":
			return tok, nil
		case "basic":
			return "octo:pass-word-9", nil
		}
		return "", auth.ErrNoCredential
	})
	echo := func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(r.Header.Get("Authorization") + r.Header.Get("X-Api-Token") + r.URL.RawQuery))
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("octo:pass-word-9"))
	for _, tc := range []struct {
		scheme, name string
		header       http.Header // want, of the Authorization and X-Api-Token headers
		uri          string
	}{
		{"bearer", "github", hdr("Authorization", "Bearer "+tok), "/user"},
		{"Bearer", "github", hdr("Authorization", "Bearer "+tok), "/user"},
		{"basic", "basic", hdr("Authorization", basic), "/user"},
		{"header:X-Api-Token", "github", hdr("X-Api-Token", tok), "/user"},
		{"query:access_token", "github", http.Header{}, "/user?access_token=" + tok},
	} {
		t.Run(tc.scheme, func(t *testing.T) {
			api := newAPI(t, echo)
			td := mustToolDriver(t, Config{Spec: partlySecuredSpec, BaseURL: api.URL, Credentials: provider, Name: tc.name, AuthScheme: tc.scheme, NoCache: true})
			res, err := td.ExecuteTool(context.Background(), "getUser", nil)
			if err != nil {
				t.Fatal(err)
			}
			if s := res.(string); strings.Contains(s, tok) || strings.Contains(s, "pass-word-9") {
				t.Errorf("the echoed credential reached the result: %q", s)
			}
			if _, err := td.ExecuteTool(context.Background(), "getPublic", nil); err != nil {
				t.Fatal(err)
			}
			reqs := api.requests()
			if len(reqs) != 2 {
				t.Fatalf("the API received %d requests, want 2", len(reqs))
			}
			got := http.Header{}
			for _, k := range []string{"Authorization", "X-Api-Token"} {
				if v := reqs[0].Header.Get(k); v != "" {
					got.Set(k, v)
				}
			}
			if got.Get("Authorization") != tc.header.Get("Authorization") || got.Get("X-Api-Token") != tc.header.Get("X-Api-Token") || reqs[0].URI != tc.uri {
				t.Errorf("sent %v %s, want %v %s", got, reqs[0].URI, tc.header, tc.uri)
			}
			if p := reqs[1]; p.Header.Get("Authorization") != "" || p.Header.Get("X-Api-Token") != "" || p.URI != "/public" {
				t.Errorf("the anonymous operation was sent %v %s", p.Header, p.URI)
			}
		})
	}
	t.Run("the document's scheme wins", func(t *testing.T) {
		api := newAPI(t, nil)
		td := mustToolDriver(t, Config{Spec: partlySecuredSpec, BaseURL: api.URL, Credentials: provider, Name: "github", AuthScheme: "bearer", NoCache: true})
		if _, err := td.ExecuteTool(context.Background(), "getSecured", nil); err != nil {
			t.Fatal(err)
		}
		if r := api.requests()[0]; r.Header.Get("X-Doc-Key") != tok || r.Header.Get("Authorization") != "" {
			t.Errorf("sent %v", r.Header)
		}
	})
	t.Run("scope from the label, never from Scopes", func(t *testing.T) {
		api := newAPI(t, nil)
		td := mustToolDriver(t, Config{Spec: unsecuredSpec, BaseURL: api.URL, Credentials: provider, AuthScheme: "bearer", Scopes: map[string]string{"auth_scheme": "basic"}, NoCache: true})
		ctx := mcs.ContextWithCallInfo(context.Background(), mcs.CallInfo{Label: "github"})
		if _, err := td.ExecuteTool(ctx, "getUser", nil); err != nil {
			t.Fatal(err)
		}
		if r := api.requests()[0]; r.Header.Get("Authorization") != "Bearer "+tok {
			t.Errorf("sent %v", r.Header)
		}
		if _, err := td.ExecuteTool(context.Background(), "getUser", nil); !errors.Is(err, ErrUnboundScheme) || !strings.Contains(err.Error(), "Config.Name") {
			t.Errorf("without a scope: err = %v, want ErrUnboundScheme naming Config.Name", err)
		}
	})
}

func TestAuthSchemeInvalid(t *testing.T) {
	for _, tc := range []struct{ scheme, want string }{
		{"token", `"token" is not an auth scheme; use "bearer", "basic", "header:NAME" or "query:NAME"`},
		{"header:", `does not name a valid HTTP header`},
		{"header:X Key", `does not name a valid HTTP header`},
		{"header:Host", `frames the request`},
		{"header:content-length", `frames the request`},
		{"query:", `does not name a query parameter`},
		{"query:a b", `does not name a query parameter`},
	} {
		_, err := NewToolDriver(Config{Spec: unsecuredSpec, AuthScheme: tc.scheme})
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want ErrInvalidConfig saying %q", tc.scheme, err, tc.want)
		}
	}
}
