package tools_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/tools"
)

// Tools are Go functions; their parameters come from the input struct.
func ExampleAdd() {
	type Greet struct {
		Name  string `json:"name" description:"Who to greet."`
		Times int    `json:"times,omitempty" description:"How often; 1 when absent."`
	}
	t := tools.New(mcs.Meta{ID: "example/greeter", Name: "Greeter", Version: "1.0.0"})
	tools.Add(t, "greet", "Greets someone.", func(_ context.Context, in Greet) (string, error) {
		return strings.TrimSpace(strings.Repeat("hello "+in.Name+" ", max(in.Times, 1))), nil
	})

	driver := mcs.NewBaseDriver(t)
	resp := driver.ProcessLLMResponse(context.Background(), `{"tool": "greet", "arguments": {"name": "Ada", "times": 2}}`)
	fmt.Println(resp.Calls[0].Result)

	list, _ := t.ListTools(context.Background())
	for _, p := range list[0].Parameters {
		fmt.Printf("%s required=%v %v %s\n", p.Name, p.Required, p.Schema["type"], p.Description)
	}
	// Output:
	// hello Ada hello Ada
	// name required=true string Who to greet.
	// times required=false integer How often; 1 when absent.
}

// Bad arguments never reach the function: the model reads every problem at once.
func ExampleTable_ExecuteTool_arguments() {
	type Transfer struct {
		From   string  `json:"from"`
		To     string  `json:"to"`
		Amount float64 `json:"amount"`
	}
	t := tools.New(mcs.Meta{ID: "example/bank", Name: "Bank", Version: "1.0.0"})
	tools.Add(t, "transfer", "Moves money.", func(_ context.Context, in Transfer) (string, error) {
		return fmt.Sprintf("moved %.2f", in.Amount), nil
	})
	_, err := t.ExecuteTool(context.Background(), "transfer", map[string]any{"from": "a", "amount": "ten", "memo": "x"})
	var ae *mcs.ArgumentsError
	if errors.As(err, &ae) {
		for _, p := range ae.Problems {
			fmt.Println(p)
		}
	}
	// Output:
	// /memo: unknown argument; the parameters are "from", "to", "amount"
	// /to: missing required argument (want string)
	// /amount: want number, got string "ten"
}

// Annotations tell consent policies what a tool does; they never reach the model.
func ExampleWithAnnotations() {
	t := tools.New(mcs.Meta{ID: "example/files", Name: "Files", Version: "1.0.0"})
	tools.Add(t, "list", "Lists files.", func(context.Context, struct{}) ([]string, error) { return []string{"a.txt"}, nil },
		tools.WithTitle("List files"), tools.WithAnnotations(mcs.ToolAnnotations{ReadOnly: true}))
	tools.Add(t, "remove", "Removes a file.", func(_ context.Context, in struct {
		Path string `json:"path"`
	}) (string, error) {
		return "removed " + in.Path, nil
	}, tools.WithAnnotations(mcs.ToolAnnotations{Destructive: true}))
	list, _ := t.ListTools(context.Background())
	for _, tool := range list {
		fmt.Printf("%s %q read-only=%v destructive=%v\n", tool.Name, tool.Title, tool.Annotations.ReadOnly, tool.Annotations.Destructive)
	}
	// Output:
	// list "List files" read-only=true destructive=false
	// remove "" read-only=false destructive=true
}

// An argument type with its own schema, and a parameter description known only at
// run time.
func ExampleSchemer() {
	t := tools.New(mcs.Meta{ID: "example/search", Name: "Search", Version: "1.0.0"})
	maxRows := 50 // from the configuration
	tools.Add(t, "find", "Finds rows whose cell equals a value.", func(_ context.Context, in struct {
		Value flexible `json:"value" description:"The value to look for."`
		Limit *uint64  `json:"limit,omitempty"`
	}) (string, error) {
		return "looking for " + string(in.Value), nil
	}, tools.WithParameterDescription("limit", fmt.Sprintf("Most rows to return (at most %d).", maxRows)))

	list, _ := t.ListTools(context.Background())
	for _, p := range list[0].Parameters {
		fmt.Printf("%s %v: %s\n", p.Name, p.Schema["type"], p.Description)
	}
	res, _ := t.ExecuteTool(context.Background(), "find", map[string]any{"value": 42.0})
	fmt.Println(res)
	// Output:
	// value [string number]: The value to look for.
	// limit integer: Most rows to return (at most 50).
	// looking for 42
}

// flexible is a string that models may also write as a number.
type flexible string

func (flexible) JSONSchema() map[string]any {
	return map[string]any{"type": []string{"string", "number"}}
}

func (f *flexible) UnmarshalJSON(b []byte) error {
	*f = flexible(strings.Trim(string(b), `"`))
	return nil
}
