package rest

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
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
	"a\x00b",
	"ünïcödé",
	strings.Repeat("A", 100_000),
	strings.Repeat("../", 5_000),
}

func TestHostileArguments(t *testing.T) {
	evil := newAPI(t, nil)
	var mu sync.Mutex
	var hosts []string
	api, td := petstoreAPI(t, Config{}, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
	})
	apiHost := strings.TrimPrefix(api.URL, "http://")
	ctx := context.Background()

	for _, v := range hostileValues {
		short := v
		if len(short) > 30 {
			short = short[:30] + "..."
		}
		before := len(api.requests())

		// Path: one segment under /v1/pets, or refused.
		_, err := td.ExecuteTool(ctx, "showPetById", map[string]any{"petId": v})
		switch v {
		case "", ".", "..":
			var ae *ArgumentError
			if !errors.As(err, &ae) {
				t.Errorf("path %q: error = %v, want an *ArgumentError", short, err)
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
			var ae *ArgumentError
			if !errors.As(err, &ae) {
				t.Errorf("header %q: error = %v, want an *ArgumentError", short, err)
			}
		} else if err != nil {
			t.Errorf("header %q: %v", short, err)
		}

		// Cookie: refused unless it is a valid cookie value.
		_, err = td.ExecuteTool(ctx, "showPetById", map[string]any{"petId": "1", "session": v})
		if err != nil && !errors.As(err, new(*ArgumentError)) {
			t.Errorf("cookie %q: error = %v, want success or an *ArgumentError", short, err)
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
	for _, h := range hosts {
		if h != apiHost {
			t.Errorf("a request was sent for host %q, want %q", h, apiHost)
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
