package apispec

import (
	"encoding/json"
	"fmt"
	"strings"
)

// emptyForm is the request body Stripe's description gives operations that take
// none (most GETs and DELETEs): a form whose schema admits only an empty object.
func emptyForm() map[string]any {
	return map[string]any{
		"content": map[string]any{"application/x-www-form-urlencoded": map[string]any{
			"encoding": map[string]any{},
			"schema":   map[string]any{"additionalProperties": false, "properties": map[string]any{}, "type": "object"},
		}},
		"required": false,
	}
}

func deep() map[string]any { return map[string]any{"explode": true, "style": "deepObject"} }

func expandQuery() map[string]any {
	return map[string]any{
		"name": "expand", "in": "query", "style": "deepObject", "explode": true,
		"description": "Specifies which fields in the response should be expanded.",
		"schema":      map[string]any{"type": "array", "items": map[string]any{"type": "string", "maxLength": 5000}},
	}
}

// customerFields are the form fields of creating and updating a customer.
func customerFields() (map[string]any, map[string]any) {
	str := func(d string) map[string]any {
		return map[string]any{"type": "string", "maxLength": 5000, "description": d}
	}
	props := map[string]any{
		"address": map[string]any{
			"description": "The customer's address.",
			"type":        "object",
			"properties": map[string]any{
				"city": str("City, district, suburb, town, or village."), "country": str("Two-letter country code."),
				"line1": str("Address line 1."), "postal_code": str("ZIP or postal code."),
			},
		},
		"balance":     map[string]any{"type": "integer", "description": "An integer amount in cents."},
		"description": str("An arbitrary string that you can attach to a customer object."),
		"email":       str("Customer's email address."),
		"expand":      map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Specifies which fields in the response should be expanded."},
		"metadata": map[string]any{
			"type": "object", "additionalProperties": map[string]any{"type": "string"},
			"description": "Set of key-value pairs that you can attach to an object.",
		},
		"name":              str("The customer's full name or business name."),
		"preferred_locales": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Customer's preferred languages, ordered by preference."},
		"tax_exempt":        map[string]any{"type": "string", "enum": []any{"exempt", "none", "reverse"}, "description": "The customer's tax exemption."},
	}
	enc := map[string]any{"address": deep(), "expand": deep(), "metadata": deep(), "preferred_locales": deep()}
	return props, enc
}

// Stripe returns a Stripe-shaped OpenAPI 3.0 document (JSON) of at least the
// core operations, padded with generated resources up to n operations: form
// bodies with encoding objects (deepObject for address, metadata and expand),
// empty body schemas on GETs and DELETEs, expand[] query parameters, a
// multipart body without files, and Stripe's long CamelCase operationIds
// (the longest over 64 characters).
func Stripe(n int) []byte {
	props, enc := customerFields()
	form := func(props, enc map[string]any, required ...string) map[string]any {
		schema := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
		if len(required) > 0 {
			schema["required"] = required
		}
		return map[string]any{
			"content":  map[string]any{"application/x-www-form-urlencoded": map[string]any{"encoding": enc, "schema": schema}},
			"required": len(required) > 0,
		}
	}
	resp := map[string]any{
		"200":     map[string]any{"description": "Successful response.", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}},
		"default": map[string]any{"description": "Error response.", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}},
	}
	path := func(name string) map[string]any {
		return map[string]any{"name": name, "in": "path", "required": true, "style": "simple", "schema": map[string]any{"type": "string", "maxLength": 5000}}
	}
	created := map[string]any{
		"name": "created", "in": "query", "style": "deepObject", "explode": true,
		"description": "Only return customers that were created during the given date interval.",
		"schema": map[string]any{"type": "object", "properties": map[string]any{
			"gt": map[string]any{"type": "integer"}, "gte": map[string]any{"type": "integer"},
			"lt": map[string]any{"type": "integer"}, "lte": map[string]any{"type": "integer"},
		}},
	}
	limit := map[string]any{"name": "limit", "in": "query", "schema": map[string]any{"type": "integer"}, "description": "A limit on the number of objects to be returned, between 1 and 100."}
	paths := map[string]any{
		"/v1/customers": map[string]any{
			"get": map[string]any{"operationId": "GetCustomers", "summary": "List all customers", "description": "Returns a list of your customers.",
				"parameters":  []any{created, map[string]any{"name": "email", "in": "query", "schema": map[string]any{"type": "string"}}, expandQuery(), limit},
				"requestBody": emptyForm(), "responses": resp},
			"post": map[string]any{"operationId": "PostCustomers", "summary": "Create a customer", "description": "Creates a new customer object.",
				"requestBody": form(props, enc), "responses": resp},
		},
		"/v1/customers/{customer}": map[string]any{
			"get": map[string]any{"operationId": "GetCustomersCustomer", "summary": "Retrieve a customer", "description": "Retrieves a Customer object.",
				"parameters": []any{path("customer"), expandQuery()}, "requestBody": emptyForm(), "responses": resp},
			"post": map[string]any{"operationId": "PostCustomersCustomer", "summary": "Update a customer", "description": "Updates the specified customer by setting the values of the parameters passed.",
				"parameters": []any{path("customer")}, "requestBody": form(props, enc), "responses": resp},
			"delete": map[string]any{"operationId": "DeleteCustomersCustomer", "summary": "Delete a customer", "description": "Permanently deletes a customer.",
				"parameters": []any{path("customer")}, "requestBody": emptyForm(), "responses": resp},
		},
		"/v1/test_helpers/treasury/outbound_transfers/{outbound_transfer}/return_with_extended_details": map[string]any{
			"post": map[string]any{"operationId": "PostTestHelpersTreasuryOutboundTransfersOutboundTransferReturnWithExtendedDetails",
				"summary": "Test mode: return an OutboundTransfer", "description": "Transitions a test mode created OutboundTransfer to the returned status.",
				"parameters": []any{path("outbound_transfer")},
				"requestBody": form(map[string]any{
					"returned_details": map[string]any{"type": "object", "properties": map[string]any{"code": map[string]any{"type": "string", "enum": []any{"account_closed", "declined"}}}},
					"expand":           map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				}, map[string]any{"returned_details": deep(), "expand": deep()}),
				"responses": resp},
		},
		"/v1/files/links_without_file": map[string]any{
			"post": map[string]any{"operationId": "PostFileLinksMultipart", "summary": "Create a file link from a multipart form",
				"requestBody": map[string]any{"required": true, "content": map[string]any{"multipart/form-data": map[string]any{
					"encoding": map[string]any{"metadata": deep(), "expand": deep()},
					"schema": map[string]any{"type": "object", "required": []any{"file"}, "properties": map[string]any{
						"file":     map[string]any{"type": "string", "description": "The ID of the file."},
						"metadata": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
						"expand":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
						"options":  map[string]any{"type": "object", "properties": map[string]any{"expires_after": map[string]any{"type": "integer"}}},
					}},
				}}},
				"responses": resp},
		},
	}
	count := 7
	resources := []string{"charges", "invoices", "subscriptions", "payment_intents", "prices", "products", "refunds", "payouts", "coupons", "disputes",
		"setup_intents", "tax_rates", "transfers", "webhook_endpoints", "checkout/sessions", "billing_portal/configurations", "issuing/cards", "issuing/cardholders",
		"terminal/readers", "treasury/financial_accounts", "radar/value_lists", "reporting/report_runs", "identity/verification_sessions", "climate/orders"}
	for i := 0; count < n; i++ {
		res := resources[i%len(resources)]
		variant := ""
		if i >= len(resources) {
			variant = fmt.Sprintf("/v%d", i/len(resources))
		}
		base := "/v1/" + res + variant
		id := camel(res + variant)
		one := strings.TrimSuffix(camel(strings.ReplaceAll(res, "/", "_")), "s")
		noun := strings.TrimSuffix(strings.ReplaceAll(strings.ReplaceAll(res, "_", " "), "/", " "), "s")
		a := "a "
		if strings.ContainsRune("aeiou", rune(noun[0])) {
			a = "an "
		}
		paths[base] = map[string]any{
			"get": map[string]any{"operationId": "Get" + id, "summary": "List all " + noun + "s",
				"parameters": []any{expandQuery(), limit}, "requestBody": emptyForm(), "responses": resp},
			"post": map[string]any{"operationId": "Post" + id, "summary": "Create " + a + noun,
				"requestBody": form(map[string]any{"metadata": props["metadata"], "expand": props["expand"], "description": props["description"]},
					map[string]any{"metadata": deep(), "expand": deep()}), "responses": resp},
		}
		paths[base+"/{"+strings.ToLower(one)+"}"] = map[string]any{
			"get": map[string]any{"operationId": "Get" + id + one, "summary": "Retrieve " + a + noun,
				"parameters": []any{path(strings.ToLower(one)), expandQuery()}, "requestBody": emptyForm(), "responses": resp},
			"delete": map[string]any{"operationId": "Delete" + id + one, "summary": "Delete " + a + noun,
				"parameters": []any{path(strings.ToLower(one))}, "requestBody": emptyForm(), "responses": resp},
		}
		count += 4
	}
	data, err := json.Marshal(map[string]any{
		"openapi": "3.0.0",
		"info":    map[string]any{"title": "Stripe-shaped API", "version": "2024-06-20"},
		"servers": []any{map[string]any{"url": "https://api.stripe.example/"}},
		"paths":   paths,
	})
	if err != nil {
		panic(err)
	}
	return data
}

// camel turns "payment_intents/v2" into "PaymentIntentsV2".
func camel(s string) string {
	var sb strings.Builder
	up := true
	for _, r := range s {
		switch {
		case r == '_' || r == '/' || r == '-':
			up = true
		case up:
			sb.WriteString(strings.ToUpper(string(r)))
			up = false
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}
