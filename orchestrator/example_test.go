package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/orchestrator"
)

// memoryAPI is a REST-like tool driver over in-memory collections: for each
// collection it publishes list_<collection> and get_<collection>.
type memoryAPI struct {
	name string
	data map[string][]map[string]any
}

func (m *memoryAPI) Meta() mcs.Meta {
	return mcs.Meta{ID: "example/" + strings.ToLower(m.name), Name: m.name}
}

func (m *memoryAPI) ListTools(context.Context) ([]mcs.Tool, error) {
	var tools []mcs.Tool
	for _, c := range slices.Sorted(maps.Keys(m.data)) {
		tools = append(tools,
			mcs.Tool{Name: "list_" + c, Description: "Lists all " + c + "."},
			mcs.Tool{Name: "get_" + c, Description: "Returns one of the " + c + " by id.",
				Parameters: []mcs.Parameter{{Name: "id", Required: true}}},
		)
	}
	return tools, nil
}

func (m *memoryAPI) ExecuteTool(_ context.Context, name string, args map[string]any) (any, error) {
	if c, ok := strings.CutPrefix(name, "list_"); ok && m.data[c] != nil {
		return m.data[c], nil
	}
	if c, ok := strings.CutPrefix(name, "get_"); ok && m.data[c] != nil {
		for _, rec := range m.data[c] {
			if rec["id"] == args["id"] {
				return rec, nil
			}
		}
		return nil, fmt.Errorf("no %s with id %v", c, args["id"])
	}
	return nil, fmt.Errorf("no tool %q", name)
}

func crmAPI() *memoryAPI {
	return &memoryAPI{name: "CRM", data: map[string][]map[string]any{
		"contacts": {{"id": "1", "name": "Ada"}, {"id": "2", "name": "Grace"}},
	}}
}

func billingAPI() *memoryAPI {
	return &memoryAPI{name: "Billing", data: map[string][]map[string]any{
		"invoices": {{"id": "7", "contact": "2", "total": 120}},
	}}
}

// Two REST-like drivers behind one orchestrator: with more than one driver, every
// tool is namespaced by its label, and the model's calls are routed by that label.
func ExampleNew() {
	ctx := context.Background()
	o := orchestrator.New(nil) // Pipeline(Namespacing())
	if err := o.AddDriver("crm", crmAPI()); err != nil {
		fmt.Println(err)
	}
	if err := o.AddDriver("billing", billingAPI()); err != nil {
		fmt.Println(err)
	}
	tools, _ := o.ListTools(ctx)
	for _, t := range tools {
		fmt.Printf("%s: %s\n", t.Name, t.Description)
	}

	reply := `I will look that up.
{"tool": "crm__get_contacts", "arguments": {"id": "2"}}`
	resp := o.ProcessLLMResponse(ctx, reply)
	fmt.Println(resp.CallExecuted, mcs.ResultText(resp.Calls[0].Result))

	// A name the orchestrator does not list is left to other drivers.
	resp = o.ProcessLLMResponse(ctx, `{"tool": "get_contacts", "arguments": {"id": "2"}}`)
	fmt.Println(resp.CallExecuted, resp.Calls == nil)
	// Output:
	// crm__list_contacts: [crm] Lists all contacts.
	// crm__get_contacts: [crm] Returns one of the contacts by id.
	// billing__list_invoices: [billing] Lists all invoices.
	// billing__get_invoices: [billing] Returns one of the invoices by id.
	// true {"id":"2","name":"Grace"}
	// false true
}

// An orchestrator is a tool driver, so it can be registered inside another one. The
// prefixes stack, and each level runs its own middleware with its own names.
func ExampleNew_nested() {
	ctx := context.Background()
	logAt := func(level string) mcs.ToolMiddleware {
		return mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
			fmt.Printf("%s sees %s\n", level, name)
			return next(ctx, name, args)
		})
	}
	backOffice := orchestrator.New(nil, mcs.WithMiddleware(logAt("back office")))
	_ = backOffice.AddDriver("crm", crmAPI())
	_ = backOffice.AddDriver("billing", billingAPI())

	assistant := orchestrator.New(nil, mcs.WithMiddleware(logAt("assistant")))
	_ = assistant.AddDriver("office", backOffice)
	_ = assistant.AddDriver("calendar", &memoryAPI{name: "Calendar", data: map[string][]map[string]any{
		"events": {{"id": "e1", "title": "Standup"}},
	}})

	tools, _ := assistant.ListTools(ctx)
	for _, t := range tools {
		fmt.Printf("%s: %s\n", t.Name, t.Description)
	}
	resp := assistant.ProcessLLMResponse(ctx, `{"tool": "office__billing__get_invoices", "arguments": {"id": "7"}}`)
	fmt.Println(mcs.ResultText(resp.Calls[0].Result))

	// Adding a driver deep down shows at the top at once.
	_ = backOffice.AddDriver("hr", &memoryAPI{name: "HR", data: map[string][]map[string]any{"people": {}}})
	tools, _ = assistant.ListTools(ctx)
	fmt.Println(len(tools), tools[4].Name)
	fmt.Println(assistant.Meta().ID, assistant.Meta().HasCapability(mcs.CapabilityHealthcheck))
	// Output:
	// office__crm__list_contacts: [office] [crm] Lists all contacts.
	// office__crm__get_contacts: [office] [crm] Returns one of the contacts by id.
	// office__billing__list_invoices: [office] [billing] Lists all invoices.
	// office__billing__get_invoices: [office] [billing] Returns one of the invoices by id.
	// calendar__list_events: [calendar] Lists all events.
	// calendar__get_events: [calendar] Returns one of the events by id.
	// assistant sees office__billing__get_invoices
	// back office sees billing__get_invoices
	// {"contact":"2","id":"7","total":120}
	// 8 office__hr__list_people
	// mcs-go/orchestrator true
}

// Pagination shows a long tool list one page at a time; the model turns the page
// with a tool, and the system message says where it is.
func ExamplePagination() {
	ctx := context.Background()
	pages := orchestrator.Pagination(2)
	o := orchestrator.New(orchestrator.Pipeline(orchestrator.Namespacing(), pages))
	_ = o.AddDriver("crm", crmAPI())
	_ = o.AddDriver("billing", billingAPI())

	tools, _ := o.ListTools(ctx)
	fmt.Println(names(tools))
	msg, _ := o.SystemMessage(ctx, "")
	fmt.Println(msg[strings.LastIndex(msg, "\n")+1:])

	resp := o.ProcessLLMResponse(ctx, `{"tool": "tools__next_page", "arguments": {}}`)
	fmt.Println(resp.Calls[0].Result.(map[string]any)["message"])
	tools, _ = o.ListTools(ctx)
	fmt.Println(names(tools))
	// Output:
	// [crm__list_contacts crm__get_contacts tools__next_page]
	// You see tools 1–2 of 4 (page 1/2). Call tools__next_page to see the other tools; only the tools on the current page can be called.
	// You see tools 3–4 of 4 (page 2/2).
	// [billing__list_invoices billing__get_invoices tools__prev_page]
}

// ToolSwitching exposes one driver at a time; the operator picks it.
func ExampleToolSwitching() {
	ctx := context.Background()
	sw := orchestrator.ToolSwitching()
	o := orchestrator.New(orchestrator.Pipeline(sw))
	_ = o.AddDriver("crm", crmAPI())
	_ = o.AddDriver("billing", billingAPI())

	tools, _ := o.ListTools(ctx)
	fmt.Println(names(tools))
	_ = sw.SetActive("billing")
	tools, _ = o.ListTools(ctx)
	fmt.Println(names(tools))
	// Output:
	// []
	// [list_invoices get_invoices]
}

// DetailLoading keeps descriptions short and lets the model fetch the full text.
func ExampleDetailLoading() {
	ctx := context.Background()
	o := orchestrator.New(orchestrator.Pipeline(orchestrator.DetailLoading(16)))
	_ = o.AddDriver("crm", crmAPI())

	tools, _ := o.ListTools(ctx)
	for _, t := range tools {
		fmt.Printf("%s: %s\n", t.Name, t.Description)
	}
	resp := o.ProcessLLMResponse(ctx, `{"tool": "get_tool_details", "arguments": {"name": "get_contacts"}}`)
	fmt.Println(resp.Calls[0].Result.(map[string]any)["description"])
	// Output:
	// list_contacts: Lists all con...
	// get_contacts: Returns one o...
	// get_tool_details: Returns the full description and the parameters of a tool.
	// Returns one of the contacts by id.
}

// RejectConflicts makes AddDriver fail when two tools would share a name.
func ExampleRejectConflicts() {
	o := orchestrator.New(orchestrator.Pipeline(orchestrator.RejectConflicts()))
	_ = o.AddDriver("crm", crmAPI())
	err := o.AddDriver("crm-backup", crmAPI())
	var ce *orchestrator.ConflictError
	fmt.Println(errors.As(err, &ce), ce.Name, ce.Labels, o.Labels())
	// Output:
	// true list_contacts [crm crm-backup] [crm]
}

// With AlwaysNamespacing a tool keeps its label__tool name while drivers come
// and go, so a reply written before a second driver arrived still runs.
func ExampleAlwaysNamespacing() {
	ctx := context.Background()
	o := orchestrator.New(orchestrator.Pipeline(orchestrator.AlwaysNamespacing()))
	if err := o.AddDriver("crm", crmAPI()); err != nil {
		fmt.Println(err)
	}
	tools, _ := o.ListTools(ctx)
	fmt.Println(tools[1].Name)
	reply := `{"tool": "crm__get_contacts", "arguments": {"id": "2"}}`
	if err := o.AddDriver("billing", billingAPI()); err != nil {
		fmt.Println(err)
	}
	resp := o.ProcessLLMResponse(ctx, reply)
	fmt.Println(resp.CallExecuted, mcs.ResultText(resp.Calls[0].Result))
	// Output:
	// crm__get_contacts
	// true {"id":"2","name":"Grace"}
}

// ToolSearch lists one search tool instead of every tool; what a search finds is
// callable from the next round on.
func ExampleToolSearch() {
	ctx := context.Background()
	o := orchestrator.New(orchestrator.Pipeline(orchestrator.Namespacing(), orchestrator.ToolSearch(2)))
	_ = o.AddDriver("crm", crmAPI())
	_ = o.AddDriver("billing", billingAPI())
	tools, _ := o.ListTools(ctx)
	fmt.Println(names(tools))

	resp := o.ProcessLLMResponse(ctx, `{"tool": "tools__search", "arguments": {"query": "get an invoice"}}`)
	for _, t := range resp.Calls[0].Result.(*orchestrator.SearchResult).Tools {
		fmt.Printf("found %s: %s\n", t.Name, t.Description)
	}
	tools, _ = o.ListTools(ctx)
	fmt.Println(names(tools))

	resp = o.ProcessLLMResponse(ctx, `{"tool": "billing__get_invoices", "arguments": {"id": "7"}}`)
	fmt.Println(mcs.ResultText(resp.Calls[0].Result))
	// Output:
	// [tools__search]
	// found billing__get_invoices: [billing] Returns one of the invoices by id.
	// found billing__list_invoices: [billing] Lists all invoices.
	// [tools__search billing__get_invoices billing__list_invoices]
	// {"contact":"2","id":"7","total":120}
}
