package mcs

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
)

// PromptStrategy is the prompt codec of a driver: one object writes the prompt and
// decodes the model's text calls, so the two can never disagree. The built-in codec
// (JSON calls, wording from TOML) comes from [DefaultPromptStrategy] and
// [LoadPromptStrategy]; implement the interface for another dialect (XML, a
// model-specific format). Implementations must be safe for concurrent use.
type PromptStrategy interface {
	// EncodeTools renders tools as the function description the model reads.
	EncodeTools(tools []Tool) (string, error)
	// SystemMessage returns the complete system prompt around a function description
	// produced by EncodeTools (or supplied by the user).
	SystemMessage(functionDescription string) string
	// NativeSystemMessage returns the behavioural system prompt for native tool
	// calling, without the tool specification.
	NativeSystemMessage() string
	// RetryPrompt returns the hint for the model after the call to toolName failed
	// with errText.
	RetryPrompt(toolName, errText string) string
	// ResultMessage returns the history entry that carries the result text of one
	// text-mode call back to the model; failed reports that text is an error. call
	// is the call as extracted, so that the entry can name it (its tool, its
	// arguments).
	ResultMessage(call ToolCall, text string, failed bool) Message
	// NewDecoder returns a decoder for one model output, possibly streamed.
	NewDecoder() TextDecoder
}

// TextDecoder finds calls in model text in one incremental pass. Each call passes the
// whole text so far; the text of an earlier call must be a prefix of the next one.
// The total cost of decoding a text must be linear in its length, however it is
// split, since streaming calls Scan after every chunk. A decoder serves one output
// and is not safe for concurrent use.
type TextDecoder interface {
	// Scan continues over text and returns the calls that completed since the last
	// call, in order, each with the byte offsets of its region (Start, End). A call
	// that names a tool but cannot run as written (not valid even after repair, two
	// tool names, arguments that are not an object) is returned in its place with
	// Err set, so that it fails in order with the others, whole and streamed alike.
	// Calls inside reasoning blocks are never returned.
	Scan(text string) []ToolCall
	// Finish scans the rest of text, which is now final, and returns the calls that
	// completed. A call inside a code fence that never closed completes here. Scan
	// and Finish are not called after Finish.
	Finish(text string) []ToolCall
	// Pending reports the earliest region that may still become a call: its start
	// offset and the tool name that every candidate in it shares, once that name
	// can no longer change; "" while it is unknown. ok is false when nothing is
	// forming. A stream holds display on "" and on owned names, so a decoder that
	// reports a name too early can let an owned call's text reach the user.
	Pending() (start int, name string, ok bool)
	// Malformed returns the calls, so far, that Scan and Finish did not return but
	// that named a tool: with the built-in codec the object that never closed (found
	// by Finish); a decoder may also report here calls that closed but cannot be
	// decoded. Each has Err set. Streaming holds display on the owned ones and
	// releases them as failed calls at the end; ProcessLLMResponse fails them too,
	// in the order of their offsets.
	Malformed() []ToolCall
}

//go:embed prompts/default.toml
var defaultPromptTOML []byte

// promptFile mirrors the TOML layout. Pointers distinguish "not set" from "empty"
// so that an overlay replaces only what it names.
type promptFile struct {
	SystemMessage *struct {
		Template       *string `toml:"template"`
		NativeTemplate *string `toml:"native_template"`
	} `toml:"system_message"`
	CallExample *struct {
		Example *string `toml:"example"`
	} `toml:"call_example"`
	Parsing *struct {
		ToolFieldAliases      []string `toml:"tool_field_aliases"`
		ArgumentsFieldAliases []string `toml:"arguments_field_aliases"`
	} `toml:"parsing"`
	RetryPrompts *struct {
		ExecutionFailed *string `toml:"execution_failed"`
	} `toml:"retry_prompts"`
	History *struct {
		ResultRole     *string `toml:"result_role"`
		ResultTemplate *string `toml:"result_template"`
		ErrorPrefix    *string `toml:"error_prefix"`
	} `toml:"history"`
	Healing []struct {
		Name        string `toml:"name"`
		Pattern     string `toml:"pattern"`
		Replacement string `toml:"replacement"`
	} `toml:"healing"`
	Reasoning []struct {
		Open  string `toml:"open"`
		Close string `toml:"close"`
	} `toml:"reasoning"`
}

// ReasoningTag is a pair of tags around a reasoning block in a model's text, such as
// <think> and </think>: what is written between them is the model thinking aloud,
// and a call in it never runs.
type ReasoningTag struct {
	Open, Close string
}

// HealingRule is one regular-expression repair applied to a call that does not
// parse as JSON.
type HealingRule struct {
	Name        string
	Pattern     *regexp.Regexp
	Replacement string
}

// JSONPromptStrategy is the built-in prompt codec: tools rendered as JSON, calls
// written as JSON objects in the reply, all wording from TOML. Build it with
// DefaultPromptStrategy, LoadPromptStrategy or ParsePromptStrategy; its fields must
// not change once it is in use. It is safe for concurrent use.
type JSONPromptStrategy struct {
	// Template is the system message; {tools} and {call_example} are filled in.
	Template string
	// NativeTemplate is the system message for native tool calling.
	NativeTemplate string
	// CallExample shows the model how to write a call.
	CallExample string
	// ToolFieldAliases are the fields that may carry the tool name, in priority
	// order: the first one present in an object is its tool-name field. An object
	// named by any alias but the first is a call only when it also has an
	// arguments field, or holds nothing but its name and stands in a code fence.
	ToolFieldAliases []string
	// ArgumentsFieldAliases are the fields that may carry the arguments, in
	// priority order.
	ArgumentsFieldAliases []string
	// ExecutionFailed is the retry prompt, with {tool_name} and {error}.
	ExecutionFailed string
	// ResultRole is the role of the history message that carries a result.
	ResultRole string
	// ResultTemplate frames a result as data the tool returned, with
	// {tool_name}, {call} and {content}; "" sends the content alone. See
	// [JSONPromptStrategy.ResultMessage].
	ResultTemplate string
	// ErrorPrefix starts the result message of a failed call.
	ErrorPrefix string
	// Healing are the regular-expression repairs, applied in order.
	Healing []HealingRule
	// ReasoningTags are the tags around reasoning blocks; a call between an opening
	// tag and its closing tag is never reported (a block that never closes runs to
	// the end of the text). The tags are matched exactly, in prose.
	ReasoningTags []ReasoningTag

	roleAny any          // ResultRole as an interface value, boxed once
	frame   atomic.Value // *resultFrame: ResultTemplate taken apart (see resultFrameOf)
}

var _ PromptStrategy = (*JSONPromptStrategy)(nil)

var (
	defaultPromptOnce sync.Once
	defaultPrompt     *JSONPromptStrategy
)

// DefaultPromptStrategy returns the codec of the bundled TOML. The value is shared and
// immutable.
func DefaultPromptStrategy() PromptStrategy {
	return defaultJSONPrompt()
}

func defaultJSONPrompt() *JSONPromptStrategy {
	defaultPromptOnce.Do(func() {
		s := &JSONPromptStrategy{}
		if err := s.overlay("bundled prompts/default.toml", defaultPromptTOML); err != nil {
			panic("mcs: bundled prompt is invalid: " + err.Error())
		}
		defaultPrompt = s
	})
	return defaultPrompt
}

// PromptError reports a problem in a prompt TOML file. File and Line locate it (Line
// is 0 when unknown); Rule names the healing rule, if any.
type PromptError struct {
	File string
	Line int
	Rule string
	Err  error
}

// Error returns "prompt file <file>[, line <n>][, healing rule <name>]: <problem>".
func (e *PromptError) Error() string {
	var b strings.Builder
	b.WriteString("prompt file ")
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ", line %d", e.Line)
	}
	if e.Rule != "" {
		fmt.Fprintf(&b, ", healing rule %q", e.Rule)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *PromptError) Unwrap() error { return e.Err }

// LoadPromptStrategy returns the bundled codec overlaid by the TOML file at path: keys
// the file sets replace the bundled ones, its [[healing]] rules and [[reasoning]]
// tags are appended. A file
// that cannot be read, is not valid TOML, has unknown keys or an invalid regular
// expression is a *PromptError naming the file, the line and the rule.
func LoadPromptStrategy(path string) (PromptStrategy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &PromptError{File: path, Err: fmt.Errorf("cannot read it: %w", err)}
	}
	ps, err := ParsePromptStrategy(path, data)
	if err != nil {
		// a nil interface, not an interface holding a nil *JSONPromptStrategy
		return nil, err
	}
	return ps, nil
}

// ParsePromptStrategy is LoadPromptStrategy for a document already in memory; name
// is used in errors.
func ParsePromptStrategy(name string, data []byte) (*JSONPromptStrategy, error) {
	base := defaultJSONPrompt()
	s := &JSONPromptStrategy{
		Template:              base.Template,
		NativeTemplate:        base.NativeTemplate,
		CallExample:           base.CallExample,
		ToolFieldAliases:      append([]string(nil), base.ToolFieldAliases...),
		ArgumentsFieldAliases: append([]string(nil), base.ArgumentsFieldAliases...),
		ExecutionFailed:       base.ExecutionFailed,
		ResultRole:            base.ResultRole,
		ResultTemplate:        base.ResultTemplate,
		ErrorPrefix:           base.ErrorPrefix,
		Healing:               append([]HealingRule(nil), base.Healing...),
		ReasoningTags:         append([]ReasoningTag(nil), base.ReasoningTags...),
	}
	if err := s.overlay(name, data); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *JSONPromptStrategy) overlay(name string, data []byte) error {
	var f promptFile
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		pe := &PromptError{File: name, Err: err}
		var de *toml.DecodeError
		var sm *toml.StrictMissingError
		switch {
		case errors.As(err, &sm) && len(sm.Errors) > 0:
			pe.Line, _ = sm.Errors[0].Position()
			pe.Err = fmt.Errorf("unknown key %q (check its spelling against the bundled prompts/default.toml)", strings.Join(sm.Errors[0].Key(), "."))
		case errors.As(err, &de):
			pe.Line, _ = de.Position()
			pe.Err = errors.New(de.Error())
		}
		return pe
	}
	if m := f.SystemMessage; m != nil {
		setString(&s.Template, m.Template)
		setString(&s.NativeTemplate, m.NativeTemplate)
	}
	if c := f.CallExample; c != nil {
		setString(&s.CallExample, c.Example)
	}
	if p := f.Parsing; p != nil {
		if p.ToolFieldAliases != nil {
			if len(p.ToolFieldAliases) == 0 {
				return &PromptError{File: name, Line: lineOf(data, "tool_field_aliases", 0), Err: errors.New("tool_field_aliases is empty; list at least one field, such as \"tool\"")}
			}
			s.ToolFieldAliases = p.ToolFieldAliases
		}
		if p.ArgumentsFieldAliases != nil {
			if len(p.ArgumentsFieldAliases) == 0 {
				return &PromptError{File: name, Line: lineOf(data, "arguments_field_aliases", 0), Err: errors.New("arguments_field_aliases is empty; list at least one field, such as \"arguments\"")}
			}
			s.ArgumentsFieldAliases = p.ArgumentsFieldAliases
		}
	}
	if r := f.RetryPrompts; r != nil {
		setString(&s.ExecutionFailed, r.ExecutionFailed)
	}
	if h := f.History; h != nil {
		setString(&s.ResultRole, h.ResultRole)
		setString(&s.ResultTemplate, h.ResultTemplate)
		setString(&s.ErrorPrefix, h.ErrorPrefix)
	}
	for i, h := range f.Healing {
		line := lineOf(data, "[[healing]]", i)
		if h.Pattern == "" {
			return &PromptError{File: name, Line: line, Rule: h.Name, Err: errors.New("pattern is empty")}
		}
		re, err := regexp.Compile(h.Pattern)
		if err != nil {
			return &PromptError{File: name, Line: line, Rule: h.Name, Err: fmt.Errorf("invalid regular expression: %w", err)}
		}
		ruleName := h.Name
		if ruleName == "" {
			ruleName = fmt.Sprintf("#%d", i+1)
		}
		s.Healing = append(s.Healing, HealingRule{Name: ruleName, Pattern: re, Replacement: h.Replacement})
	}
	s.roleAny = s.ResultRole
	for i, r := range f.Reasoning {
		if r.Open == "" || r.Close == "" {
			return &PromptError{File: name, Line: lineOf(data, "[[reasoning]]", i), Err: errors.New("a reasoning block needs both open and close, such as open = \"<think>\" and close = \"</think>\"")}
		}
		if !slices.Contains(s.ReasoningTags, ReasoningTag{r.Open, r.Close}) {
			s.ReasoningTags = append(s.ReasoningTags, ReasoningTag{Open: r.Open, Close: r.Close})
		}
	}
	return nil
}

func setString(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

// lineOf returns the 1-based line of the n-th (0-based) line that starts with needle,
// or 0.
func lineOf(data []byte, needle string, n int) int {
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), needle) {
			if n == 0 {
				return i + 1
			}
			n--
		}
	}
	return 0
}

// jsonTool is the rendering of one tool in the function description.
type jsonTool struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Parameters  jsonParams `json:"parameters"`
}

type jsonParams struct {
	Type       string                    `json:"type"`
	Properties map[string]map[string]any `json:"properties"`
	Required   []string                  `json:"required,omitempty"`
}

// ToolSchema returns the JSON Schema object of t's parameters:
// {"type":"object","properties":{...},"required":[...]}. A parameter without a schema
// is a string; a parameter description overrides the schema's; "required" is present
// only when non-empty. The parameter schemas are copied, never shared.
func ToolSchema(t Tool) map[string]any {
	p := toolParams(t)
	out := map[string]any{"type": "object", "properties": toAnyMap(p.Properties)}
	if len(p.Required) > 0 {
		out["required"] = p.Required
	}
	return out
}

func toAnyMap(m map[string]map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func toolParams(t Tool) jsonParams {
	p := jsonParams{Type: "object", Properties: make(map[string]map[string]any, len(t.Parameters))}
	for _, prm := range t.Parameters {
		var schema map[string]any
		if prm.Schema == nil {
			schema = map[string]any{"type": "string"}
		} else {
			schema = make(map[string]any, len(prm.Schema)+1)
			for k, v := range prm.Schema {
				schema[k] = v
			}
		}
		if prm.Description != "" {
			schema["description"] = prm.Description
		}
		p.Properties[prm.Name] = schema
		if prm.Required {
			p.Required = append(p.Required, prm.Name)
		}
	}
	return p
}

// EncodeTools renders tools as {"tools":[{name, description, parameters}]}, one
// tool per line. A tool whose parameter schema cannot be encoded as JSON is an error
// naming it.
func (s *JSONPromptStrategy) EncodeTools(tools []Tool) (string, error) {
	var b strings.Builder
	b.WriteString("{\"tools\": [")
	for i, t := range tools {
		line, err := json.Marshal(jsonTool{Name: t.Name, Description: t.Summary(), Parameters: toolParams(t)})
		if err != nil {
			return "", fmt.Errorf("encode tool %q: parameter schema is not valid JSON: %w", t.Name, err)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n  ")
		b.Write(line)
	}
	b.WriteString("\n]}")
	return b.String(), nil
}

// SystemMessage fills the template's {tools} with functionDescription and
// {call_example} with the call example.
func (s *JSONPromptStrategy) SystemMessage(functionDescription string) string {
	// {call_example} first, so that a tool description containing the placeholder
	// text is left alone.
	t := strings.ReplaceAll(s.Template, "{call_example}", s.CallExample)
	return strings.Replace(t, "{tools}", functionDescription, 1)
}

// NativeSystemMessage returns the native template.
func (s *JSONPromptStrategy) NativeSystemMessage() string { return s.NativeTemplate }

// RetryPrompt fills the execution_failed template. A leading "failed:" in errText is
// dropped, so the prompt never says it twice.
func (s *JSONPromptStrategy) RetryPrompt(toolName, errText string) string {
	errText = strings.TrimSpace(errText)
	for _, p := range []string{"failed:", "Failed:", "FAILED:", "error:", "Error:"} {
		if strings.HasPrefix(errText, p) && strings.Contains(s.ExecutionFailed, "failed: {error}") {
			errText = strings.TrimSpace(errText[len(p):])
			break
		}
	}
	return strings.NewReplacer("{tool_name}", toolName, "{error}", errText).Replace(s.ExecutionFailed)
}

// maxFramedArgs is how much of a call's arguments the frame of its result repeats.
const maxFramedArgs = 300

// ResultMessage returns {"role": result_role, "content": ...} for the result
// text of call (with the error prefix when failed), framed by result_template:
// {tool_name} is the tool's name, {call} the name and the arguments as JSON (cut
// at 300 bytes), {content} the text. The template's end marker (the first
// non-empty line after {content}) is escaped wherever the text holds something a
// model would read as it: in any letter case, with whitespace or invisible
// characters inside, with full-width look-alikes of its punctuation, and, for a
// tag such as </tool_result>, with attributes or without its closing bracket; so
// a result cannot close its own frame and write outside it. The tool name is
// escaped where the frame repeats it ({tool_name}, {call}): characters other than
// letters, digits and "_-.:/@+~" become references such as "&#x3c;", so that a
// name with markup, quotes or line breaks cannot end the frame's tag or header.
// An empty result_template gives the text alone, word for word.
func (s *JSONPromptStrategy) ResultMessage(call ToolCall, text string, failed bool) Message {
	if failed {
		text = s.ErrorPrefix + text
	}
	role := s.roleAny // boxed once, when the codec was built
	if r, ok := role.(string); !ok || r != s.ResultRole {
		role = s.ResultRole
	}
	if s.ResultTemplate == "" {
		return map[string]any{"role": role, "content": text}
	}
	// {call}: the name and the arguments as JSON, built in a buffer on the stack
	name := frameName(call.Name)
	var stack [384]byte
	callText := append(stack[:0], name...)
	if len(call.Arguments) > 0 {
		callText = append(callText, ' ')
		start := len(callText)
		callText = appendArguments(callText, call.Arguments)
		if len(callText)-start > maxFramedArgs {
			i := start + maxFramedArgs
			for i > start && !utf8.RuneStart(callText[i]) {
				i--
			}
			callText = append(callText[:i], "…"...)
		}
	}
	f := s.resultFrameOf()
	var b strings.Builder
	// every escape adds one byte: the slack covers a few without growing
	b.Grow(f.literal + f.names*len(name) + f.calls*len(callText) + len(text) + 8)
	writeFrame(&b, f.before, name, callText)
	if f.end != "" {
		end := f.endMatch
		if f.endParts != nil {
			var e strings.Builder
			writeFrame(&e, f.endParts, name, callText)
			end = newEndMatcher(e.String())
		}
		end.writeEscaped(&b, text)
	} else {
		b.WriteString(text)
	}
	writeFrame(&b, f.after, name, callText)
	return map[string]any{"role": role, "content": b.String()}
}

// resultFrame is a result template taken apart once: the parts before and after
// {content}, and the end marker whose occurrences in a result are escaped.
type resultFrame struct {
	src           string
	before, after []framePart
	end           string      // the end marker as written; "" for none
	endMatch      *endMatcher // the end marker's matcher when it has no placeholders
	endParts      []framePart // the end marker's parts when it has placeholders
	literal       int         // bytes of literal text in before and after
	names, calls  int         // how many {tool_name} and {call} they hold
}

// framePart is literal text, or a placeholder: {tool_name} or {call}.
type framePart struct {
	lit  string
	kind byte // 0 literal, 'n' {tool_name}, 'c' {call}
}

// resultFrameOf returns ResultTemplate taken apart: the frame of an earlier call
// when the template is the same, a new one otherwise (the first call, or a
// template changed since).
func (s *JSONPromptStrategy) resultFrameOf() *resultFrame {
	if f, _ := s.frame.Load().(*resultFrame); f != nil && f.src == s.ResultTemplate {
		return f
	}
	f := compileFrame(s.ResultTemplate)
	s.frame.Store(f)
	return f
}

func compileFrame(t string) *resultFrame {
	before, after, _ := strings.Cut(t, "{content}")
	f := &resultFrame{src: t}
	f.before = f.split(before, true)
	f.after = f.split(after, true)
	if end := endMarker(after); end != "" {
		f.end = end
		if strings.Contains(end, "{") {
			f.endParts = f.split(end, false)
		} else {
			f.endMatch = newEndMatcher(end)
		}
	}
	return f
}

// split takes t apart at {tool_name} and {call}; any other brace is literal text.
// count adds the parts to the frame's sizes.
func (f *resultFrame) split(t string, count bool) []framePart {
	var parts []framePart
	lit := func(s string) {
		if s == "" {
			return
		}
		if n := len(parts); n > 0 && parts[n-1].kind == 0 {
			parts[n-1].lit += s
		} else {
			parts = append(parts, framePart{lit: s})
		}
		if count {
			f.literal += len(s)
		}
	}
	for t != "" {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			lit(t)
			break
		}
		lit(t[:i])
		switch rest := t[i:]; {
		case strings.HasPrefix(rest, "{tool_name}"):
			parts = append(parts, framePart{kind: 'n'})
			if count {
				f.names++
			}
			t = rest[len("{tool_name}"):]
		case strings.HasPrefix(rest, "{call}"):
			parts = append(parts, framePart{kind: 'c'})
			if count {
				f.calls++
			}
			t = rest[len("{call}"):]
		default:
			lit("{")
			t = rest[1:]
		}
	}
	return parts
}

// writeFrame writes parts to b with {tool_name} and {call} filled in.
func writeFrame(b *strings.Builder, parts []framePart, toolName string, call []byte) {
	for _, p := range parts {
		switch p.kind {
		case 'n':
			b.WriteString(toolName)
		case 'c':
			b.Write(call)
		default:
			b.WriteString(p.lit)
		}
	}
}

// endMarker returns the first non-empty line of s, trimmed.
func endMarker(s string) string {
	for line := range strings.Lines(s) {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

// NewDecoder returns an incremental decoder of JSON calls.
func (s *JSONPromptStrategy) NewDecoder() TextDecoder {
	return &jsonDecoder{codec: s, nameRank: -1}
}
