package rest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/middleware/permission"
)

const petstore = `openapi: 3.0.3
info: {title: Petstore, version: 1.0.0}
servers: [{url: /v1}]
paths:
  /pets:
    get:
      operationId: listPets
      summary: List all pets
      parameters:
        - {name: limit, in: query, schema: {type: integer}}
      responses: {"200": {description: The pets}}
  /pets/{petId}:
    delete:
      operationId: deletePet
      summary: Delete a pet
      security: [{petstore_auth: []}]
      parameters:
        - {name: petId, in: path, required: true, schema: {type: string}}
      responses: {"204": {description: Deleted}}
components:
  securitySchemes:
    petstore_auth: {type: http, scheme: bearer}
`

// petstoreServer serves the document above and a tiny pet API.
func petstoreServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/openapi.yaml":
			_, _ = io.WriteString(w, petstore)
		case r.Method == http.MethodGet && r.URL.Path == "/v1/pets":
			fmt.Fprintf(w, `[{"id":1,"name":"Rex"}] (limit=%s)`, r.URL.Query().Get("limit"))
		case r.Method == http.MethodDelete:
			fmt.Fprintf(w, "deleted %s as %q", r.URL.Path, r.Header.Get("Authorization"))
		default:
			http.NotFound(w, r)
		}
	}))
}

// A REST driver over an OpenAPI document, with the permission middleware:
// reading is allowed by a rule, deleting is denied, and the model reads the
// denial as the call's result.
func ExampleNew() {
	api := petstoreServer()
	defer api.Close()

	policy := permission.New(nil, permission.WithRules(
		permission.Allow("list*"),
		permission.Deny("delete*"),
	))
	d, err := rest.New(rest.Config{SpecURL: api.URL + "/openapi.yaml"}, mcs.WithMiddleware(policy))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()

	resp := d.ProcessLLMResponse(ctx, `{"tool":"listPets","arguments":{"limit":1}}`)
	fmt.Println(resp.CallExecuted, resp.Calls[0].Result)

	resp = d.ProcessLLMResponse(ctx, `{"tool":"deletePet","arguments":{"petId":"1"}}`)
	fmt.Println(resp.CallExecuted, resp.Calls[0].Result)
	// Output:
	// true [{"id":1,"name":"Rex"}] (limit=1)
	// true {"message":"Execution of 'deletePet' was denied by policy.","permission_denied":true,"tool":"deletePet"}
}

// The tool half alone: tools in document order, and a call that uses the
// operator's credential for the driver (Name "petstore", bound to the document's
// scheme petstore_auth) without showing it.
func ExampleNewToolDriver() {
	api := petstoreServer()
	defer api.Close()

	td, err := rest.NewToolDriver(rest.Config{
		SpecURL:     api.URL + "/openapi.yaml",
		Name:        "petstore",
		Credentials: auth.NewStaticProvider(map[string]string{"petstore": "s3cr3t-token"}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	tools, err := td.ListTools(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range tools {
		fmt.Printf("%s: %s\n", t.Name, t.Description)
	}
	res, err := td.ExecuteTool(ctx, "deletePet", map[string]any{"petId": "7"})
	fmt.Println(res, err)
	_, err = td.ExecuteTool(ctx, "deletePet", map[string]any{"id": "7"})
	fmt.Println(err)
	// Output:
	// listPets: List all pets
	// deletePet: Delete a pet
	// deleted /v1/pets/7 as "Bearer [REDACTED]" <nil>
	// deletePet: invalid arguments: unknown argument "id"; missing required argument "petId"; valid arguments: petId (required)
}

// A document that declares no security scheme, as GitHub's does not: AuthScheme
// says how the credential goes out, here as a bearer token of the driver's own
// scope. Without AuthScheme the credentials would have nowhere to go, and
// loading the document fails with an error wrapping ErrNoSecurityScheme.
func ExampleConfig_authScheme() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "user for %q", r.Header.Get("Authorization"))
	}))
	defer api.Close()
	doc := []byte(`openapi: 3.0.3
info: {title: Unsecured, version: "1"}
paths:
  /user:
    get:
      operationId: getUser
      responses: {"200": {description: The user}}
`)
	tokens := auth.NewStaticProvider(map[string]string{"github": "gh-token"})

	td, err := rest.NewToolDriver(rest.Config{Spec: doc, BaseURL: api.URL, Credentials: tokens, Name: "github", NoCache: true})
	if err != nil {
		panic(err)
	}
	_, err = td.ListTools(context.Background())
	fmt.Println(errors.Is(err, rest.ErrNoSecurityScheme))

	td, err = rest.NewToolDriver(rest.Config{Spec: doc, BaseURL: api.URL, Credentials: tokens, Name: "github", AuthScheme: "bearer", NoCache: true})
	if err != nil {
		panic(err)
	}
	res, err := td.ExecuteTool(context.Background(), "getUser", nil)
	fmt.Println(res, err)
	// Output:
	// true
	// user for "Bearer [REDACTED]" <nil>
}
