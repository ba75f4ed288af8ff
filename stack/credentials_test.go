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
	m, _ := res.(map[string]any)
	if diff := cmp.Diff(map[string]any{"auth_required": true, "code": "ABCD-1234", "url": "https://example.com/device", "scope": "oauth"}, withoutMessage(m)); diff != "" {
		t.Errorf("challenge (-want +got):\n%s", diff)
	}
	if n := apiCalls.Load(); n != 0 {
		t.Errorf("the API was called %d times without a credential", n)
	}
	// The rest of the flow (polling, the token, the store) is the auth
	// package's and tested there.
}

func withoutMessage(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != "message" {
			out[k] = v
		}
	}
	return out
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
	if err == nil || !strings.Contains(err.Error(), `s.toml:6: [[driver]] "me", key "oauth": is only used with credentials = "device"`) {
		t.Errorf("oauth without device: %v", err)
	}
}
