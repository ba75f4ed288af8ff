package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
)

// petstoreAPI serves the petstore spec with a relative server URL (/v1) and
// returns a driver over it.
func petstoreAPI(t *testing.T, cfg Config, respond http.HandlerFunc) (*apiServer, *ToolDriver) {
	t.Helper()
	api := newAPI(t, respond)
	cfg.SpecURL = api.serveSpec("/openapi.yaml", fixture(t, "petstore.yaml"))
	return api, mustToolDriver(t, cfg)
}

func TestExecutePetstore(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args map[string]any
		want recorded
	}{
		{
			name: "query: array repeated, boolean, integer",
			tool: "listPets",
			args: map[string]any{"limit": 5.0, "tags": []any{"a", "b c"}, "vaccinated": true},
			want: recorded{Method: "GET", URI: "/v1/pets?limit=5&tags=a&tags=b%20c&vaccinated=true", Header: hdr()},
		},
		{
			name: "no arguments",
			tool: "listPets",
			args: map[string]any{},
			want: recorded{Method: "GET", URI: "/v1/pets", Header: hdr()},
		},
		{
			name: "Go values from a programmatic caller",
			tool: "listPets",
			args: map[string]any{"limit": 7, "tags": []string{"x"}, "vaccinated": false},
			want: recorded{Method: "GET", URI: "/v1/pets?limit=7&tags=x&vaccinated=false", Header: hdr()},
		},
		{
			name: "Go values inside a list",
			tool: "listPets",
			args: map[string]any{"tags": []any{3, "x", int64(4)}},
			want: recorded{Method: "GET", URI: "/v1/pets?tags=3&tags=x&tags=4", Header: hdr()},
		},
		{
			name: "null means absent",
			tool: "listPets",
			args: map[string]any{"limit": nil},
			want: recorded{Method: "GET", URI: "/v1/pets", Header: hdr()},
		},
		{
			name: "JSON body flattened",
			tool: "createPet",
			args: map[string]any{"name": "Rex", "tag": "dog"},
			want: recorded{Method: "POST", URI: "/v1/pets", Header: hdr("Content-Type", "application/json"), Body: `{"name":"Rex","tag":"dog"}`},
		},
		{
			name: "path and header",
			tool: "deletePet",
			args: map[string]any{"petId": "42", "X-Request-ID": "abc"},
			want: recorded{Method: "DELETE", URI: "/v1/pets/42", Header: hdr("X-Request-Id", "abc")},
		},
		{
			name: "path segment encoded, cookie",
			tool: "showPetById",
			args: map[string]any{"petId": "a b/c", "session": "s1"},
			want: recorded{Method: "GET", URI: "/v1/pets/a%20b%2Fc", Header: hdr("Cookie", "session=s1")},
		},
		{
			name: "path-level header parameter",
			tool: "showPetById",
			args: map[string]any{"petId": 12.5, "X-Request-ID": "r"},
			want: recorded{Method: "GET", URI: "/v1/pets/12.5", Header: hdr("X-Request-Id", "r")},
		},
		{
			name: "no operationId",
			tool: "get_store_inventory",
			want: recorded{Method: "GET", URI: "/v1/store/inventory", Header: hdr()},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api, td := petstoreAPI(t, Config{}, nil)
			res, err := td.ExecuteTool(context.Background(), tc.tool, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if res != "ok" {
				t.Errorf("result = %#v, want \"ok\"", res)
			}
			if diff := cmp.Diff([]recorded{tc.want}, api.requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// Configured headers are sent and override arguments; credentials override
// both.
func TestConfiguredHeaders(t *testing.T) {
	api, td := petstoreAPI(t, Config{Headers: map[string]string{"X-Request-ID": "fixed", "X-Client": "mcs"}}, nil)
	if _, err := td.ExecuteTool(context.Background(), "deletePet", map[string]any{"petId": "1", "X-Request-ID": "from-model"}); err != nil {
		t.Fatal(err)
	}
	want := []recorded{{Method: "DELETE", URI: "/v1/pets/1", Header: hdr("X-Request-Id", "fixed", "X-Client", "mcs")}}
	if diff := cmp.Diff(want, api.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestExecuteBodies(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args map[string]any
		want recorded
	}{
		{
			name: "form",
			tool: "login",
			args: map[string]any{"username": "ann", "password": "p&w=1", "remember": true, "scopes": []any{"a", "b"}},
			want: recorded{Method: "POST", URI: "/login", Header: hdr("Content-Type", "application/x-www-form-urlencoded"),
				Body: "password=p%26w%3D1&remember=true&scopes=a&scopes=b&username=ann"},
		},
		{
			name: "+json media type, clashing property renamed",
			tool: "patchItem",
			args: map[string]any{"id": "7", "dryRun": false, "body_id": "8", "labels": map[string]any{"a": "b"}},
			want: recorded{Method: "PATCH", URI: "/items/7?dryRun=false", Header: hdr("Content-Type", "application/merge-patch+json"),
				Body: `{"id":"8","labels":{"a":"b"}}`},
		},
		{
			name: "object given as JSON text",
			tool: "patchItem",
			args: map[string]any{"id": "7", "labels": `{"a": "b"}`},
			want: recorded{Method: "PATCH", URI: "/items/7", Header: hdr("Content-Type", "application/merge-patch+json"),
				Body: `{"labels":{"a":"b"}}`},
		},
		{
			name: "number and boolean given as text",
			tool: "patchItem",
			args: map[string]any{"id": "7", "quantity": "3", "archived": "false", "body_id": "8"},
			want: recorded{Method: "PATCH", URI: "/items/7", Header: hdr("Content-Type", "application/merge-patch+json"),
				Body: `{"archived":false,"id":"8","quantity":3}`},
		},
		{
			name: "optional body not given",
			tool: "patchItem",
			args: map[string]any{"id": "7"},
			want: recorded{Method: "PATCH", URI: "/items/7", Header: hdr()},
		},
		{
			name: "whole JSON body",
			tool: "setTags",
			args: map[string]any{"body": []any{"x", "y"}},
			want: recorded{Method: "POST", URI: "/tags", Header: hdr("Content-Type", "application/json"), Body: `["x","y"]`},
		},
		{
			name: "text body",
			tool: "addNote",
			args: map[string]any{"body": "hello\r\nworld"},
			want: recorded{Method: "POST", URI: "/notes", Header: hdr("Content-Type", "text/plain"), Body: "hello\r\nworld"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := newAPI(t, nil)
			td := mustToolDriver(t, Config{Spec: fixture(t, "forms.yaml"), BaseURL: api.URL})
			if _, err := td.ExecuteTool(context.Background(), tc.tool, tc.args); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]recorded{tc.want}, api.requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExecuteMultipart(t *testing.T) {
	api := newAPI(t, nil)
	td := mustToolDriver(t, Config{Spec: fixture(t, "forms.yaml"), BaseURL: api.URL})
	if _, err := td.ExecuteTool(context.Background(), "upload", map[string]any{"file": "hello", "description": "greeting"}); err != nil {
		t.Fatal(err)
	}
	reqs := api.requests()
	if len(reqs) != 1 || reqs[0].Method != "POST" || reqs[0].URI != "/upload" {
		t.Fatalf("requests = %+v, want one POST /upload", reqs)
	}
	mt, params, err := mime.ParseMediaType(reqs[0].Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		t.Fatalf("Content-Type = %q, want multipart/form-data", reqs[0].Header.Get("Content-Type"))
	}
	type part struct{ Name, File, Type, Content string }
	var got []part
	mr := multipart.NewReader(strings.NewReader(reqs[0].Body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(p)
		got = append(got, part{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), string(data)})
	}
	want := []part{
		{Name: "description", Content: "greeting"},
		{Name: "file", File: "file", Type: "application/octet-stream", Content: "hello"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
}

// Query styles other than the default form/explode.
func TestQueryStyles(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /s/{ids}:
    get:
      operationId: styles
      parameters:
        - {name: ids, in: path, required: true, schema: {type: array, items: {type: integer}}}
        - {name: csv, in: query, explode: false, schema: {type: array, items: {type: string}}}
        - {name: pipes, in: query, style: pipeDelimited, schema: {type: array, items: {type: string}}}
        - {name: spaces, in: query, style: spaceDelimited, schema: {type: array, items: {type: string}}}
        - {name: exploded, in: query, style: spaceDelimited, explode: true, schema: {type: array, items: {type: string}}}
        - {name: filter, in: query, style: deepObject, schema: {type: object}}
        - {name: json, in: query, content: {application/json: {schema: {type: object}}}}
      responses: {"200": {description: ok}}
`
	api := newAPI(t, nil)
	td := mustToolDriver(t, Config{Spec: []byte(doc), BaseURL: api.URL})
	_, err := td.ExecuteTool(context.Background(), "styles", map[string]any{
		"ids": []any{1.0, 2.0}, "csv": []any{"a", "b"}, "pipes": []any{"c", "d"}, "spaces": []any{"e", "f"}, "exploded": []any{"g", "h"},
		"filter": map[string]any{"color": "red"}, "json": map[string]any{"k": 1.0},
	})
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"csv": {"a,b"}, "pipes": {"c|d"}, "spaces": {"e f"}, "exploded": {"g", "h"}, "filter[color]": {"red"}, "json": {`{"k":1}`}}
	want := []recorded{{Method: "GET", URI: "/s/1,2?" + strings.ReplaceAll(q.Encode(), "+", "%20"), Header: hdr()}}
	if diff := cmp.Diff(want, api.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestArgumentErrors(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string // the whole message, or a part of it after "~"
	}{
		{
			name: "unknown name",
			tool: "createPet",
			args: map[string]any{"name": "Rex", "colour": "red"},
			want: `createPet: invalid arguments: unknown argument "colour"; valid arguments: name (required), tag`,
		},
		{
			name: "missing and unknown",
			tool: "deletePet",
			args: map[string]any{"id": "1", "x": 1.0},
			want: `deletePet: invalid arguments: unknown arguments "id", "x"; missing required arguments "X-Request-ID", "petId"; valid arguments: X-Request-ID (required), petId (required)`,
		},
		{
			name: "required given as null",
			tool: "createPet",
			args: map[string]any{"name": nil},
			want: `~missing required argument "name"`,
		},
		{
			name: "no arguments expected",
			tool: "get_store_inventory",
			args: map[string]any{"all": true},
			want: `get_store_inventory: invalid arguments: unknown argument "all"; the tool takes no arguments`,
		},
		{
			name: "object in a path",
			tool: "showPetById",
			args: map[string]any{"petId": map[string]any{"a": "b"}},
			want: `~argument "petId": a path parameter must be a string, number, boolean or list, not an object`,
		},
		{
			name: "object in a scalar query parameter",
			tool: "listPets",
			args: map[string]any{"limit": map[string]any{"api_key": "x"}},
			want: `~argument "limit": an object is not allowed here`,
		},
		{
			name: "list inside a list",
			tool: "listPets",
			args: map[string]any{"tags": []any{[]any{"a"}}},
			want: `~argument "tags": a list is not allowed here`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api, td := petstoreAPI(t, Config{}, nil)
			_, err := td.ExecuteTool(context.Background(), tc.tool, tc.args)
			var ae *mcs.ArgumentsError
			if !errors.As(err, &ae) || ae.Tool != tc.tool || len(ae.Problems) < 2 || mcs.CodeOf(nil, err) != mcs.CodeInvalidArguments {
				t.Fatalf("error = %#v, want an *mcs.ArgumentsError naming %s, its problems and what the tool takes", err, tc.tool)
			}
			if last := ae.Problems[len(ae.Problems)-1]; !strings.HasPrefix(last, "valid arguments: ") && last != "the tool takes no arguments" {
				t.Errorf("last problem %q, want the tool's valid arguments", last)
			}
			if part, ok := strings.CutPrefix(tc.want, "~"); ok {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error = %q, want it to contain %q", err, part)
				}
			} else if err.Error() != tc.want {
				t.Errorf("error =\n%s\nwant\n%s", err, tc.want)
			}
			if n := len(api.requests()); n != 0 {
				t.Errorf("%d requests sent, want none", n)
			}
		})
	}
}

func TestResponses(t *testing.T) {
	long := strings.Repeat("x", 600)
	tests := []struct {
		name    string
		max     int64
		status  int
		ctype   string
		body    string
		want    string // result
		wantErr string
	}{
		{name: "200", status: 200, ctype: "application/json", body: `{"id":1}`, want: `{"id":1}`},
		{name: "201 text", status: 201, ctype: "text/plain", body: "created", want: "created"},
		{name: "204 empty", status: 204, want: "204 No Content (empty body)"},
		{name: "404", status: 404, ctype: "text/plain", body: "no such pet", wantErr: "404 Not Found: no such pet"},
		{name: "500 long body quoted to 500 bytes", status: 500, body: long, wantErr: "500 Internal Server Error: " + long[:500]},
		{name: "403 empty body", status: 403, wantErr: "403 Forbidden"},
		{name: "cut UTF-8 safely", status: 400, body: strings.Repeat("x", 499) + "é", wantErr: "400 Bad Request: " + strings.Repeat("x", 499)},
		{
			name: "truncated", max: 10, status: 200, ctype: "text/plain", body: "0123456789abcdef",
			want: "0123456789\n[response truncated: the body is longer than 10 bytes; only the first 10 bytes are shown]",
		},
		{
			name: "truncated within a character", max: 4, status: 200, ctype: "text/plain", body: "abcé",
			want: "abc\n[response truncated: the body is longer than 4 bytes; only the first 4 bytes are shown]",
		},
		{name: "exactly the limit", max: 4, status: 200, ctype: "text/plain", body: "abcd", want: "abcd"},
		{name: "binary", status: 200, ctype: "image/png", body: "\x89PNG\r\n\x1a\n\xff\xfe", want: "200 OK: binary response of 10 bytes (image/png), not shown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, td := petstoreAPI(t, Config{MaxResponseBytes: tc.max}, func(w http.ResponseWriter, r *http.Request) {
				if tc.ctype != "" {
					w.Header().Set("Content-Type", tc.ctype)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			})
			res, err := td.ExecuteTool(context.Background(), "get_store_inventory", nil)
			if tc.wantErr != "" {
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != tc.status {
					t.Fatalf("error = %v, want a *StatusError with status %d", err, tc.status)
				}
				if err.Error() != tc.wantErr {
					t.Errorf("error = %q, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res != tc.want {
				t.Errorf("result = %q, want %q", res, tc.want)
			}
		})
	}
}

func TestDefaultMaxResponseBytes(t *testing.T) {
	_, td := petstoreAPI(t, Config{}, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("a", 1<<20+1))
	})
	res, err := td.ExecuteTool(context.Background(), "get_store_inventory", nil)
	if err != nil {
		t.Fatal(err)
	}
	text := res.(string)
	if !strings.HasPrefix(text, strings.Repeat("a", 1<<20)+"\n[response truncated: the body is longer than 1048576 bytes") {
		t.Errorf("result is not the first MiB with a marker: ...%q", text[len(text)-100:])
	}
}

// roundTripFunc is an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestTimeout(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		want    time.Duration
	}{
		{"default", 0, 30 * time.Second},
		{"configured", 2 * time.Second, 2 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				hang := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					<-r.Context().Done()
					return nil, r.Context().Err()
				})
				td := mustToolDriver(t, Config{
					Spec: fixture(t, "petstore.yaml"), BaseURL: "http://api.test",
					HTTPClient: &http.Client{Transport: hang}, Timeout: tc.timeout,
				})
				start := time.Now()
				_, err := td.ExecuteTool(context.Background(), "get_store_inventory", nil)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("error = %v, want one wrapping context.DeadlineExceeded", err)
				}
				if got := time.Since(start); got != tc.want {
					t.Errorf("the call ended after %v, want %v", got, tc.want)
				}
			})
		})
	}
}

// The timeout also bounds reading the response body.
func TestTimeoutCoversBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			pr, pw := io.Pipe()
			go func() {
				_, _ = io.WriteString(pw, "partial")
				<-r.Context().Done()
				pw.CloseWithError(r.Context().Err())
			}()
			return &http.Response{StatusCode: 200, Status: "200 OK", Body: pr, Header: http.Header{}, Request: r}, nil
		})
		td := mustToolDriver(t, Config{
			Spec: fixture(t, "petstore.yaml"), BaseURL: "http://api.test",
			HTTPClient: &http.Client{Transport: slow}, Timeout: time.Second,
		})
		_, err := td.ExecuteTool(context.Background(), "get_store_inventory", nil)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "read the response") {
			t.Errorf("error = %v, want a read error wrapping context.DeadlineExceeded", err)
		}
	})
}

func TestRedirects(t *testing.T) {
	evil := newAPI(t, nil)
	api, td := petstoreAPI(t, Config{}, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/store/inventory":
			http.Redirect(w, r, "/v1/moved", http.StatusFound)
		case "/v1/pets":
			http.Redirect(w, r, evil.URL+"/steal", http.StatusTemporaryRedirect)
		default:
			_, _ = io.WriteString(w, "moved here")
		}
	})
	ctx := context.Background()

	res, err := td.ExecuteTool(ctx, "get_store_inventory", nil)
	if err != nil || res != "moved here" {
		t.Errorf("same-host redirect: %v, %v; want it followed", res, err)
	}

	_, err = td.ExecuteTool(ctx, "listPets", nil)
	if !errors.Is(err, errRedirect) || !strings.Contains(err.Error(), "only redirects to "+strings.TrimPrefix(api.URL, "http://")+" are followed") {
		t.Errorf("cross-host redirect: error = %v, want a refused redirect", err)
	}
	if n := len(evil.requests()); n != 0 {
		t.Errorf("the other host received %d requests, want 0", n)
	}
}

func TestRedirectPolicy(t *testing.T) {
	userCalls := 0
	user := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { userCalls++; return nil }}
	client := newClient(user)
	req := func(s string) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, s, nil)
		return r
	}
	origin := []*http.Request{req("https://api.example.com/a")}
	tests := []struct {
		name string
		to   string
		via  []*http.Request
		ok   bool
	}{
		{"same host", "https://api.example.com/b", origin, true},
		{"same host, explicit default port", "https://api.example.com:443/b", origin, true},
		{"host case", "https://API.example.com/b", origin, true},
		{"other host", "https://evil.example.com/b", origin, false},
		{"subdomain", "https://x.api.example.com/b", origin, false},
		{"other port", "https://api.example.com:8443/b", origin, false},
		{"downgrade to http", "http://api.example.com/b", origin, false},
		{"too many", "https://api.example.com/b", []*http.Request{origin[0], origin[0], origin[0], origin[0], origin[0], origin[0], origin[0], origin[0], origin[0], origin[0]}, false},
	}
	for _, tc := range tests {
		err := client.CheckRedirect(req(tc.to), tc.via)
		if (err == nil) != tc.ok {
			t.Errorf("%s: CheckRedirect = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	if userCalls != 3 {
		t.Errorf("the user's policy ran %d times, want 3 (once per allowed redirect)", userCalls)
	}
}

// The driver never modifies the client it is given.
func TestClientNotMutated(t *testing.T) {
	api := newAPI(t, nil)
	client := &http.Client{Timeout: time.Minute}
	before := *client
	td := mustToolDriver(t, Config{Spec: fixture(t, "petstore.yaml"), BaseURL: api.URL, HTTPClient: client})
	if _, err := td.ExecuteTool(context.Background(), "listPets", nil); err != nil {
		t.Fatal(err)
	}
	if client.CheckRedirect != nil || client.Timeout != before.Timeout || client.Transport != before.Transport || client.Jar != before.Jar {
		t.Errorf("the client was modified: %+v", client)
	}
	if td.client == client {
		t.Error("the driver uses the caller's client itself, not a copy")
	}
}

// The model's arguments are echoed in errors with %q, so control characters
// in them cannot forge log lines.
func TestErrorsQuoteArguments(t *testing.T) {
	_, td := petstoreAPI(t, Config{}, nil)
	_, err := td.ExecuteTool(context.Background(), "listPets", map[string]any{"evil\nname": 1.0})
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("error = %q, want one on a single line", err)
	}
	if !strings.Contains(fmt.Sprint(err), `"evil\nname"`) {
		t.Errorf("error = %q, want the name quoted", err)
	}
}

func TestResultIsJSONText(t *testing.T) {
	_, td := petstoreAPI(t, Config{}, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"pets": []string{"Rex"}})
	})
	res, err := td.ExecuteTool(context.Background(), "listPets", nil)
	if err != nil || res != "{\"pets\":[\"Rex\"]}\n" {
		t.Errorf("result = %q, %v", res, err)
	}
}

func TestCoerceJSON(t *testing.T) {
	tests := []struct {
		v     any
		types []string
		want  any
	}{
		{"5", []string{"integer"}, 5.0},
		{" 2.5 ", []string{"number"}, 2.5},
		{"five", []string{"integer"}, "five"},
		{"true", []string{"boolean"}, true},
		{"TRUE", []string{"boolean"}, "TRUE"},
		{`{"a":1}`, []string{"object"}, map[string]any{"a": 1.0}},
		{`[1]`, []string{"array"}, []any{1.0}},
		{`[1]`, []string{"object"}, `[1]`},
		{`{"a":1}`, []string{"object", "string"}, `{"a":1}`},
		{"5", nil, "5"},
		{5.0, []string{"string"}, 5.0},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, coerceJSON(tc.v, tc.types)); diff != "" {
			t.Errorf("coerceJSON(%#v, %v) (-want +got):\n%s", tc.v, tc.types, diff)
		}
	}
}

func TestPathStyles(t *testing.T) {
	tests := []struct {
		style   string
		explode bool
		v       any
		want    string
	}{
		{"simple", false, "a b", "a%20b"},
		{"simple", false, []any{"a", "b/c"}, "a,b%2Fc"},
		{"label", false, []any{"a", "b"}, ".a,b"},
		{"label", true, []any{"a", "b"}, ".a.b"},
		{"matrix", false, "x", ";id=x"},
		{"matrix", false, []any{"a", "b"}, ";id=a,b"},
		{"matrix", true, []any{"a", "b"}, ";id=a;id=b"},
		{"simple", false, true, "true"},
		{"simple", false, 1e21, "1000000000000000000000"},
	}
	for _, tc := range tests {
		a := argument{name: "id", wire: "id", in: inPath, style: tc.style, explode: tc.explode}
		got, err := a.pathValue(tc.v)
		if err != nil || got != tc.want {
			t.Errorf("%s explode=%v %#v: %q, %v; want %q", tc.style, tc.explode, tc.v, got, err, tc.want)
		}
	}
	for _, bad := range []any{[]any{}, []any{"a", ".."}, []any{""}, map[string]any{}} {
		a := argument{name: "id", wire: "id", in: inPath, style: "simple"}
		if _, err := a.pathValue(bad); err == nil {
			t.Errorf("pathValue(%#v) succeeded, want an error", bad)
		}
	}
}

// The literal parts of a path template keep their slashes and escapes, and
// characters a path cannot hold are escaped.
func TestEscapeLiteral(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/pets/", "/pets/"},
		{"/files%2Fconfig/", "/files%2Fconfig/"},
		{"/a b/", "/a%20b/"},
		{"/a b%2F/", "/a%20b%2F/"},
		{"/100%/", "/100%25/"},
		{"/%zz%4/", "/%25zz%254/"},
		{"/v1:batch;x=1/@me", "/v1:batch;x=1/@me"},
		{"/é/", "/%C3%A9/"},
		{"/search?x#y", "/search%3Fx%23y"},
	}
	for _, tc := range tests {
		if got := escapeLiteral(tc.in); got != tc.want {
			t.Errorf("escapeLiteral(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
