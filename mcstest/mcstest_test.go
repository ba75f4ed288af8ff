package mcstest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/mcstest"
)

// echoDriver is a small, correct tool driver.
type echoDriver struct{}

var _ mcs.ToolDriver = echoDriver{}

func (echoDriver) Meta() mcs.Meta {
	return mcs.Meta{ID: "mcstest/echo", Name: "Echo", Capabilities: []mcs.Capability{mcs.CapabilityOrchestratable}}
}
func (echoDriver) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "echo", Description: "Echoes text.", Parameters: []mcs.Parameter{{Name: "text", Required: true}}}}, nil
}
func (echoDriver) ExecuteTool(_ context.Context, name string, args map[string]any) (any, error) {
	if name != "echo" {
		return nil, fmt.Errorf("%w: %q", mcs.ErrUnknownTool, name)
	}
	s, ok := args["text"].(string)
	if !ok {
		return nil, &mcs.ArgumentsError{Tool: name, Problems: []string{"/text: want string"}}
	}
	return s, nil
}

var echoProbes = []mcstest.Probe{
	{Tool: "echo", Args: map[string]any{"text": "hi"}},
	{Tool: "echo", Args: map[string]any{"text": 1.0}, Invalid: true},
}

// Broken tool drivers, one rule each.
type (
	// dishonestDriver claims to stream without implementing SupportsStreaming.
	dishonestDriver struct{ echoDriver }
	// twiceDriver lists its tool twice.
	twiceDriver struct{ echoDriver }
	// vagueDriver reports an unknown tool with an error of its own.
	vagueDriver struct{ echoDriver }
	// loneLookupDriver says it has a tool it does not list.
	loneLookupDriver struct{ echoDriver }
	// stringlyDriver rejects bad arguments with a plain error.
	stringlyDriver struct{ echoDriver }
	// scribblingDriver writes into the arguments of a call.
	scribblingDriver struct{ echoDriver }
	// stubbornDriver ignores a canceled context and fails for its own reason.
	stubbornDriver struct{ echoDriver }
	// racyDriver lists a different tool every other call.
	racyDriver struct {
		echoDriver
		mu sync.Mutex
		n  int
	}
)

func (dishonestDriver) Meta() mcs.Meta {
	m := echoDriver{}.Meta()
	m.Capabilities = append(m.Capabilities, mcs.CapabilityStreaming)
	return m
}
func (twiceDriver) ListTools(ctx context.Context) ([]mcs.Tool, error) {
	tools, _ := echoDriver{}.ListTools(ctx)
	return append(tools, tools...), nil
}
func (vagueDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	if name != "echo" {
		return nil, errors.New("no such tool")
	}
	return echoDriver{}.ExecuteTool(ctx, name, args)
}
func (loneLookupDriver) HasTool(context.Context, string) (bool, error) { return true, nil }
func (stringlyDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	res, err := echoDriver{}.ExecuteTool(ctx, name, args)
	if _, ok := errors.AsType[*mcs.ArgumentsError](err); ok {
		return nil, errors.New("bad arguments")
	}
	return res, err
}
func (scribblingDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	res, err := echoDriver{}.ExecuteTool(ctx, name, args)
	args["seen"] = true
	return res, err
}
func (stubbornDriver) ListTools(ctx context.Context) ([]mcs.Tool, error) {
	if ctx.Err() != nil {
		return nil, errors.New("the backend is busy")
	}
	return echoDriver{}.ListTools(ctx)
}
func (d *racyDriver) ListTools(ctx context.Context) ([]mcs.Tool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.n++
	if d.n%2 == 0 {
		return []mcs.Tool{{Name: "other", Description: "Another tool."}}, nil
	}
	return echoDriver{}.ListTools(ctx)
}

// wantRule fails t unless err is an *mcstest.Error that names rule.
func wantRule(t *testing.T, name string, err error, rule string) {
	t.Helper()
	e, ok := errors.AsType[*mcstest.Error](err)
	if !ok {
		t.Errorf("%s: error %v, want an *mcstest.Error naming %s", name, err, rule)
		return
	}
	if !e.Broke(rule) || !strings.Contains(err.Error(), rule+": ") {
		t.Errorf("%s: the error does not name %s:\n%v", name, rule, err)
	}
}

func TestToolDriverRules(t *testing.T) {
	if err := mcstest.TestToolDriver(echoDriver{}, echoProbes...); err != nil {
		t.Fatalf("a correct driver: %v", err)
	}
	tests := []struct {
		name string
		td   mcs.ToolDriver
		rule string
	}{
		{"dishonest meta", dishonestDriver{}, mcstest.RuleMetaHonest},
		{"a tool listed twice", twiceDriver{}, mcstest.RuleListing},
		{"an unknown tool's own error", vagueDriver{}, mcstest.RuleUnknownTool},
		{"a lookup that disagrees", loneLookupDriver{}, mcstest.RuleLookupAgrees},
		{"a plain arguments error", stringlyDriver{}, mcstest.RuleArgumentsError},
		{"arguments written to", scribblingDriver{}, mcstest.RuleArgsUnchanged},
		{"a canceled context ignored", stubbornDriver{}, mcstest.RuleContext},
		{"a listing that changes", &racyDriver{}, mcstest.RuleListing},
	}
	for _, tt := range tests {
		wantRule(t, tt.name, mcstest.TestToolDriver(tt.td, echoProbes...), tt.rule)
	}
}

// wordFormat is a small, correct wire format: an output {"do": [names]} calls
// each named tool with no arguments; it does not stream.
type wordFormat struct{}

func (wordFormat) Format() string { return "words" }
func (wordFormat) Match(out mcs.Output) bool {
	_, ok := out.Message["do"].([]any)
	return ok
}
func (wordFormat) Extract(out mcs.Output) []mcs.ToolCall {
	var calls []mcs.ToolCall
	for _, n := range out.Message["do"].([]any) {
		calls = append(calls, mcs.ToolCall{Name: fmt.Sprint(n), Arguments: map[string]any{}})
	}
	return calls
}
func (wordFormat) History(out mcs.Output, calls []mcs.CallRecord) []mcs.Message {
	msgs := []mcs.Message{out.Message}
	for _, c := range calls {
		msgs = append(msgs, mcs.Message{"role": "tool", "name": c.Name, "content": mcs.ResultText(c.Result)})
	}
	return msgs
}

// Broken formats, one rule each.
type (
	// consumingFormat removes the calls from the output it extracts them from.
	consumingFormat struct{ wordFormat }
	// forgetfulFormat answers no call in its history.
	forgetfulFormat struct{ wordFormat }
	// markingFormat marks the records it answers.
	markingFormat struct{ wordFormat }
	// chunkyText is a streaming text format whose assembler trims every chunk,
	// so a text split at a space streams otherwise than the whole.
	chunkyText struct{ mcs.StreamingFormat }
	chunkyAsm  struct{ mcs.Assembler }
)

func (consumingFormat) Extract(out mcs.Output) []mcs.ToolCall {
	calls := wordFormat{}.Extract(out)
	out.Message["do"] = []any{}
	return calls
}
func (forgetfulFormat) History(out mcs.Output, _ []mcs.CallRecord) []mcs.Message { return nil }
func (markingFormat) History(out mcs.Output, calls []mcs.CallRecord) []mcs.Message {
	for i := range calls {
		calls[i].Result = "answered"
	}
	return wordFormat{}.History(out, calls)
}
func (f chunkyText) NewAssembler() mcs.Assembler { return chunkyAsm{f.StreamingFormat.NewAssembler()} }
func (a chunkyAsm) Add(chunk any) string         { return a.Assembler.Add(strings.TrimSpace(chunk.(string))) }

func TestWireFormatRules(t *testing.T) {
	sample := func() mcstest.Sample {
		return mcstest.Sample{Output: map[string]any{"do": []any{"a", "b"}}, Calls: []string{"a", "b"}}
	}
	if err := mcstest.TestWireFormat(wordFormat{}, sample()); err != nil {
		t.Fatalf("a correct format: %v", err)
	}
	text := mcstest.Sample{Output: `Sure. {"tool": "echo", "arguments": {"text": "hi"}} Done.`, Calls: []string{"echo"}}
	tests := []struct {
		name   string
		f      mcs.WireFormat
		sample mcstest.Sample
		rule   string
	}{
		{"a sample the format does not match", wordFormat{}, mcstest.Sample{Output: map[string]any{"say": "hi"}}, mcstest.RuleMatch},
		{"the wrong calls", wordFormat{}, mcstest.Sample{Output: map[string]any{"do": []any{"a"}}, Calls: []string{"b"}}, mcstest.RuleExtract},
		{"an output consumed", consumingFormat{}, sample(), mcstest.RuleOutputUnchanged},
		{"no history", forgetfulFormat{}, sample(), mcstest.RuleHistory},
		{"records modified", markingFormat{}, sample(), mcstest.RuleHistory},
		{"a stream that depends on its split", chunkyText{mcs.TextFormat(nil)}, text, mcstest.RuleStreamResplit},
	}
	for _, tt := range tests {
		wantRule(t, tt.name, mcstest.TestWireFormat(tt.f, tt.sample), tt.rule)
	}
}

// Broken prompt codecs, one rule each.
type (
	// eagerCodec names every forming call "echo" before its name has arrived.
	eagerCodec   struct{ mcs.PromptStrategy }
	eagerDecoder struct{ mcs.TextDecoder }
	// blindCodec reports nothing forming.
	blindCodec   struct{ mcs.PromptStrategy }
	blindDecoder struct{ mcs.TextDecoder }
	// prefixCodec decodes only what the first Scan saw.
	prefixCodec   struct{ mcs.PromptStrategy }
	prefixDecoder struct {
		mcs.TextDecoder
		first string
	}
	// mutePromptCodec writes an empty retry prompt.
	mutePromptCodec struct{ mcs.PromptStrategy }
)

func (c eagerCodec) NewDecoder() mcs.TextDecoder { return eagerDecoder{c.PromptStrategy.NewDecoder()} }
func (d eagerDecoder) Pending() (int, string, bool) {
	start, _, ok := d.TextDecoder.Pending()
	return start, "echo", ok
}
func (c blindCodec) NewDecoder() mcs.TextDecoder  { return blindDecoder{c.PromptStrategy.NewDecoder()} }
func (blindDecoder) Pending() (int, string, bool) { return 0, "", false }
func (c prefixCodec) NewDecoder() mcs.TextDecoder {
	return &prefixDecoder{TextDecoder: c.PromptStrategy.NewDecoder()}
}
func (d *prefixDecoder) Scan(text string) []mcs.ToolCall {
	if d.first == "" {
		d.first = text
	}
	return nil
}
func (d *prefixDecoder) Finish(text string) []mcs.ToolCall {
	if d.first != "" {
		text = d.first
	}
	return d.TextDecoder.Finish(text)
}
func (mutePromptCodec) RetryPrompt(string, string) string { return "" }

func TestPromptStrategyRules(t *testing.T) {
	texts := []string{`Let me look. {"tool": "get_weather", "arguments": {"city": "Paris"}} One moment.`, "No call here {at all}."}
	ps := mcs.DefaultPromptStrategy()
	if err := mcstest.TestPromptStrategy(ps, texts...); err != nil {
		t.Fatalf("the default codec: %v", err)
	}
	tests := []struct {
		name string
		ps   mcs.PromptStrategy
		rule string
	}{
		{"a name reported early", eagerCodec{ps}, mcstest.RulePendingName},
		{"nothing reported forming", blindCodec{ps}, mcstest.RulePendingCovers},
		{"calls that depend on the split", prefixCodec{ps}, mcstest.RuleDecoderResplit},
		{"an empty retry prompt", mutePromptCodec{ps}, mcstest.RulePrompt},
	}
	for _, tt := range tests {
		wantRule(t, tt.name, mcstest.TestPromptStrategy(tt.ps, texts...), tt.rule)
	}
}

func TestMiddlewareRules(t *testing.T) {
	pass := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		return next(ctx, name, args)
	})
	if err := mcstest.TestMiddleware(pass); err != nil {
		t.Fatalf("a pass-through middleware: %v", err)
	}
	tests := []struct {
		name string
		mw   mcs.ToolMiddlewareFunc
		rule string
	}{
		{"arguments written to", func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
			args["city"] = "Lyon"
			return next(ctx, name, args)
		}, mcstest.RuleArgsNotMutated},
		{"next called twice", func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
			next(ctx, name, args)
			return next(ctx, name, args)
		}, mcstest.RulePassesNext},
		{"the context replaced", func(_ context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
			return next(context.Background(), name, args)
		}, mcstest.RulePassesNext},
		{"an error swallowed", func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
			next(ctx, name, args)
			return nil, nil
		}, mcstest.RulePassesNext},
		{"no answer", func(context.Context, string, map[string]any, mcs.CallNext) (any, error) {
			return nil, nil
		}, mcstest.RuleAnswers},
		{"a panic", func(context.Context, string, map[string]any, mcs.CallNext) (any, error) {
			panic("middleware bug")
		}, mcstest.RuleNoPanic},
	}
	for _, tt := range tests {
		wantRule(t, tt.name, mcstest.TestMiddleware(tt.mw), tt.rule)
	}
}

// The checks are run from a test: a driver's author writes one line per kind.
func ExampleTestToolDriver() {
	err := mcstest.TestToolDriver(echoDriver{},
		mcstest.Probe{Tool: "echo", Args: map[string]any{"text": "hi"}},
		mcstest.Probe{Tool: "echo", Args: map[string]any{"text": 1.0}, Invalid: true})
	fmt.Println(err)
	err = mcstest.TestToolDriver(twiceDriver{})
	fmt.Println(err)
	// Output:
	// <nil>
	// mcstest: the ToolDriver broke 1 rule(s):
	// 	listing: tool "echo" is listed twice
}
