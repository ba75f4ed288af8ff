package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/oauth2"
)

// deviceAnswer runs one Token call against a device endpoint that sends
// verification_uri uri.
func deviceAnswer(t *testing.T, uri string) error {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"device_code":"d","user_code":"U-1","verification_uri":%q}`, uri)
	}))
	defer srv.Close()
	p := NewDeviceFlowProvider(DeviceFlowConfig{
		OAuth2:     oauth2.Config{ClientID: "c", Endpoint: oauth2.Endpoint{DeviceAuthURL: srv.URL, TokenURL: srv.URL}},
		HTTPClient: srv.Client(),
		Logger:     slog.New(slog.DiscardHandler),
	})
	_, err := p.Token(t.Context(), "github")
	return err
}

// TestAttackVerificationURL: a device endpoint cannot send the user to a
// look-alike page: http, user info that hides the host and non-ASCII hosts are
// refused; a punycode host is accepted and flagged, and every challenge names its
// host plainly.
func TestAttackVerificationURL(t *testing.T) {
	refused := []struct{ uri, want string }{
		{"http://accounts.example.com/device", "only https"},
		{"https://accounts.example.com@evil.example/device", "user info"},
		{"https://accounts.example.com:pw@evil.example/device", "user info"},
		{"https://аccounts.example.com/device", "non-ASCII"}, // Cyrillic а
		{"javascript:alert(1)", "not an absolute https URL"},
	}
	for _, tt := range refused {
		err := deviceAnswer(t, tt.uri)
		var oe *OAuthError
		if !errors.As(err, &oe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want an *OAuthError saying %q", tt.uri, err, tt.want)
		}
	}
	accepted := []struct{ uri, host, flag string }{
		{"https://accounts.example.com/device", "accounts.example.com", ""},
		{"https://xn--ccounts-5ve.example.com/device", "xn--ccounts-5ve.example.com", "punycode"},
		{"https://Accounts.Example.COM/device", "accounts.example.com", ""},
	}
	for _, tt := range accepted {
		err := deviceAnswer(t, tt.uri)
		ch, ok := errors.AsType[*Challenge](err)
		if !ok {
			t.Errorf("%s: err = %v, want a challenge", tt.uri, err)
			continue
		}
		if !strings.Contains(ch.Message, "The page is on the site "+tt.host+".") {
			t.Errorf("%s: message %q does not name the host plainly", tt.uri, ch.Message)
		}
		if got := strings.Contains(ch.Message, "punycode"); got != (tt.flag != "") {
			t.Errorf("%s: message %q flags punycode = %v", tt.uri, ch.Message, got)
		}
	}
}

// hangingTransport never answers: every request waits for its context.
type hangingTransport struct {
	mu   sync.Mutex
	seen int
}

func (h *hangingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.seen++
	h.mu.Unlock()
	<-r.Context().Done()
	return nil, r.Context().Err()
}

// TestAttackSlowDeviceEndpoint: a device endpoint that never answers holds no call
// past its context's deadline, and calls for the same scope that wait behind it
// end at their own deadlines too.
func TestAttackSlowDeviceEndpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &hangingTransport{}
		p := NewDeviceFlowProvider(DeviceFlowConfig{
			OAuth2:     oauth2.Config{ClientID: "c", Endpoint: oauth2.Endpoint{DeviceAuthURL: "https://auth.test/device", TokenURL: "https://auth.test/token"}},
			HTTPClient: &http.Client{Transport: rt},
			Logger:     slog.New(slog.DiscardHandler),
		})
		start := time.Now()
		var wg sync.WaitGroup
		ends := make([]time.Duration, 3)
		errs := make([]error, 3)
		for i := range 3 {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i+1)*time.Second)
				defer cancel()
				_, errs[i] = p.Token(ctx, "github")
				ends[i] = time.Since(start)
			})
		}
		wg.Wait()
		for i := range 3 {
			if !errors.Is(errs[i], context.DeadlineExceeded) {
				t.Errorf("call %d: err = %v, want the deadline", i, errs[i])
			}
			if want := time.Duration(i+1) * time.Second; ends[i] != want {
				t.Errorf("call %d ended after %v, want its deadline %v", i, ends[i], want)
			}
		}
	})
}
