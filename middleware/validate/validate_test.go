package validate_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/validate"
)

func obj(kv ...any) map[string]any {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// stripeCharge is a Stripe-like tool: nested objects, oneOf, enum, format and an
// array of objects.
var stripeCharge = mcs.Tool{
	Name:        "create_charge",
	Description: "Create a charge.",
	Parameters: []mcs.Parameter{
		{Name: "amount", Required: true, Schema: obj("type", "integer", "minimum", 50)},
		{Name: "currency", Required: true, Schema: obj("type", "string", "enum", []any{"usd", "eur", "gbp"})},
		{Name: "receipt_email", Schema: obj("type", "string", "format", "email")},
		{Name: "capture_at", Schema: obj("type", "string", "format", "date-time")},
		{Name: "source", Required: true, Schema: obj("oneOf", []any{
			obj("type", "object", "required", []any{"type", "card"}, "additionalProperties", false, "properties", obj(
				"type", obj("const", "card"),
				"card", obj("type", "object", "required", []any{"number", "exp_month"}, "properties", obj(
					"number", obj("type", "string", "pattern", "^[0-9]{12,19}$"),
					"exp_month", obj("type", "integer", "minimum", 1, "maximum", 12),
				)),
			)),
			obj("type", "object", "required", []any{"type", "iban"}, "additionalProperties", false, "properties", obj(
				"type", obj("const", "sepa_debit"),
				"iban", obj("type", "string", "minLength", 15),
			)),
		})},
		{Name: "items", Schema: obj("type", "array", "maxItems", 3, "items", obj(
			"type", "object", "required", []any{"sku", "quantity"}, "properties", obj(
				"sku", obj("type", "string"),
				"quantity", obj("type", "integer", "exclusiveMinimum", 0),
			)))},
		{Name: "metadata", Schema: obj("type", "object", "additionalProperties", obj("type", "string"), "maxProperties", 2)},
	},
}

func validCharge() map[string]any {
	return obj(
		"amount", 2000.0,
		"currency", "usd",
		"receipt_email", "jenny@example.com",
		"capture_at", "2026-12-01T10:00:00Z",
		"source", obj("type", "card", "card", obj("number", "4242424242424242", "exp_month", 12.0)),
		"items", []any{obj("sku", "tee", "quantity", 2.0)},
		"metadata", obj("order", "6735"),
	)
}

func with(base map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(base))
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

type deleted struct{} // marks an argument removed by with

func TestCheckStripeLike(t *testing.T) {
	v := validate.New()
	tests := []struct {
		name string
		args map[string]any
		want []string // nil: valid
	}{
		{name: "valid", args: validCharge()},
		{name: "sepa source", args: with(validCharge(), "source", obj("type", "sepa_debit", "iban", "DE89370400440532013000"))},
		{name: "integer as string", args: with(validCharge(), "amount", "five"),
			want: []string{`/amount: want integer, got string "five"`}},
		{name: "fraction for integer", args: with(validCharge(), "amount", 20.5),
			want: []string{`/amount: want integer, got number 20.5`}},
		{name: "below minimum", args: with(validCharge(), "amount", 10.0),
			want: []string{`/amount: want a number >= 50, got number 10`}},
		{name: "enum", args: with(validCharge(), "currency", "yen"),
			want: []string{`/currency: want one of "usd", "eur", "gbp", got string "yen"`}},
		{name: "format email", args: with(validCharge(), "receipt_email", "jenny"),
			want: []string{`/receipt_email: want a valid email, got string "jenny" (missing @)`}},
		{name: "format date-time", args: with(validCharge(), "capture_at", "tomorrow"),
			want: []string{`/capture_at: want a valid date-time, got string "tomorrow" (less than 20 characters long)`}},
		{name: "missing required", args: with(validCharge(), "currency", deleted{}),
			want: []string{`/currency: required argument is missing`}},
		{name: "required null", args: with(validCharge(), "currency", nullValue),
			want: []string{`/currency: required argument is null; give a value`}},
		{name: "unknown argument", args: with(validCharge(), "colour", "red"),
			want: []string{`/colour: unknown argument; "create_charge" takes amount, currency, receipt_email, capture_at, source, items, metadata`}},
		{name: "nested array item", args: with(validCharge(), "items", []any{obj("sku", "tee", "quantity", 2.0), obj("sku", "mug", "quantity", 0.0)}),
			want: []string{`/items/1/quantity: want a number > 0, got number 0`}},
		{name: "nested required", args: with(validCharge(), "items", []any{obj("quantity", 1.0)}),
			want: []string{`/items/0/sku: required property is missing`}},
		{name: "too many items", args: with(validCharge(), "items", []any{obj("sku", "a", "quantity", 1.0), obj("sku", "b", "quantity", 1.0), obj("sku", "c", "quantity", 1.0), obj("sku", "d", "quantity", 1.0)}),
			want: []string{`/items: want at most 3 items, got 4`}},
		{name: "additional properties schema", args: with(validCharge(), "metadata", obj("order", 6735.0)),
			want: []string{`/metadata/order: want string, got number 6735`}},
		{name: "oneOf none", args: with(validCharge(), "source", obj("type", "card", "card", obj("number", "42", "exp_month", 13.0))),
			want: []string{`/source: want a value matching one of the 2 oneOf alternatives, got object matching none | alternative 1: /source/card/exp_month: want a number <= 12, got number 13, /source/card/number: want a string matching the pattern "^[0-9]{12,19}$", got string "42" | alternative 2: /source/card: property not allowed here, /source/iban: required property is missing, /source/type: want "sepa_debit", got string "card"`}},
		{name: "every problem at once", args: obj("amount", "five", "currency", "yen", "source", obj("type", "card", "card", obj("number", "4242424242424242", "exp_month", 1.0)), "x", true),
			want: []string{
				`/amount: want integer, got string "five"`,
				`/currency: want one of "usd", "eur", "gbp", got string "yen"`,
				`/x: unknown argument; "create_charge" takes amount, currency, receipt_email, capture_at, source, items, metadata`,
			}},
		{name: "optional null is absent", args: with(validCharge(), "receipt_email", nullValue)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := fixNull(tt.args)
			_, err := v.Check(stripeCharge, args)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			var ae *mcs.ArgumentsError
			if !errors.As(err, &ae) {
				t.Fatalf("Check error = %v, want *mcs.ArgumentsError", err)
			}
			if ae.Tool != "create_charge" {
				t.Errorf("Tool = %q", ae.Tool)
			}
			if diff := cmp.Diff(tt.want, ae.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// nullValue marks a JSON null in a table (nil deletes in with).
type nullMarker struct{}

var nullValue = nullMarker{}

func fixNull(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch v.(type) {
		case nullMarker:
			out[k] = nil
		case deleted:
		default:
			out[k] = v
		}
	}
	return out
}

func TestUnknownPolicies(t *testing.T) {
	tool := mcs.Tool{Name: "t", Description: "d", Parameters: []mcs.Parameter{{Name: "a"}}}
	args := map[string]any{"a": "x", "b": 1.0}
	for _, tt := range []struct {
		u       validate.Unknown
		want    map[string]any
		wantErr bool
	}{
		{u: validate.UnknownError, wantErr: true},
		{u: validate.UnknownDrop, want: map[string]any{"a": "x"}},
		{u: validate.UnknownAllow, want: map[string]any{"a": "x", "b": 1.0}},
	} {
		t.Run(tt.u.String(), func(t *testing.T) {
			got, err := validate.New(validate.WithUnknown(tt.u)).Check(tool, args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if len(args) != 2 {
				t.Errorf("the caller's map was modified: %v", args)
			}
		})
	}
	for _, s := range []string{"", "error", "drop", "allow"} {
		u, err := validate.ParseUnknown(s)
		if err != nil || (s != "" && u.String() != s) {
			t.Errorf("ParseUnknown(%q) = %v, %v", s, u, err)
		}
	}
	if _, err := validate.ParseUnknown("ignore"); err == nil || !strings.Contains(err.Error(), `"drop"`) {
		t.Errorf("ParseUnknown(ignore) error = %v", err)
	}
	_, err := validate.New().Check(mcs.Tool{Name: "none", Description: "d"}, map[string]any{"q": 1.0})
	if err == nil || !strings.Contains(err.Error(), `/q: unknown argument; "none" takes no arguments`) {
		t.Errorf("no-parameter tool: %v", err)
	}
}

func TestDrafts(t *testing.T) {
	tests := []struct {
		name   string
		schema map[string]any
		value  any
		ok     bool
	}{
		// draft 4: boolean exclusiveMinimum is the draft's own form
		{"draft4 exclusive bound", obj("$schema", "http://json-schema.org/draft-04/schema#", "type", "number", "minimum", 5, "exclusiveMinimum", true), 5.0, false},
		{"draft4 exclusive bound above", obj("$schema", "http://json-schema.org/draft-04/schema#", "type", "number", "minimum", 5, "exclusiveMinimum", true), 6.0, true},
		// prefixItems is a 2020-12 keyword; draft 7 ignores it
		{"2020 prefixItems", obj("type", "array", "prefixItems", []any{obj("type", "string")}), []any{1.0}, false},
		{"draft7 ignores prefixItems", obj("$schema", "http://json-schema.org/draft-07/schema#", "type", "array", "prefixItems", []any{obj("type", "string")}), []any{1.0}, true},
		{"draft6 const", obj("$schema", "http://json-schema.org/draft-06/schema#", "const", "x"), "y", false},
		{"2019-09 dependentRequired", obj("$schema", "https://json-schema.org/draft/2019-09/schema", "type", "object", "dependentRequired", obj("a", []any{"b"})), obj("a", 1.0), false},
		{"local $defs ref", obj("$defs", obj("id", obj("type", "integer")), "$ref", "#/$defs/id"), "x", false},
		{"local $defs ref ok", obj("$defs", obj("id", obj("type", "integer")), "$ref", "#/$defs/id"), 3.0, true},
		// OpenAPI 3.0 dialect, as the REST driver passes it on
		{"openapi nullable", obj("type", "string", "nullable", true), nil, true},
		{"openapi exclusive bound", obj("type", "integer", "minimum", 0, "exclusiveMinimum", true), 0.0, false},
		{"openapi exclusive bound above", obj("type", "integer", "minimum", 0, "exclusiveMinimum", true), 1.0, true},
		// Go values are checked by their JSON form
		{"go string slice", obj("type", "array", "items", obj("type", "string")), []string{"a", "b"}, true},
		{"go int slice", obj("type", "array", "items", obj("type", "string")), []int{1}, false},
		{"go type list", obj("type", []string{"string", "number"}), 3.0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := mcs.Tool{Name: "t", Description: "d", Parameters: []mcs.Parameter{{Name: "v", Required: !tt.ok || tt.value != nil, Schema: tt.schema}}}
			_, err := validate.New().Check(tool, map[string]any{"v": tt.value})
			if ok := err == nil; ok != tt.ok {
				t.Errorf("Check(%v) error = %v, want ok=%v", tt.value, err, tt.ok)
			}
			var se *validate.SchemaError
			if errors.As(err, &se) {
				t.Errorf("schema rejected: %v", err)
			}
		})
	}
}

func TestInvalidSchemas(t *testing.T) {
	tests := []struct {
		name   string
		schema map[string]any
		want   string
	}{
		{"bad type", obj("type", "integr"), "invalid"},
		{"remote ref", obj("$ref", "https://example.com/schemas/pet.json"), "never fetched over the network"},
		{"file ref", obj("$ref", "file:///etc/passwd"), "never fetched over the network"},
		{"relative ref", obj("$ref", "other.json#/x"), "never fetched over the network"},
		{"remote meta-schema", obj("$schema", "https://example.com/my-meta", "type", "string"), "never fetched"},
		{"missing local ref", obj("$ref", "#/$defs/nope"), "nope"},
		{"unencodable", obj("type", "string", "default", func() {}), "not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			tool := mcs.Tool{Name: "broken", Description: "d", Parameters: []mcs.Parameter{
				{Name: "ok", Schema: obj("type", "integer")},
				{Name: "bad", Schema: tt.schema},
			}}
			v := validate.New(validate.WithLogger(logger))
			for range 3 {
				_, err := v.Check(tool, map[string]any{"bad": "x"})
				var se *validate.SchemaError
				if !errors.As(err, &se) || se.Parameter != "bad" || se.Tool != "broken" {
					t.Fatalf("err = %v, want *SchemaError for bad", err)
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("error %q does not contain %q", err, tt.want)
				}
			}
			if n := strings.Count(logs.String(), "invalid tool schema"); n != 1 {
				t.Errorf("logged %d times, want once:\n%s", n, logs.String())
			}
			// let through: the broken parameter is unchecked, the others still are
			pass := validate.New(validate.WithUncheckedInvalidSchemas(), validate.WithLogger(logger))
			if _, err := pass.Check(tool, map[string]any{"bad": "x"}); err != nil {
				t.Errorf("unchecked: %v", err)
			}
			if _, err := pass.Check(tool, map[string]any{"ok": "x"}); err == nil {
				t.Error("unchecked: the valid parameter was not checked")
			}
		})
	}
}

func TestCoercion(t *testing.T) {
	params := []mcs.Parameter{
		{Name: "n", Schema: obj("type", "integer")},
		{Name: "f", Schema: obj("type", "number")},
		{Name: "b", Schema: obj("type", "boolean")},
		{Name: "s", Schema: obj("type", "string")},
		{Name: "sn", Schema: obj("type", []any{"string", "number"})},
		{Name: "l", Schema: obj("type", "array", "items", obj("type", "integer"))},
		{Name: "o", Schema: obj("type", "object", "properties", obj("k", obj("type", "boolean")))},
		{Name: "e", Schema: obj("enum", []any{"1", "2"})},
		{Name: "any", Schema: obj()},
		{Name: "ref", Schema: obj("$defs", obj("i", obj("type", "integer")), "$ref", "#/$defs/i")},
		{Name: "alt", Schema: obj("anyOf", []any{obj("type", "integer"), obj("type", "boolean")})},
		{Name: "nullable", Schema: obj("type", "integer", "nullable", true)},
	}
	tool := mcs.Tool{Name: "t", Description: "d", Parameters: params}
	tests := []struct {
		name    string
		args    map[string]any
		want    map[string]any
		wantErr string
	}{
		{name: "integer", args: obj("n", "5"), want: obj("n", 5.0)},
		{name: "negative integer", args: obj("n", "-12"), want: obj("n", -12.0)},
		{name: "integral number for integer", args: obj("n", "5.0"), want: obj("n", 5.0)},
		{name: "fraction for integer stays", args: obj("n", "2.5"), wantErr: `/n: want integer, got string "2.5"`},
		{name: "beyond 2^53 stays", args: obj("n", "9007199254740993"), wantErr: `/n: want integer, got string "9007199254740993"`},
		{name: "number", args: obj("f", "2.5"), want: obj("f", 2.5)},
		{name: "exponent", args: obj("f", "1e3"), want: obj("f", 1000.0)},
		{name: "not a JSON number", args: obj("f", "0x10"), wantErr: `/f: want number, got string "0x10"`},
		{name: "leading space", args: obj("f", " 5"), wantErr: `/f: want number, got string " 5"`},
		{name: "leading zero", args: obj("n", "007"), wantErr: `/n: want integer, got string "007"`},
		{name: "NaN", args: obj("f", "NaN"), wantErr: `/f: want number, got string "NaN"`},
		{name: "boolean", args: obj("b", "true"), want: obj("b", true)},
		{name: "boolean false", args: obj("b", "false"), want: obj("b", false)},
		{name: "boolean other", args: obj("b", "yes"), wantErr: `/b: want boolean, got string "yes"`},
		{name: "string keeps its string", args: obj("s", "5"), want: obj("s", "5")},
		{name: "string or number keeps string", args: obj("sn", "5"), want: obj("sn", "5")},
		{name: "enum of strings keeps string", args: obj("e", "1"), want: obj("e", "1")},
		{name: "no type keeps string", args: obj("any", "5"), want: obj("any", "5")},
		{name: "ref is not followed", args: obj("ref", "5"), wantErr: `/ref: want integer, got string "5"`},
		{name: "array in a string", args: obj("l", `[1, 2]`), want: obj("l", []any{1.0, 2.0})},
		{name: "array in a string, items coerced", args: obj("l", `["1", 2]`), want: obj("l", []any{1.0, 2.0})},
		{name: "array items", args: obj("l", []any{"3", 4.0}), want: obj("l", []any{3.0, 4.0})},
		{name: "object in a string", args: obj("o", `{"k": "true"}`), want: obj("o", obj("k", true))},
		{name: "broken JSON stays", args: obj("o", `{"k": `), wantErr: `/o: want object, got string "{\"k\": "`},
		{name: "anyOf integer or boolean", args: obj("alt", "7"), want: obj("alt", 7.0)},
		{name: "anyOf boolean", args: obj("alt", "false"), want: obj("alt", false)},
		{name: "nullable integer", args: obj("nullable", "3"), want: obj("nullable", 3.0)},
	}
	v := validate.New(validate.WithCoercion())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := cloneArgs(tt.args)
			got, err := v.Check(tool, tt.args)
			if diff := cmp.Diff(before, tt.args); diff != "" {
				t.Errorf("the caller's arguments were modified:\n%s", diff)
			}
			if tt.wantErr != "" {
				var ae *mcs.ArgumentsError
				if !errors.As(err, &ae) || len(ae.Problems) != 1 || ae.Problems[0] != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("coerced (-want +got):\n%s", diff)
			}
		})
	}
	// without the option, nothing is converted
	if _, err := validate.New().Check(tool, obj("n", "5")); err == nil {
		t.Error("coercion without WithCoercion")
	}
}

func cloneArgs(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch x := v.(type) {
		case map[string]any:
			out[k] = cloneArgs(x)
		case []any:
			out[k] = append([]any(nil), x...)
		default:
			out[k] = v
		}
	}
	return out
}

// versioned is a tool driver whose listing can change.
type versioned struct {
	mu    sync.Mutex
	tools []mcs.Tool
	ran   int
}

func (d *versioned) Meta() mcs.Meta { return mcs.Meta{ID: "versioned", Name: "V", Version: "1"} }
func (d *versioned) ListTools(context.Context) ([]mcs.Tool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tools, nil
}
func (d *versioned) ExecuteTool(_ context.Context, name string, args map[string]any) (any, error) {
	d.mu.Lock()
	d.ran++
	d.mu.Unlock()
	return args, nil
}
func (d *versioned) set(schema map[string]any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.tools = []mcs.Tool{{Name: "t", Description: "d", Parameters: []mcs.Parameter{{Name: "x", Required: true, Schema: schema}}}}
}

func TestChangedListingRecompiles(t *testing.T) {
	d := &versioned{}
	d.set(obj("type", "integer"))
	bd := mcs.NewBaseDriver(d, mcs.WithMiddleware(validate.New()))
	ctx := context.Background()
	if _, err := bd.ExecuteTool(ctx, "t", obj("x", 1.0)); err != nil {
		t.Fatal(err)
	}
	if _, err := bd.ExecuteTool(ctx, "t", obj("x", "a")); err == nil {
		t.Fatal("string accepted for integer")
	}
	d.set(obj("type", "string"))
	if _, err := bd.ExecuteTool(ctx, "t", obj("x", "a")); err != nil {
		t.Fatalf("after the listing changed: %v", err)
	}
	if _, err := bd.ExecuteTool(ctx, "t", obj("x", 1.0)); err == nil {
		t.Fatal("the old schema is still used")
	}
	// equal content in new maps reuses the compiled schema and behaves the same
	d.set(obj("type", "string"))
	if _, err := bd.ExecuteTool(ctx, "t", obj("x", 1.0)); err == nil {
		t.Fatal("equal schema in a new map: integer accepted")
	}
	if d.ran != 2 {
		t.Errorf("tool ran %d times, want 2 (only the valid calls)", d.ran)
	}
	// an unknown tool passes to the driver, which reports it
	if _, err := bd.ExecuteTool(ctx, "nope", nil); err != nil {
		t.Logf("unknown tool: %v", err)
	}
}

func TestConcurrentCache(t *testing.T) {
	v := validate.New(validate.WithCoercion())
	tool := stripeCharge
	var wg sync.WaitGroup
	errs := make(chan error, 8*200)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				args := validCharge()
				if (i+g)%2 == 1 {
					args = with(args, "amount", "five")
				}
				_, err := v.Check(tool, args)
				if (err == nil) != ((i+g)%2 == 0) {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("unexpected result: %v", err)
	}
}

func TestNoCallInfoPassesThrough(t *testing.T) {
	v := validate.New()
	ran := false
	_, err := v.OnExecuteTool(context.Background(), "t", obj("x", "y"), func(context.Context, string, map[string]any) (any, error) {
		ran = true
		return nil, nil
	})
	if err != nil || !ran {
		t.Errorf("ran=%v err=%v", ran, err)
	}
}
