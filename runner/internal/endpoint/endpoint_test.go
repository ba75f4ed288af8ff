package endpoint

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcs-go/mcs/runner"
)

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"https://api.example.com/v1", "https://API.example.com:443/other", true},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/x", true},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8081", false},
		{"https://h", "http://h", false},
		{"https://h", "https://h:8443", false},
		{"https://h", "https://g", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := SameOrigin(a, b); got != tc.want {
			t.Errorf("SameOrigin(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}

// A body of exactly the limit reads whole; one byte more fails with
// runner.ErrReplyTooLarge and ends the request's context with it.
func TestBoundBody(t *testing.T) {
	for _, tc := range []struct {
		size int
		ok   bool
	}{{100, true}, {101, false}, {10000, false}} {
		rctx, mw, cause, stop := Bound(context.Background(), 100)
		res, err := mw(&http.Request{}, func(*http.Request) (*http.Response, error) {
			return &http.Response{Body: io.NopCloser(strings.NewReader(strings.Repeat("a", tc.size)))}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(res.Body)
		if tc.ok != (err == nil) || tc.ok && len(data) != tc.size {
			t.Errorf("size %d: read %d bytes, err %v", tc.size, len(data), err)
		}
		if !tc.ok && (!errors.Is(err, runner.ErrReplyTooLarge) || rctx.Err() == nil || !errors.Is(cause(), runner.ErrReplyTooLarge)) {
			t.Errorf("size %d: err %v, context %v, cause %v", tc.size, err, rctx.Err(), cause())
		}
		if tc.ok && cause() != nil {
			t.Errorf("size %d: cause %v", tc.size, cause())
		}
		stop()
		if cause() != nil && tc.ok {
			t.Errorf("size %d: stop gave a cause", tc.size)
		}
	}
}

func TestBodyLimit(t *testing.T) {
	if BodyLimit(-1) != 0 || BodyLimit(1) != 4+1<<20 || BodyLimit(0) != 4*int64(runner.DefaultMaxReplyBytes)+1<<20 {
		t.Errorf("BodyLimit: %d %d %d", BodyLimit(-1), BodyLimit(1), BodyLimit(0))
	}
}
