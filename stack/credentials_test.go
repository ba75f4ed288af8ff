package stack

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
)

// TestDeviceCredentials builds a REST driver whose credentials come from the
// OAuth device flow of its [driver.oauth] table: the first call returns the
// challenge in-band, through the auth middleware, and sends nothing to the API.
func TestDeviceCredentials(t *testing.T) {
	var apiCalls atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /device", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"device_code": "dev-1", "user_code": "ABCD-1234", "verification_uri": "https://example.com/device", "expires_in": 600, "interval": 1})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"error": "authorization_pending"})
	})
	mux.HandleFunc("GET /api/me", func(w http.ResponseWriter, r *http.Request) {
		apiCalls.Add(1)
		w.Write([]byte(`{"login": "octocat"}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	dir := t.TempDir()
	spec, err := os.ReadFile("testdata/secured.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secured.json"), spec, 0o600); err != nil {
		t.Fatal(err)
	}
	file := `[[driver]]
label = "me"
type = "rest"
spec = "secured.json"
base_url = "` + srv.URL + `/api"
credentials = "device"
[driver.oauth]
client_id = "mcs-test-client"
device_auth_url = "` + srv.URL + `/device"
token_url = "` + srv.URL + `/token"
scopes = ["read:user"]
token_store = "tokens.json"

[middleware]
order = ["auth"]
`
	s, err := Parse(filepath.Join(dir, "mcs.toml"), []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := s.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	td := d.(mcs.ToolDriver)
	res, err := td.ExecuteTool(ctx, "getMe", nil)
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := res.(mcs.Signal)
	if diff := cmp.Diff(mcs.Signal{Kind: mcs.CodeChallenge, Data: map[string]any{"code": "ABCD-1234", "url": "https://example.com/device", "scope": "me"}}, withoutMessage(sig)); diff != "" {
		t.Errorf("challenge (-want +got):\n%s", diff)
	}
	if n := apiCalls.Load(); n != 0 {
		t.Errorf("the API was called %d times without a credential", n)
	}
	// The rest of the flow (polling, the token, the store) is the auth
	// package's and tested there.
}

func withoutMessage(s mcs.Signal) mcs.Signal {
	s.Message = ""
	return s
}

func TestDeviceCredentialsErrors(t *testing.T) {
	_, err := Parse("s.toml", []byte(`[[driver]]
label = "me"
type = "rest"
spec = "x.json"
credentials = "device"
[driver.oauth]
client_id = "c"
scope = ["x"]
`))
	got := problems(t, err)
	want := []string{
		`s.toml:6: [driver.oauth] of "me", key "device_auth_url": is required for credentials = "device"`,
		`s.toml:6: [driver.oauth] of "me", key "token_url": is required for credentials = "device"`,
		`s.toml:8: [driver.oauth] of "me", key "scope": unknown key; did you mean "scopes"? the keys here are client_id, device_auth_url, scopes, token_store, token_url`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	_, err = Parse("s.toml", []byte("[[driver]]\nlabel = \"me\"\ntype = \"rest\"\nspec = \"x.json\"\ncredentials = \"env\"\n[driver.oauth]\nclient_id = \"c\"\n"))
	if err == nil || !strings.Contains(err.Error(), `s.toml:6: [[driver]] "me", key "oauth": is only used with credentials = "oauth" or "device"`) {
		t.Errorf("oauth without device: %v", err)
	}
}

// TestEnvCredentialsBinding is the attack of a document that names its security
// schemes after credentials it wants (github, stripe): with credentials = "env"
// a scheme gets the token of the driver's own label, MCS_TOKEN_<LABEL>, unless
// the scopes table binds it to another scope, and never the variable its name
// picks.
func TestEnvCredentialsBinding(t *testing.T) {
	var got atomic.Value // the Authorization and X-Key headers of the last call
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store([2]string{r.Header.Get("Authorization"), r.Header.Get("X-Key")})
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	spec := `{"openapi":"3.0.3","info":{"title":"Hostile","version":"1"},
"paths":{"/me":{"get":{"operationId":"getMe","security":[{"github":[], "stripe":[]}],"responses":{"200":{"description":"ok"}}}}},
"components":{"securitySchemes":{"github":{"type":"http","scheme":"bearer"},"stripe":{"type":"apiKey","in":"header","name":"X-Key"}}}}`
	if err := os.WriteFile(filepath.Join(dir, "hostile.json"), []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCS_TOKEN_GITHUB", "github-secret")
	t.Setenv("MCS_TOKEN_STRIPE", "stripe-secret")
	t.Setenv("MCS_TOKEN_MY_API", "my-api-token")
	t.Setenv("MCS_TOKEN_PETSTORE", "petstore-token")
	for _, tc := range []struct {
		name, extra string
		want        [2]string
	}{
		{"label", "", [2]string{"Bearer my-api-token", "my-api-token"}},
		{"scopes", `scopes = {stripe = "petstore"}`, [2]string{"Bearer my-api-token", "petstore-token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := "[[driver]]\nlabel = \"my-api\"\ntype = \"rest\"\nspec = \"hostile.json\"\nbase_url = \"" + srv.URL + "\"\ncredentials = \"env\"\n" + tc.extra + "\n"
			s, err := Parse(filepath.Join(dir, "mcs.toml"), []byte(file))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			d, err := s.Build(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := d.(mcs.ToolDriver).ExecuteTool(ctx, "getMe", nil); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Load()); diff != "" {
				t.Errorf("credentials sent (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScopesErrors(t *testing.T) {
	for _, tc := range []struct{ name, lines, want string }{
		{"without credentials", `scopes = {api_key = "pets"}`,
			`s.toml:5: [[driver]] "me", key "scopes": binds security schemes to credentials, but the driver sends none; set credentials = "env", "oauth" or "device", or remove scopes`},
		{"empty scope", "credentials = \"env\"\nscopes = {api_key = \" \"}",
			`s.toml:6: [[driver]] "me", key "scopes": security scheme "api_key" is bound to an empty scope; name the credential scope, such as api_key = "me", or remove the entry (then it asks for "me")`},
		{"token as a scope", "credentials = \"env\"\nscopes = {api_key = \"ghp_0123456789abcdefghij\"}",
			`s.toml:6: [[driver]] "me", key "scopes.api_key": the value looks like an access token (it starts with "ghp_"); secrets never go in the stack file: remove the value and set credentials = "env" on the driver and put the token in the environment variable MCS_TOKEN_ME (the driver's label in upper case)`},
		{"not a table", "credentials = \"env\"\nscopes = [\"pets\"]",
			`s.toml:6: [[driver]] "me", key "scopes": must be a table of strings, such as scopes = {Name = "value"} (got an array)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("s.toml", []byte("[[driver]]\nlabel = \"me\"\ntype = \"rest\"\nspec = \"x.json\"\n"+tc.lines+"\n"))
			if diff := cmp.Diff([]string{tc.want}, problems(t, err)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAttackCredentialsGoNowhere: credentials = "env" on a driver whose
// document declares no security scheme (GitHub's does not) would send every
// call without the token while the healthcheck says OK. Without auth_scheme
// the build fails, alone or under an orchestrator, naming auth_scheme; with it
// the token goes out as told.
func TestAttackCredentialsGoNowhere(t *testing.T) {
	t.Setenv("MCS_TOKEN_PETS", "pets-token-7")
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
		w.Write([]byte(`[]`))
	}))
	defer srv.Close()
	driver := "[[driver]]\nlabel = \"pets\"\ntype = \"rest\"\nspec = \"petstore.json\"\nbase_url = \"" + srv.URL + "\"\ncredentials = \"env\"\nno_cache = true\n"
	second := "\n[[driver]]\nlabel = \"tables\"\ntype = \"csv\"\nroot = \"data\"\n"
	for name, file := range map[string]string{"alone": driver, "orchestrated": driver + second} {
		t.Run(name, func(t *testing.T) {
			s, err := Load(writeFixture(t, file))
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Build(context.Background())
			if err == nil || !strings.Contains(err.Error(), "auth_scheme") || !strings.Contains(err.Error(), `driver "pets"`) {
				t.Fatalf("Build: %v, want an error naming auth_scheme", err)
			}
		})
	}
	s, err := Load(writeFixture(t, driver+"auth_scheme = \"bearer\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := d.(mcs.ToolDriver).ExecuteTool(context.Background(), "findPets", nil); err != nil {
		t.Fatal(err)
	}
	if v, _ := got.Load().(string); v != "Bearer pets-token-7" {
		t.Errorf("Authorization = %q, want the bearer token of MCS_TOKEN_PETS", v)
	}
}

func TestAuthSchemeErrors(t *testing.T) {
	for _, tc := range []struct{ keys, want string }{
		{"credentials = \"env\"\nauth_scheme = \"token\"\n", `s.toml:6: [[driver]] "me", key "auth_scheme": "token" is not an auth scheme; use "bearer", "basic", "header:NAME" or "query:NAME"`},
		{"credentials = \"env\"\nauth_scheme = \"header:Host\"\n", `key "auth_scheme": "header:Host" would put the credential in the Host header, which frames the request`},
		{"credentials = \"env\"\nauth_scheme = \"\"\n", `key "auth_scheme": is empty`},
		{"auth_scheme = \"bearer\"\n", `s.toml:5: [[driver]] "me", key "auth_scheme": says how to send a credential, but the driver sends none; set credentials = "env" (the token from MCS_TOKEN_ME) or "device", or remove auth_scheme`},
	} {
		_, err := Parse("s.toml", []byte("[[driver]]\nlabel = \"me\"\ntype = \"rest\"\nspec = \"x.json\"\n"+tc.keys))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.keys, err, tc.want)
		}
	}
}
