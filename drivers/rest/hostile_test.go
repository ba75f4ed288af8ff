package rest

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcs-go/mcs"
)

// hostileValues are arguments a model might write to escape the base path,
// reach another host or inject headers.
var hostileValues = []string{
	"../../admin",
	"..",
	".",
	"",
	"a/b",
	"?x=1",
	"#frag",
	"a\r\nX-Injected: 1",
	"\r\n\r\nGET /admin HTTP/1.1",
	"%2e%2e",
	"..%2f..%2fadmin",
	`..\..\admin`,
	"http://evil.example/x",
	"//evil.example/x",
	"@evil.example",
	"evil.example:80",
	`\\evil.example\x`,
	"%2F",
	"a%2Fb%2F..%2F..",
	"%00",
	"a\x00b",
	"a\tb",
	"ünïcödé",
	"\uff0e\uff0e",   // fullwidth full stops
	"\u2025",         // two dot leader
	"\u2024\u2024",   // one dot leaders
	"\u002e\u0338",   // a dot and a combining mark
	"\u202e..\u202d", // bidi overrides around ".."
	strings.Repeat("A", 100_000),
	strings.Repeat("../", 5_000),
}

func TestHostileArguments(t *testing.T) {
	evil := newAPI(t, nil)
	evilHost := strings.TrimPrefix(evil.URL, "http://")
	var mu sync.Mutex
	var hosts []string // the hosts the client dialled, after the spec was loaded
	recordHosts := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path != "/openapi.yaml" {
			mu.Lock()
			hosts = append(hosts, r.URL.Scheme+"://"+r.URL.Host+" Host: "+r.Host)
			mu.Unlock()
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	api, td := petstoreAPI(t, Config{HTTPClient: &http.Client{Transport: recordHosts}}, nil)
	apiHost := strings.TrimPrefix(api.URL, "http://")
	ctx := context.Background()

	// The same, aimed at a host that exists.
	values := append(slices.Clone(hostileValues),
		evil.URL, evil.URL+"/x", "//"+evilHost, "//"+evilHost+"/x", "@"+evilHost, evilHost, "http:"+evilHost)
	for _, v := range values {
		short := v
		if len(short) > 30 {
			short = short[:30] + "..."
		}
		before := len(api.requests())

		// Path: one segment under /v1/pets, or refused.
		_, err := td.ExecuteTool(ctx, "showPetById", map[string]any{"petId": v})
		switch v {
		case "", ".", "..":
			var ae *mcs.ArgumentsError
			if !errors.As(err, &ae) {
				t.Errorf("path %q: error = %v, want an *mcs.ArgumentsError", short, err)
			}
		default:
			if err != nil {
				t.Errorf("path %q: %v", short, err)
				break
			}
			reqs := api.requests()
			uri := reqs[len(reqs)-1].URI
			rest, ok := strings.CutPrefix(uri, "/v1/pets/")
			if !ok || strings.ContainsAny(rest, "/?#") {
				t.Errorf("path %q: request URI %q is not one segment under /v1/pets/", short, uri)
				break
			}
			if got, err := url.PathUnescape(rest); err != nil || got != v {
				t.Errorf("path %q: the segment decodes to %q, want the value", short, got)
			}
		}

		// Query: the value arrives intact under its own name.
		if _, err := td.ExecuteTool(ctx, "listPets", map[string]any{"tags": []any{v}}); err != nil {
			t.Errorf("query %q: %v", short, err)
		} else {
			reqs := api.requests()
			u, err := url.ParseRequestURI(reqs[len(reqs)-1].URI)
			if err != nil || u.Path != "/v1/pets" {
				t.Errorf("query %q: request URI %q", short, reqs[len(reqs)-1].URI)
			} else if q := u.Query(); len(q) != 1 || len(q["tags"]) != 1 || q["tags"][0] != v {
				t.Errorf("query %q: the query is %v, want only tags=<value>", short, q)
			}
		}

		// Header: CR, LF and NUL refused, anything else sent as one value.
		_, err = td.ExecuteTool(ctx, "deletePet", map[string]any{"petId": "1", "X-Request-ID": v})
		if strings.ContainsAny(v, "\r\n\x00") {
			var ae *mcs.ArgumentsError
			if !errors.As(err, &ae) {
				t.Errorf("header %q: error = %v, want an *mcs.ArgumentsError", short, err)
			}
		} else if err != nil {
			t.Errorf("header %q: %v", short, err)
		}

		// Cookie: refused unless it is a valid cookie value.
		_, err = td.ExecuteTool(ctx, "showPetById", map[string]any{"petId": "1", "session": v})
		if err != nil && !errors.As(err, new(*mcs.ArgumentsError)) {
			t.Errorf("cookie %q: error = %v, want success or an *mcs.ArgumentsError", short, err)
		}

		for _, r := range api.requests()[before:] {
			if !strings.HasPrefix(r.URI, "/v1/pets") {
				t.Errorf("value %q: a request left the base path: %q", short, r.URI)
			}
			if r.Header.Get("X-Injected") != "" {
				t.Errorf("value %q: a header was injected", short)
			}
		}
	}
	if n := len(evil.requests()); n != 0 {
		t.Errorf("another host received %d requests", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hosts) == 0 {
		t.Fatal("no request went through the transport")
	}
	for _, h := range hosts {
		if want := "http://" + apiHost + " Host: " + apiHost; h != want {
			t.Errorf("a request went to %q, want %q", h, want)
		}
	}
}

// At the root of a base URL without a path, a value that looks like an
// authority ("//host", "@host", "host:port") is still one path segment.
func TestHostileRootPath(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /{id}:
    get:
      operationId: byId
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
      responses: {"200": {description: ok}}
`
	evil := newAPI(t, nil)
	evilHost := strings.TrimPrefix(evil.URL, "http://")
	var mu sync.Mutex
	var dialled []string
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		dialled = append(dialled, r.URL.Host)
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(r)
	})}
	api := newAPI(t, nil)
	apiHost := strings.TrimPrefix(api.URL, "http://")
	td := mustToolDriver(t, Config{Spec: []byte(doc), BaseURL: api.URL, HTTPClient: client})
	for _, v := range []string{"//" + evilHost, "//" + evilHost + "/x", "@" + evilHost, evilHost, evil.URL, "/" + evilHost, `\\` + evilHost} {
		if _, err := td.ExecuteTool(context.Background(), "byId", map[string]any{"id": v, "q": evil.URL}); err != nil {
			t.Errorf("%q: %v", v, err)
			continue
		}
		reqs := api.requests()
		uri := reqs[len(reqs)-1].URI
		seg, _, _ := strings.Cut(strings.TrimPrefix(uri, "/"), "?")
		if got, err := url.PathUnescape(seg); err != nil || got != v || strings.Contains(seg, "/") {
			t.Errorf("%q: request URI %q, want the value as the one segment", v, uri)
		}
	}
	if n := len(evil.requests()); n != 0 {
		t.Errorf("the other host received %d requests", n)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range dialled {
		if h != apiHost {
			t.Errorf("a request went to %q, want %q", h, apiHost)
		}
	}
}

// A header parameter named Host cannot redirect the request.
func TestHostHeaderParameter(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /x:
    get:
      operationId: hosted
      parameters:
        - {name: Host, in: header, schema: {type: string}}
      responses: {"200": {description: ok}}
`
	host := make(chan string, 1)
	api := newAPI(t, func(w http.ResponseWriter, r *http.Request) { host <- r.Host })
	td := mustToolDriver(t, Config{Spec: []byte(doc), BaseURL: api.URL})
	if _, err := td.ExecuteTool(context.Background(), "hosted", map[string]any{"Host": "evil.example"}); err != nil {
		t.Fatal(err)
	}
	if got, want := <-host, strings.TrimPrefix(api.URL, "http://"); got != want {
		t.Errorf("the request went to host %q, want %q", got, want)
	}
}
