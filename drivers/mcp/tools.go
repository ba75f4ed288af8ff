package mcp

import (
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/toolname"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits on what a server may list.
const (
	// maxPages is the most tools/list pages the driver reads.
	maxPages = 1000
	// maxName is the longest name a tool is listed under: the limit of
	// OpenAI's function names, which the other providers accept too.
	maxName = 64
	// schemaBudget is the most schema nodes one tool's parameters may expand to
	// once references are inlined.
	schemaBudget = 20000
)

// toolSet is one listing of the server.
type toolSet struct {
	gen    uint64 // the change count it was built at
	tools  []mcs.Tool
	byName map[string]int
	remote []string // the server's name of tools[i]
}

func (ts *toolSet) lookup(name string) (mcs.Tool, string, bool) {
	i, ok := ts.byName[name]
	if !ok {
		return mcs.Tool{}, "", false
	}
	return ts.tools[i], ts.remote[i], true
}

// buildToolSet maps the server's tools, in the server's order, under names a
// model can call and an orchestrator can namespace (see [listedName]); calls
// use the server's own names. A name that needs no change keeps it; a renamed
// tool whose new name is taken gets a hash of its own name appended. A repeated
// name keeps its first tool. Renames and dropped tools are logged.
func buildToolSet(list []*mcpsdk.Tool, gen uint64, server string, log *slog.Logger) *toolSet {
	ts := &toolSet{gen: gen, byName: make(map[string]int, len(list))}
	names := make([]string, len(list))
	taken := make(map[string]bool, len(list))
	for i, t := range list { // names that need no change first
		if t != nil && t.Name != "" && listedName(t.Name) == t.Name {
			names[i] = t.Name
			taken[t.Name] = true
		}
	}
	for i, t := range list {
		if t == nil || t.Name == "" || names[i] != "" {
			continue
		}
		name := listedName(t.Name)
		if taken[name] {
			name = hashedName(name, t.Name)
		}
		if taken[name] {
			log.Warn("mcp: tool left out: its name cannot be made unique", "server", server, "tool", oneLine(t.Name))
			continue
		}
		taken[name] = true
		names[i] = name
		log.Warn("mcp: tool renamed so that a model can call it and it cannot pass for another driver's tool", "server", server, "tool", oneLine(t.Name), "as", name)
	}
	for i, t := range list {
		if t == nil {
			continue
		}
		name := names[i]
		if t.Name == "" {
			log.Warn("mcp: tool without a name ignored", "server", server)
			continue
		}
		if name == "" {
			continue
		}
		if _, dup := ts.byName[name]; dup {
			log.Warn("mcp: tool listed twice; the first one is kept", "server", server, "tool", name)
			continue
		}
		mt, problems := mapTool(t, name)
		if len(problems) > 0 {
			log.Warn("mcp: tool schema cannot be represented exactly; parameters kept as given", "server", server, "tool", name, "problems", strings.Join(problems, "; "))
		}
		ts.byName[name] = len(ts.tools)
		ts.tools = append(ts.tools, mt)
		ts.remote = append(ts.remote, t.Name)
	}
	return ts
}

// listedName is the name a server's tool is listed under: characters outside
// A-Z a-z 0-9 _ - replaced by "_"; every run of "_" collapsed into one, so that
// the name never holds the separator "__" of namespaced names and a server
// cannot list a tool that reads as another driver's (files__read_file); and
// shortened to maxName bytes with a hash of the whole name (toolname.Shorten).
func listedName(name string) string {
	s := safeName(name)
	if strings.Contains(s, "__") {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == '_' && i > 0 && s[i-1] == '_' {
				continue
			}
			b.WriteByte(s[i])
		}
		s = b.String()
	}
	return toolname.Shorten(s, maxName)
}

// safeName rewrites name to ^[A-Za-z0-9_-]+$.
func safeName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, name)
}

// hashedName makes name unique for the server's tool original: name cut so
// that "_" and seven hex digits of the hash of original fit in maxName.
func hashedName(name, original string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(original))
	suffix := fmt.Sprintf("_%07x", h.Sum32()&0xfffffff)
	head := strings.TrimRight(name[:min(len(name), maxName-len(suffix))], "_-")
	return head + suffix
}

// mapTool turns an MCP tool into an mcs.Tool. problems lists what could not be
// represented; the tool is still usable.
func mapTool(t *mcpsdk.Tool, name string) (mcs.Tool, []string) {
	out := mcs.Tool{Name: name, Title: t.Title, Description: t.Description}
	if a := t.Annotations; a != nil {
		if out.Title == "" {
			out.Title = a.Title
		}
		out.Annotations = &mcs.ToolAnnotations{
			ReadOnly:    a.ReadOnlyHint,
			Destructive: a.DestructiveHint == nil || *a.DestructiveHint,
			Idempotent:  a.IdempotentHint,
			OpenWorld:   a.OpenWorldHint == nil || *a.OpenWorldHint,
		}
	}
	if name != t.Name {
		// The model and the person consenting see which tool of the server it is.
		if strings.TrimSpace(out.Title) == "" {
			out.Title = oneLine(t.Name)
		} else {
			out.Title += fmt.Sprintf(" (MCP tool %q)", oneLine(t.Name))
		}
	}
	if strings.TrimSpace(out.Title) == "" && strings.TrimSpace(out.Description) == "" {
		out.Title = t.Name
	}
	params, problems := mapParameters(t.InputSchema)
	out.Parameters = params
	return out, problems
}

// topLevelKeys are the keywords of an input schema that one Parameter per
// property represents.
var topLevelKeys = map[string]bool{
	"type": true, "properties": true, "required": true, "$defs": true, "definitions": true,
	"$schema": true, "$id": true, "$comment": true, "title": true, "description": true,
	"additionalProperties": true, "examples": true,
}

// mapParameters makes one Parameter per top-level property: required ones
// first, in the order of "required", then the others by name. Local references
// are inlined, cycles cut.
func mapParameters(schema any) ([]mcs.Parameter, []string) {
	if schema == nil {
		return nil, nil
	}
	root, ok := schema.(map[string]any)
	if !ok {
		return nil, []string{fmt.Sprintf("input schema is a %T, not an object", schema)}
	}
	var problems []string
	if typ, ok := root["type"]; ok && typ != "object" {
		problems = append(problems, fmt.Sprintf("input schema type is %v, not \"object\"", typ))
	}
	for k, v := range root {
		if topLevelKeys[k] {
			if k == "additionalProperties" && v != false && v != true {
				problems = append(problems, "top-level additionalProperties schema is not represented")
			}
			continue
		}
		problems = append(problems, fmt.Sprintf("top-level keyword %q is not represented", k))
	}
	sort.Strings(problems)
	props, _ := root["properties"].(map[string]any)
	if _, isMap := root["properties"].(map[string]any); root["properties"] != nil && !isMap {
		problems = append(problems, "properties is not an object")
	}
	var required []string
	reqSet := map[string]bool{}
	if list, ok := root["required"].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok && !reqSet[s] {
				reqSet[s] = true
				required = append(required, s)
			}
		}
	}
	var rest []string
	for k := range props {
		if !reqSet[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	in := &inliner{root: root, budget: schemaBudget}
	var params []mcs.Parameter
	for _, name := range append(slices.Clone(required), rest...) {
		if strings.TrimSpace(name) == "" {
			problems = append(problems, "a property without a name is left out")
			continue
		}
		raw, listed := props[name]
		p := mcs.Parameter{Name: name, Required: reqSet[name]}
		switch m := raw.(type) {
		case map[string]any:
			before := len(in.problems)
			s, _ := in.walk(m, nil).(map[string]any)
			if len(in.problems) > before {
				s = m // as given
			}
			p.Schema = s
		case bool:
			// true: anything; false: nothing; neither is a type.
			p.Schema = map[string]any{}
		default:
			if !listed {
				problems = append(problems, fmt.Sprintf("required property %q is not declared", name))
			} else {
				problems = append(problems, fmt.Sprintf("property %q has a %T schema", name, raw))
			}
			p.Schema = map[string]any{}
		}
		if d, ok := p.Schema["description"].(string); ok {
			p.Description = d
		}
		params = append(params, p)
	}
	return params, append(problems, in.problems...)
}

// inliner replaces local $ref with the schema they point to.
type inliner struct {
	root     map[string]any
	budget   int
	problems []string
}

func (in *inliner) problem(format string, args ...any) {
	if len(in.problems) < 10 {
		in.problems = append(in.problems, fmt.Sprintf(format, args...))
	}
}

// walk returns a copy of v with local references inlined; stack holds the
// references being expanded, so that a cycle is cut where it closes.
func (in *inliner) walk(v any, stack []string) any {
	if in.budget--; in.budget < 0 {
		if in.budget == -1 {
			in.problems = append(in.problems, fmt.Sprintf("schema expands to more than %d nodes", schemaBudget))
		}
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			return in.ref(x, ref, stack)
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "$defs" || k == "definitions" {
				continue // inlined where used
			}
			out[k] = in.walk(e, stack)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = in.walk(e, stack)
		}
		return out
	default:
		return v
	}
}

func (in *inliner) ref(x map[string]any, ref string, stack []string) any {
	if !strings.HasPrefix(ref, "#") {
		in.problem("reference %q is not local", ref)
		return x
	}
	if slices.Contains(stack, ref) {
		cut := map[string]any{"description": "(recursive: same schema as " + ref + ", not expanded again)"}
		if target, ok := pointer(in.root, ref); ok {
			if m, ok := target.(map[string]any); ok {
				if typ, ok := m["type"].(string); ok {
					cut["type"] = typ
				}
			}
		}
		return cut
	}
	target, ok := pointer(in.root, ref)
	if !ok {
		in.problem("reference %q does not resolve", ref)
		return x
	}
	resolved := in.walk(target, append(stack, ref))
	if len(x) == 1 {
		return resolved
	}
	m, ok := resolved.(map[string]any)
	if !ok { // a boolean schema
		m = map[string]any{}
	}
	out := make(map[string]any, len(m)+len(x))
	for k, e := range m {
		out[k] = e
	}
	for k, e := range x {
		if k != "$ref" && k != "$defs" && k != "definitions" {
			out[k] = in.walk(e, stack)
		}
	}
	return out
}

// pointer resolves a JSON pointer in URI fragment form ("#/$defs/a") in root.
func pointer(root map[string]any, ref string) (any, bool) {
	frag, err := url.PathUnescape(strings.TrimPrefix(ref, "#"))
	if err != nil {
		return nil, false
	}
	if frag == "" {
		return root, true
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, false // an anchor; not supported
	}
	var cur any = root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
