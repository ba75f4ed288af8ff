package rest

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/apispec"
)

// stripeAPI serves the Stripe-shaped document and returns a driver for it.
func stripeAPI(t *testing.T, respond http.HandlerFunc) (*apiServer, *ToolDriver) {
	t.Helper()
	api := newAPI(t, respond)
	return api, mustToolDriver(t, Config{Spec: apispec.Stripe(0), BaseURL: api.URL})
}

func paramNames(tool mcs.Tool) []string {
	var out []string
	for _, p := range tool.Parameters {
		out = append(out, p.Name)
	}
	return out
}

func TestStripeShapedTools(t *testing.T) {
	_, td := stripeAPI(t, nil)
	tools, err := td.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]mcs.Tool{}
	for _, tool := range tools {
		if len(tool.Name) > 64 {
			t.Errorf("name %q has %d characters", tool.Name, len(tool.Name))
		}
		byName[tool.Name] = tool
	}
	// Empty body schemas give no phantom body parameter.
	want := map[string][]string{
		"GetCustomers":            {"created", "email", "expand", "limit"},
		"GetCustomersCustomer":    {"customer", "expand"},
		"DeleteCustomersCustomer": {"customer"},
		"PostCustomers":           {"address", "balance", "description", "email", "expand", "metadata", "name", "preferred_locales", "tax_exempt"},
	}
	for name, params := range want {
		if diff := cmp.Diff(params, paramNames(byName[name])); diff != "" {
			t.Errorf("%s parameters (-want +got):\n%s", name, diff)
		}
	}
	// The 81-character operationId is shortened and kept in the description.
	const long = "PostTestHelpersTreasuryOutboundTransfersOutboundTransferReturnWithExtendedDetails"
	var found bool
	for _, tool := range tools {
		if strings.HasPrefix(tool.Name, long[:56]) {
			found = true
			if len(tool.Name) != 64 || !strings.HasSuffix(tool.Description, "(operationId: "+long+")") {
				t.Errorf("shortened tool %q: description %q", tool.Name, tool.Description)
			}
		}
	}
	if !found {
		t.Errorf("no tool for %s", long)
	}
	// Behaviour hints from the method.
	if a := byName["GetCustomers"].Annotations; a == nil || !a.ReadOnly {
		t.Errorf("GetCustomers annotations %+v, want read-only", a)
	}
	if a := byName["DeleteCustomersCustomer"].Annotations; a == nil || !a.Destructive || a.ReadOnly {
		t.Errorf("DeleteCustomersCustomer annotations %+v, want destructive", a)
	}
}

func TestStripeShapedRequests(t *testing.T) {
	form := hdr("Content-Type", "application/x-www-form-urlencoded")
	tests := []struct {
		name string
		tool string
		args map[string]any
		want recorded
	}{
		{
			name: "form body with deep objects, a number in metadata and expand[]",
			tool: "PostCustomers",
			args: map[string]any{
				"address":           map[string]any{"city": "Berlin", "country": "DE"},
				"metadata":          map[string]any{"order": 42.0},
				"expand":            []any{"tax"},
				"email":             "a+b@example.com",
				"balance":           5.0,
				"preferred_locales": []any{"de", "en"},
				"tax_exempt":        "none",
				"name":              "Ada Lovelace",
			},
			want: recorded{Method: "POST", URI: "/v1/customers", Header: form, Body: "address%5Bcity%5D=Berlin&address%5Bcountry%5D=DE&balance=5&" +
				"email=a%2Bb%40example.com&expand%5B%5D=tax&metadata%5Border%5D=42&name=Ada+Lovelace&" +
				"preferred_locales%5B%5D=de&preferred_locales%5B%5D=en&tax_exempt=none"},
		},
		{
			name: "an object given as JSON text by the model",
			tool: "PostCustomersCustomer",
			args: map[string]any{"customer": "cus_1", "address": `{"city":"Berlin"}`, "metadata": map[string]any{}},
			want: recorded{Method: "POST", URI: "/v1/customers/cus_1", Header: form, Body: "address%5Bcity%5D=Berlin&metadata="},
		},
		{
			name: "deepObject query, expand[] and no body on a GET",
			tool: "GetCustomers",
			args: map[string]any{"created": map[string]any{"gte": 100.0, "lt": 200.0}, "expand": []any{"data.tax", "data.sources"}, "limit": 3.0},
			want: recorded{Method: "GET", URI: "/v1/customers?created%5Bgte%5D=100&created%5Blt%5D=200&expand%5B%5D=data.tax&expand%5B%5D=data.sources&limit=3", Header: hdr()},
		},
		{
			name: "delete without a body",
			tool: "DeleteCustomersCustomer",
			args: map[string]any{"customer": "cus_1"},
			want: recorded{Method: "DELETE", URI: "/v1/customers/cus_1", Header: hdr()},
		},
		{
			name: "nested deep object on a shortened tool",
			tool: toolFor(t, "PostTestHelpersTreasuryOutboundTransfersOutboundTransferReturnWithExtendedDetails"),
			args: map[string]any{"outbound_transfer": "obt_1", "returned_details": map[string]any{"code": "declined"}, "expand": []any{"transaction"}},
			want: recorded{Method: "POST", URI: "/v1/test_helpers/treasury/outbound_transfers/obt_1/return_with_extended_details", Header: form,
				Body: "expand%5B%5D=transaction&returned_details%5Bcode%5D=declined"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api, td := stripeAPI(t, nil)
			if _, err := td.ExecuteTool(context.Background(), tc.tool, tc.args); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]recorded{tc.want}, api.requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// toolFor returns the tool name the Stripe-shaped document gives operationID.
func toolFor(t *testing.T, operationID string) string {
	t.Helper()
	tools, err := mustToolDriver(t, Config{Spec: apispec.Stripe(0), BaseURL: "http://127.0.0.1:1"}).ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if tool.Name == operationID || strings.HasSuffix(tool.Description, "(operationId: "+operationID+")") {
			return tool.Name
		}
	}
	t.Fatalf("no tool for %s", operationID)
	return ""
}

// A multipart body without files: deepObject fields as text parts, an object
// without encoding as a JSON part, exactly as OpenAPI describes.
func TestStripeShapedMultipart(t *testing.T) {
	api, td := stripeAPI(t, nil)
	_, err := td.ExecuteTool(context.Background(), "PostFileLinksMultipart", map[string]any{
		"file": "file_123", "metadata": map[string]any{"a": "b"}, "expand": []any{"link"},
		"options": map[string]any{"expires_after": 10.0},
	})
	if err != nil {
		t.Fatal(err)
	}
	reqs := api.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	mt, params, err := mime.ParseMediaType(reqs[0].Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		t.Fatalf("Content-Type %q", reqs[0].Header.Get("Content-Type"))
	}
	b := params["boundary"]
	part := func(name, ct, value string) string {
		s := "--" + b + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n"
		if ct != "" {
			s += "Content-Type: " + ct + "\r\n"
		}
		return s + "\r\n" + value + "\r\n"
	}
	want := part("expand[]", "", "link") + part("file", "", "file_123") + part("metadata[a]", "", "b") +
		part("options", "application/json", `{"expires_after":10}`) + "--" + b + "--\r\n"
	if diff := cmp.Diff(want, reqs[0].Body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestErrorBodies(t *testing.T) {
	page := "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center>" +
		strings.Repeat("<p>padding</p>", 100) + "</body></html>"
	tests := []struct {
		name    string
		status  int
		ctype   string
		body    string
		want    string
		message string
	}{
		{"html error page", 502, "text/html; charset=utf-8", page,
			`502 Bad Gateway: HTML page "502 Bad Gateway" (` + itoa(len(page)) + ` bytes), not shown`, ""},
		{"html without content type", 503, "", "<html><body><h1>Down for\n maintenance &amp; more</h1></body></html>",
			`503 Service Unavailable: HTML page "Down for maintenance & more" (67 bytes), not shown`, ""},
		{"stripe error", 400, "application/json", "{\n  \"error\": {\n    \"message\": \"No such customer: 'cus_x'\",\n    \"type\": \"invalid_request_error\"\n  }\n}",
			`400 Bad Request: {"error":{"message":"No such customer: 'cus_x'","type":"invalid_request_error"}}`, "No such customer: 'cus_x'"},
		{"long json error keeps its message", 422, "application/json",
			`{"documentation_url":"` + strings.Repeat("d", 600) + `","message":"Validation Failed"}`,
			`422 Unprocessable Entity: Validation Failed; body: {"documentation_url":"` + strings.Repeat("d", 478), "Validation Failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, td := stripeAPI(t, func(w http.ResponseWriter, r *http.Request) {
				if tc.ctype != "" {
					w.Header().Set("Content-Type", tc.ctype)
				} else {
					w.Header()["Content-Type"] = nil
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			})
			_, err := td.ExecuteTool(context.Background(), "GetCustomers", nil)
			var se *StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want a *StatusError", err)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n%s\nwant\n%s", err, tc.want)
			}
			if se.Message != tc.message {
				t.Errorf("Message %q, want %q", se.Message, tc.message)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("the error spans lines: %q", err)
			}
		})
	}
}

// A 200 HTML page (a login portal in front of the API) is summarised too, unless
// the operation documents HTML.
func TestSuccessfulHTMLIsSummarised(t *testing.T) {
	_, td := stripeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><title>Sign in</title><body>form</body></html>"))
	})
	got, err := td.ExecuteTool(context.Background(), "GetCustomers", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `200 OK: HTML page "Sign in" (52 bytes), not shown`; got != want {
		t.Errorf("result %q, want %q", got, want)
	}
}

// Errors name the tool as the model called it: the name an orchestrator put in
// the call's CallInfo.
func TestErrorsNameTheCalledTool(t *testing.T) {
	_, td := stripeAPI(t, nil)
	ctx := mcs.ContextWithCallInfo(context.Background(), mcs.CallInfo{
		Driver: mcs.Meta{ID: "mcs-go/orchestrator"}, Label: "stripe", Tool: mcs.Tool{Name: "stripe__GetCustomersCustomer"},
	})
	_, err := td.ExecuteTool(ctx, "GetCustomersCustomer", map[string]any{"nope": 1.0})
	var ae *mcs.ArgumentsError
	if !errors.As(err, &ae) || ae.Tool != "stripe__GetCustomersCustomer" || len(ae.Problems) < 2 {
		t.Fatalf("error %v, want an *mcs.ArgumentsError naming stripe__GetCustomersCustomer", err)
	}
	// A REST driver's own BaseDriver names the tool by its own name.
	ctx = mcs.ContextWithCallInfo(context.Background(), mcs.CallInfo{Driver: td.Meta(), Tool: mcs.Tool{Name: "GetCustomersCustomer"}})
	if _, err := td.ExecuteTool(ctx, "GetCustomersCustomer", map[string]any{"nope": 1.0}); !strings.HasPrefix(err.Error(), `GetCustomersCustomer: invalid arguments`) {
		t.Errorf("error %v", err)
	}
	_, err = td.ExecuteTool(mcs.ContextWithCallInfo(context.Background(), mcs.CallInfo{Driver: mcs.Meta{ID: "x"}, Tool: mcs.Tool{Name: "s__gone"}}), "gone", nil)
	if !errors.Is(err, mcs.ErrUnknownTool) || !strings.Contains(err.Error(), `"s__gone"`) {
		t.Errorf("unknown tool error %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestParameterStyles(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /s/{simple}/{label}/{matrix}/{simpleX}/{labelX}/{matrixX}:
    get:
      operationId: styles
      parameters:
        - {name: simple, in: path, required: true, schema: {type: object}}
        - {name: label, in: path, required: true, style: label, schema: {type: array, items: {type: string}}}
        - {name: matrix, in: path, required: true, style: matrix, schema: {type: object}}
        - {name: simpleX, in: path, required: true, explode: true, schema: {type: object}}
        - {name: labelX, in: path, required: true, style: label, explode: true, schema: {type: object}}
        - {name: matrixX, in: path, required: true, style: matrix, explode: true, schema: {type: array, items: {type: string}}}
        - {name: spaced, in: query, style: spaceDelimited, explode: false, schema: {type: array, items: {type: string}}}
        - {name: piped, in: query, style: pipeDelimited, explode: false, schema: {type: array, items: {type: string}}}
        - {name: formObject, in: query, explode: false, schema: {type: object}}
        - {name: exploded, in: query, schema: {type: object}}
        - {name: deep, in: query, style: deepObject, explode: true, schema: {type: object}}
      responses: {"200": {description: ok}}
`
	api := newAPI(t, nil)
	td := mustToolDriver(t, Config{Spec: []byte(doc), BaseURL: api.URL})
	obj := map[string]any{"R": 100.0, "G": "a b"}
	_, err := td.ExecuteTool(context.Background(), "styles", map[string]any{
		"simple": obj, "label": []any{"x", "y"}, "matrix": obj, "simpleX": obj, "labelX": obj, "matrixX": []any{"x", "y"},
		"spaced": []any{"blue", "black"}, "piped": []any{"a", "b"}, "formObject": obj, "exploded": map[string]any{"k": "v"},
		"deep": map[string]any{"outer": map[string]any{"inner": "v"}, "list": []any{"a"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "/s/G,a%20b,R,100/.x,y/;matrix=G,a%20b,R,100/G=a%20b,R=100/.G=a%20b.R=100/;matrixX=x;matrixX=y" +
		"?deep%5Blist%5D%5B%5D=a&deep%5Bouter%5D%5Binner%5D=v&formObject=G%2Ca%20b%2CR%2C100&k=v&piped=a%7Cb&spaced=blue%20black"
	if got := api.requests()[0].URI; got != want {
		t.Errorf("URI\n%s\nwant\n%s", got, want)
	}
}

// BenchmarkPrepareStripeForm measures building the request of a Stripe-shaped
// form call with deep objects (argument checks and encoding; nothing is sent).
func BenchmarkPrepareStripeForm(b *testing.B) {
	td, err := NewToolDriver(Config{Spec: apispec.Stripe(0), BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		b.Fatal(err)
	}
	s, err := td.load(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	op := s.ops["PostCustomers"]
	args := map[string]any{
		"address":  map[string]any{"city": "Berlin", "country": "DE", "line1": "Unter den Linden 1"},
		"metadata": map[string]any{"order": 42.0, "channel": "web"},
		"expand":   []any{"tax", "sources"}, "email": "ada@example.com", "name": "Ada Lovelace",
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := op.prepare(args); err != nil {
			b.Fatal(err)
		}
	}
}

// An operation that documents an HTML response gets the page itself, whether
// the document takes the fast JSON path or the ordinary one (YAML), and whether
// the response is written inline or as a reference to a response component.
func TestDocumentedHTMLIsReturned(t *testing.T) {
	page := "<html><title>Report</title><body>rows</body></html>"
	api := newAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, page)
	})
	docs := map[string]string{
		"json inline": `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{"/report":{"get":{"operationId":"report","responses":{"200":{"description":"ok","content":{"text/html":{"schema":{"type":"string"}}}}}}}}}`,
		"json ref":    `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{"/report":{"get":{"operationId":"report","responses":{"200":{"$ref":"#/components/responses/Page"}}}}},"components":{"responses":{"Page":{"description":"ok","content":{"text/html":{"schema":{"type":"string"}}}}}}}`,
		"yaml inline": "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /report:\n    get:\n      operationId: report\n      responses:\n        '200': {description: ok, content: {text/html: {schema: {type: string}}}}\n",
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			td := mustToolDriver(t, Config{Spec: []byte(doc), BaseURL: api.URL, NoCache: true})
			got, err := td.ExecuteTool(context.Background(), "report", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != page {
				t.Errorf("result %q, want the page %q", got, page)
			}
		})
	}
}
