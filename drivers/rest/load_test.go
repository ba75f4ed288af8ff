package rest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v4"
)

// Construction does no I/O; the first use loads the document, later uses
// reuse it.
func TestLoadOnFirstUse(t *testing.T) {
	api := newAPI(t, nil)
	specURL := api.serveSpec("/openapi.yaml", fixture(t, "petstore.yaml"))
	var mu sync.Mutex
	sent := 0
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		sent++
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(r)
	})}
	td := mustToolDriver(t, Config{SpecURL: specURL, HTTPClient: client})
	if _, err := New(Config{SpecURL: specURL, HTTPClient: client}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{SpecURL: specURL, BaseURL: api.URL, HTTPClient: client}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{SpecURL: "testdata/missing.yaml", HTTPClient: client}); err != nil {
		t.Fatalf("construction opened the file: %v", err)
	}
	mu.Lock()
	if sent != 0 {
		t.Fatalf("construction sent %d requests, want 0", sent)
	}
	mu.Unlock()
	ctx := context.Background()
	for range 3 {
		if _, err := td.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := td.ExecuteTool(ctx, "listPets", nil); err != nil {
		t.Fatal(err)
	}
	if n := api.specRequests(); n != 1 {
		t.Errorf("the spec was fetched %d times, want 1", n)
	}
}

// A failed load is returned and tried again on the next call.
func TestFailedLoadIsRetried(t *testing.T) {
	var mu sync.Mutex
	fail := true
	doc := fixture(t, "petstore.yaml")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			fail = false
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write(doc)
	}))
	defer srv.Close()
	td := mustToolDriver(t, Config{SpecURL: srv.URL + "/openapi.yaml?key=spec-secret"})
	ctx := context.Background()

	_, err := td.ListTools(ctx)
	want := "load OpenAPI document " + srv.URL + "/openapi.yaml: fetch answered 503 Service Unavailable"
	if err == nil || err.Error() != want {
		t.Fatalf("first ListTools error = %v, want %q", err, want)
	}
	tools, err := td.ListTools(ctx)
	if err != nil || len(tools) != 5 {
		t.Fatalf("second ListTools = %d tools, %v; want the petstore", len(tools), err)
	}
}

// Concurrent first uses load the document once.
func TestConcurrentFirstUse(t *testing.T) {
	api := newAPI(t, nil)
	td := mustToolDriver(t, Config{SpecURL: api.serveSpec("/openapi.yaml", fixture(t, "petstore.yaml"))})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			var err error
			if i%2 == 0 {
				_, err = td.ListTools(context.Background())
			} else {
				_, err = td.ExecuteTool(context.Background(), "listPets", nil)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := api.specRequests(); n != 1 {
		t.Errorf("the spec was fetched %d times, want 1", n)
	}
}

// A caller waiting for another caller's load leaves when its context ends.
func TestWaitingForLoadHonoursContext(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	doc := fixture(t, "petstore.yaml")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		_, _ = w.Write(doc)
	}))
	defer srv.Close()
	td := mustToolDriver(t, Config{SpecURL: srv.URL})

	first := make(chan error, 1)
	go func() {
		_, err := td.ListTools(context.Background())
		first <- err
	}()
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := td.ListTools(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("waiting caller: error = %v, want context.Canceled", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("loading caller: %v", err)
	}
}

func TestSpecFromFile(t *testing.T) {
	api := newAPI(t, nil)
	td := mustToolDriver(t, Config{SpecURL: "testdata/petstore.yaml"})
	ctx := context.Background()
	tools, err := td.ListTools(ctx)
	if err != nil || len(tools) != 5 {
		t.Fatalf("ListTools = %d tools, %v", len(tools), err)
	}
	// The relative server "/v1" has nothing to resolve against.
	_, err = td.ExecuteTool(ctx, "listPets", nil)
	if err == nil || !strings.Contains(err.Error(), `server URL "/v1" is relative and the spec was not loaded from an http(s) URL; set Config.BaseURL`) {
		t.Errorf("error = %v, want one asking for BaseURL", err)
	}
	td = mustToolDriver(t, Config{SpecURL: "testdata/petstore.yaml", BaseURL: api.URL + "/api"})
	if _, err := td.ExecuteTool(ctx, "listPets", nil); err != nil {
		t.Fatal(err)
	}
	if got := api.requests(); len(got) != 1 || got[0].URI != "/api/pets" {
		t.Errorf("requests = %+v, want GET /api/pets", got)
	}

	_, err = mustToolDriver(t, Config{SpecURL: "testdata/missing.yaml"}).ListTools(ctx)
	if err == nil || !strings.Contains(err.Error(), "load OpenAPI document testdata/missing.yaml") {
		t.Errorf("missing file: error = %v", err)
	}
}

// Swagger 2.0 without host talks to the host that served the spec, under
// basePath.
func TestSwaggerWithoutHost(t *testing.T) {
	api := newAPI(t, nil)
	td := mustToolDriver(t, Config{SpecURL: api.serveSpec("/specs/swagger.json", fixture(t, "petstore-swagger.json"))})
	ctx := context.Background()
	if _, err := td.ExecuteTool(ctx, "listPets", map[string]any{"tags": []any{"a", "b"}, "limit": 3.0}); err != nil {
		t.Fatal(err)
	}
	if _, err := td.ExecuteTool(ctx, "createPet", map[string]any{"name": "Rex"}); err != nil {
		t.Fatal(err)
	}
	want := []recorded{
		{Method: "GET", URI: "/v1/pets?limit=3&tags=a&tags=b", Header: hdr()},
		{Method: "POST", URI: "/v1/pets", Header: hdr("Content-Type", "application/json"), Body: `{"name":"Rex"}`},
	}
	if diff := cmp.Diff(want, api.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// Swagger 2.0 formData parameters make a form, or multipart with a file.
func TestSwaggerFormData(t *testing.T) {
	doc := `{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{
  "/login":{"post":{"operationId":"login","parameters":[
    {"name":"user","in":"formData","type":"string","required":true},
    {"name":"pin","in":"formData","type":"integer"}],"responses":{"200":{"description":"ok"}}}},
  "/upload":{"post":{"operationId":"upload","parameters":[
    {"name":"file","in":"formData","type":"file"}],"responses":{"200":{"description":"ok"}}}}}}`
	api := newAPI(t, nil)
	td := mustToolDriver(t, Config{Spec: []byte(doc), BaseURL: api.URL})
	ctx := context.Background()
	if _, err := td.ExecuteTool(ctx, "login", map[string]any{"user": "ann", "pin": 1234.0}); err != nil {
		t.Fatal(err)
	}
	if _, err := td.ExecuteTool(ctx, "upload", map[string]any{"file": "data"}); err != nil {
		t.Fatal(err)
	}
	reqs := api.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if diff := cmp.Diff(recorded{Method: "POST", URI: "/login", Header: hdr("Content-Type", "application/x-www-form-urlencoded"), Body: "pin=1234&user=ann"}, reqs[0]); diff != "" {
		t.Errorf("form request (-want +got):\n%s", diff)
	}
	if ct := reqs[1].Header.Get("Content-Type"); !strings.HasPrefix(ct, "multipart/form-data; boundary=") || !strings.Contains(reqs[1].Body, `filename="file"`) {
		t.Errorf("upload request: Content-Type %q, body %q; want multipart with a file", ct, reqs[1].Body)
	}
}

func TestServerResolution(t *testing.T) {
	doc := []byte(`openapi: 3.0.3
info: {title: t, version: "1"}
servers:
  - url: "SERVER/{version}/"
    variables:
      version: {default: v2}
  - url: https://second.example
paths:
  /a:
    get: {operationId: docLevel, responses: {"200": {description: ok}}}
  /b:
    servers: [{url: "SERVER/pathlevel"}]
    get: {operationId: pathLevel, responses: {"200": {description: ok}}}
  /c:
    servers: [{url: "SERVER/pathlevel"}]
    get:
      operationId: opLevel
      servers: [{url: /oplevel}]
      responses: {"200": {description: ok}}
  /d:
    get:
      operationId: noDefault
      servers: [{url: "https://{region}.example"}]
      responses: {"200": {description: ok}}
`)
	run := func(t *testing.T, cfg Config, tools ...string) {
		t.Helper()
		td := mustToolDriver(t, cfg)
		for _, tool := range tools {
			if _, err := td.ExecuteTool(context.Background(), tool, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("from the document", func(t *testing.T) {
		api := newAPI(t, nil)
		run(t, Config{SpecURL: api.serveSpec("/spec/openapi.yaml", doc)}, "docLevel", "pathLevel", "opLevel")
		var got []string
		for _, r := range api.requests() {
			got = append(got, r.URI)
		}
		if diff := cmp.Diff([]string{"/v2/a", "/pathlevel/b", "/oplevel/c"}, got); diff != "" {
			t.Errorf("URIs (-want +got):\n%s", diff)
		}
	})
	t.Run("BaseURL replaces every server of the document", func(t *testing.T) {
		api := newAPI(t, nil)
		run(t, Config{SpecURL: api.serveSpec("/spec/openapi.yaml", doc), BaseURL: api.URL + "/base?api-version=7"}, "docLevel", "pathLevel", "opLevel")
		var got []string
		for _, r := range api.requests() {
			got = append(got, r.URI)
		}
		if diff := cmp.Diff([]string{"/base/a?api-version=7", "/base/b?api-version=7", "/base/c?api-version=7"}, got); diff != "" {
			t.Errorf("URIs (-want +got):\n%s", diff)
		}
	})
	t.Run("variable without default", func(t *testing.T) {
		api := newAPI(t, nil)
		_, err := mustToolDriver(t, Config{SpecURL: api.serveSpec("/spec/openapi.yaml", doc)}).ExecuteTool(context.Background(), "noDefault", nil)
		if err == nil || !strings.Contains(err.Error(), `server URL "https://{region}.example" has a variable without a default`) {
			t.Errorf("error = %v", err)
		}
	})
}

func TestReadLimited(t *testing.T) {
	if _, err := readLimited(strings.NewReader("12345"), 4); err == nil || !strings.Contains(err.Error(), "larger than 4 bytes") {
		t.Errorf("over the limit: %v", err)
	}
	if data, err := readLimited(strings.NewReader("1234"), 4); err != nil || string(data) != "1234" {
		t.Errorf("at the limit: %q, %v", data, err)
	}
	if _, err := readLimited(io.MultiReader(strings.NewReader("1"), errReader{}), 4); err == nil {
		t.Error("a read error was not returned")
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("broken") }

// Without servers, OpenAPI's default server "/" is relative to the spec's URL.
func TestNoServers(t *testing.T) {
	for name, servers := range map[string]string{"absent": "", "empty": "servers: []\n"} {
		t.Run(name, func(t *testing.T) {
			doc := "openapi: 3.0.3\ninfo: {title: t, version: '1'}\n" + servers +
				"paths:\n  /pets:\n    get: {operationId: listPets, responses: {'200': {description: ok}}}\n"
			api := newAPI(t, nil)
			td := mustToolDriver(t, Config{SpecURL: api.serveSpec("/specs/openapi.yaml", []byte(doc))})
			if _, err := td.ExecuteTool(context.Background(), "listPets", nil); err != nil {
				t.Fatal(err)
			}
			if got := api.requests(); len(got) != 1 || got[0].URI != "/pets" {
				t.Errorf("requests = %+v, want GET /pets", got)
			}
			_, err := mustToolDriver(t, Config{Spec: []byte(doc)}).ExecuteTool(context.Background(), "listPets", nil)
			if err == nil || !strings.Contains(err.Error(), "the document has no servers and was not loaded from an http(s) URL; set Config.BaseURL") {
				t.Errorf("inline document without servers: error = %v", err)
			}
		})
	}
}

// User info in BaseURL is sent as basic authentication.
func TestBaseURLUserInfo(t *testing.T) {
	api := newAPI(t, nil)
	td := mustToolDriver(t, Config{Spec: fixture(t, "petstore.yaml"), BaseURL: strings.Replace(api.URL, "http://", "http://ann:pw@", 1)})
	if _, err := td.ExecuteTool(context.Background(), "get_store_inventory", nil); err != nil {
		t.Fatal(err)
	}
	want := []recorded{{Method: "GET", URI: "/store/inventory", Header: hdr("Authorization", "Basic YW5uOnB3")}}
	if diff := cmp.Diff(want, api.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// A Swagger 2.0 document with a host and no schemes uses the scheme it was
// fetched with; inline, the converter's https.
func TestSwaggerHostWithoutSchemes(t *testing.T) {
	const doc = `{"swagger":"2.0","info":{"title":"t","version":"1"},"host":"HOST","basePath":"/v1",
  "paths":{"/pets":{"get":{"operationId":"listPets","responses":{"200":{"description":"ok"}}}}}}`
	api := newAPI(t, nil)
	host := strings.TrimPrefix(api.URL, "http://")
	specURL := api.serveSpec("/swagger.json", []byte(strings.Replace(doc, "HOST", host, 1)))
	if _, err := mustToolDriver(t, Config{SpecURL: specURL}).ExecuteTool(context.Background(), "listPets", nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]recorded{{Method: "GET", URI: "/v1/pets", Header: hdr()}}, api.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	sent := make(chan string, 1)
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent <- r.URL.String()
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Header: http.Header{}, Request: r}, nil
	})
	td := mustToolDriver(t, Config{Spec: []byte(strings.Replace(doc, "HOST", "api.test", 1)), HTTPClient: &http.Client{Transport: rt}})
	if _, err := td.ExecuteTool(context.Background(), "listPets", nil); err != nil {
		t.Fatal(err)
	}
	if got := <-sent; got != "https://api.test/v1/pets" {
		t.Errorf("inline document: request to %q, want https://api.test/v1/pets", got)
	}
}

// External references in a Swagger 2.0 document are not fetched either.
func TestSwaggerExternalRefsAreNotFetched(t *testing.T) {
	external := newAPI(t, nil)
	const doc = `{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{"/things":{"post":{
  "operationId":"createThing",
  "parameters":[{"$ref":"EXTERNAL/params.json#/Limit"},{"name":"q","in":"query","type":"string"},
    {"name":"thing","in":"body","schema":{"$ref":"EXTERNAL/schemas.json#/Thing"}}],
  "responses":{"200":{"description":"ok","schema":{"$ref":"EXTERNAL/schemas.json#/Thing"}}}}}}}`
	jsonDoc := strings.ReplaceAll(doc, "EXTERNAL", external.URL)
	var v any
	if err := json.Unmarshal([]byte(jsonDoc), &v); err != nil {
		t.Fatal(err)
	}
	yamlDoc, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"json": []byte(jsonDoc), "yaml": yamlDoc} {
		t.Run(name, func(t *testing.T) {
			tools := listTools(t, Config{Spec: data, BaseURL: "http://127.0.0.1:1"})
			var got []string
			for _, p := range tools[0].Parameters {
				got = append(got, p.Name)
			}
			if diff := cmp.Diff([]string{"q", "body"}, got); diff != "" {
				t.Errorf("parameters (-want +got):\n%s", diff)
			}
		})
	}
	if n := len(external.requests()); n != 0 {
		t.Errorf("the external server received %d requests, want 0", n)
	}
}

// OpenAPI 3.1: server variables (scheme included) take their defaults, and an
// application/*+json body is sent with its own media type.
func TestOpenAPI31Execute(t *testing.T) {
	type sent struct{ URL, ContentType, Body string }
	got := make(chan sent, 1)
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		body, _ := io.ReadAll(r.Body)
		got <- sent{r.URL.String(), r.Header.Get("Content-Type"), string(body)}
		return &http.Response{StatusCode: 201, Body: io.NopCloser(strings.NewReader("created")), Header: http.Header{}, Request: r}, nil
	})
	td := mustToolDriver(t, Config{Spec: fixture(t, "openapi31.yaml"), HTTPClient: &http.Client{Transport: rt}})
	res, err := td.ExecuteTool(context.Background(), "createNote", map[string]any{"title": "Groceries", "priority": 3.0, "body": nil})
	if err != nil || res != "created" {
		t.Fatalf("result = %v, %v", res, err)
	}
	want := sent{"https://notes.example.com/v2/notes", "application/vnd.notes+json", `{"priority":3,"title":"Groceries"}`}
	if diff := cmp.Diff(want, <-got); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}
