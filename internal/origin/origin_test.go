package origin

import (
	"errors"
	"net/http"
	"net/url"
	"testing"
)

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestSame(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://api.example.com/v1", "https://API.example.com:443/other", true},
		{"http://h/x", "http://h:80/y", true},
		{"https://h/x", "http://h/x", false},
		{"https://h/x", "https://h:8443/x", false},
		{"https://h/x", "https://h.evil/x", false},
		{"http://127.0.0.1:1/x", "http://127.0.0.1:2/x", false},
	} {
		if got := Same(mustParse(t, tc.a), mustParse(t, tc.b)); got != tc.same {
			t.Errorf("Same(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
	if Same(nil, mustParse(t, "http://h")) {
		t.Error("Same(nil, u) = true")
	}
}

func TestRedirects(t *testing.T) {
	home := mustParse(t, "https://api.example.com/v1")
	refused, tooMany, ownErr := errors.New("refused"), errors.New("too many"), errors.New("own")
	refuse := func(target, h *url.URL) error { return refused }
	many := func() error { return tooMany }
	req := func(s string) *http.Request { return &http.Request{URL: mustParse(t, s)} }
	via := func(n int) []*http.Request {
		v := make([]*http.Request, n)
		for i := range v {
			v[i] = req("https://api.example.com/v1")
		}
		return v
	}
	p := Redirects(home, nil, refuse, many)
	if err := p(req("https://api.example.com/v2"), via(1)); err != nil {
		t.Errorf("same origin: %v", err)
	}
	if err := p(req("http://api.example.com/v2"), via(1)); err != refused {
		t.Errorf("https -> http: %v, want refused", err)
	}
	if err := p(req("https://api.example.com/v2"), via(MaxRedirects)); err != tooMany {
		t.Errorf("past the limit: %v, want too many", err)
	}
	own := Redirects(home, func(*http.Request, []*http.Request) error { return ownErr }, refuse, many)
	if err := own(req("https://api.example.com/v2"), via(1)); err != ownErr {
		t.Errorf("own policy not asked: %v", err)
	}
	if err := own(req("https://evil.example/v2"), via(1)); err != refused {
		t.Errorf("own policy asked before the origin check: %v", err)
	}
	// Without a home, the origin is that of the first request.
	first := Redirects(nil, nil, refuse, many)
	if err := first(req("https://api.example.com:8443/"), via(1)); err != refused {
		t.Errorf("another port of the first request's host: %v, want refused", err)
	}
}
