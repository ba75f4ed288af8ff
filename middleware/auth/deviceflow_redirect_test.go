package auth

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"golang.org/x/oauth2"
)

// An authorization server that answers with a redirect to another host must not
// get the client secret or a device code sent there: a 307 or 308 would resend
// the form, so the redirect is refused.
func TestAttackDeviceFlowRedirectCarriesNoSecret(t *testing.T) {
	var mu sync.Mutex
	var stolen []string
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		stolen = append(stolen, r.Method+" "+r.Form.Encode()+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"device_code":"d","user_code":"U-1","verification_uri":"https://x.test/a"}`))
	}))
	defer thief.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+"/collect", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	p := NewDeviceFlowProvider(DeviceFlowConfig{
		OAuth2: oauth2.Config{ClientID: "client", ClientSecret: "s3cret",
			Endpoint: oauth2.Endpoint{DeviceAuthURL: srv.URL + "/device", TokenURL: srv.URL + "/token", AuthStyle: oauth2.AuthStyleInParams}},
		Logger: slog.New(slog.DiscardHandler),
	})
	_, err := p.Token(t.Context(), "github")
	mu.Lock()
	defer mu.Unlock()
	if len(stolen) > 0 {
		t.Errorf("the other host got %v; it must get nothing", stolen)
	}
	if err == nil || !strings.Contains(err.Error(), "redirect") || !strings.Contains(err.Error(), thief.URL) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("err = %v, want the refused redirect named, without the secret", err)
	}
}
