package mcp

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/mcs-go/mcs"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits on the prompts of a server.
const (
	// MaxPromptArguments is the most arguments one prompt may declare, and a
	// call of prompts__get or GetPrompt may pass.
	MaxPromptArguments = 100
	// maxDescription is the most bytes of prompt listing the description of
	// prompts__get holds.
	maxDescription = 16 << 10
)

// ListPrompts returns every prompt the server lists (prompts/list, all pages),
// in the server's order. More than Config.MaxResources prompts, a prompt that
// declares more than [MaxPromptArguments] arguments, more than 1,000 pages or
// a repeated page cursor is an error wrapping [ErrServerLimit]; a server that
// declares no prompts gives none. Safe for concurrent use.
func (d *ToolDriver) ListPrompts(ctx context.Context) ([]*mcpsdk.Prompt, error) {
	var out []*mcpsdk.Prompt
	err := d.request(ctx, "list prompts", func(ctx context.Context, s *session) error {
		var err error
		out, err = d.listPrompts(ctx, s)
		return err
	})
	return out, err
}

// listPrompts reads the prompts listing on s.
func (d *ToolDriver) listPrompts(ctx context.Context, s *session) ([]*mcpsdk.Prompt, error) {
	if serverCaps(s).Prompts == nil {
		return nil, nil
	}
	return pages(ctx, "prompts", d.cfg.MaxResources, "MaxResources", func(ctx context.Context, cursor string) ([]*mcpsdk.Prompt, string, error) {
		res, err := s.cs.ListPrompts(ctx, &mcpsdk.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		for _, p := range res.Prompts {
			if p != nil && len(p.Arguments) > MaxPromptArguments {
				return nil, "", &refused{fmt.Errorf("%w: the prompt %q declares %d arguments, more than %d", ErrServerLimit, oneLine(p.Name), len(p.Arguments), MaxPromptArguments)}
			}
		}
		return res.Prompts, res.NextCursor, nil
	})
}

// GetPrompt gets the prompt name with args (prompts/get) and returns the
// server's result: its description and messages. More than
// [MaxPromptArguments] arguments is an error before anything is sent; a prompt
// the server does not know, or arguments it rejects, an error wrapping
// [ErrRefused]; an answer whose messages hold more than Config.MaxMessageBytes
// bytes of text and data an error wrapping [ErrServerLimit]. Safe for
// concurrent use.
func (d *ToolDriver) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcpsdk.GetPromptResult, error) {
	what := fmt.Sprintf("get prompt %q", oneLine(name))
	if len(args) > MaxPromptArguments {
		return nil, fmt.Errorf("%s: %d arguments, more than %d", what, len(args), MaxPromptArguments)
	}
	var out *mcpsdk.GetPromptResult
	err := d.request(ctx, what, func(ctx context.Context, s *session) error {
		res, err := s.cs.GetPrompt(ctx, &mcpsdk.GetPromptParams{Name: name, Arguments: args})
		if err != nil {
			return err
		}
		size := 0
		for _, m := range res.Messages {
			if m != nil {
				size += contentSize(m.Content)
			}
		}
		if size > d.cfg.MaxMessageBytes {
			return &refused{fmt.Errorf("%w: the messages hold %d bytes, more than %d (Config.MaxMessageBytes)", ErrServerLimit, size, d.cfg.MaxMessageBytes)}
		}
		out = res
		return nil
	})
	return out, err
}

// contentSize counts the bytes of text and data of one content.
func contentSize(c mcpsdk.Content) int {
	switch x := c.(type) {
	case *mcpsdk.TextContent:
		return len(x.Text)
	case *mcpsdk.ImageContent:
		return len(x.Data)
	case *mcpsdk.AudioContent:
		return len(x.Data)
	case *mcpsdk.EmbeddedResource:
		if x.Resource != nil {
			return len(x.Resource.Text) + len(x.Resource.Blob)
		}
	}
	return 0
}

// promptText is the result of prompts__get: the prompt's messages as text,
// each under its role, cut at MaxResultBytes.
func (d *ToolDriver) promptText(ctx context.Context, args map[string]any) (any, error) {
	name, err := stringArg(toolPromptsGet, args, "name", true)
	if err != nil {
		return nil, err
	}
	var pargs map[string]string
	switch a := args["arguments"].(type) {
	case nil:
	case map[string]any:
		if len(a) > MaxPromptArguments {
			return nil, fmt.Errorf("%s: %d arguments, more than %d", toolPromptsGet, len(a), MaxPromptArguments)
		}
		pargs = make(map[string]string, len(a))
		for k, v := range a {
			switch x := v.(type) {
			case string:
				pargs[k] = x
			case nil:
			default:
				pargs[k] = fmt.Sprint(x)
			}
		}
	default:
		return nil, fmt.Errorf("%s: the argument \"arguments\" is a %T; pass an object of strings, such as {\"topic\": \"tides\"}", toolPromptsGet, args["arguments"])
	}
	res, err := d.GetPrompt(ctx, name, pargs)
	if err != nil {
		return nil, err
	}
	return cut(promptMessagesText(res)), nil
}

// promptMessagesText renders a prompt: its description, then every message as
// "[role]" and its content (text as is, embedded text resources with their
// text, everything else summarised in one line).
func promptMessagesText(res *mcpsdk.GetPromptResult) string {
	var b strings.Builder
	if res.Description != "" {
		b.WriteString(res.Description + "\n\n")
	}
	for i, m := range res.Messages {
		if m == nil {
			continue
		}
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("[" + oneLine(string(m.Role)) + "]\n")
		switch c := m.Content.(type) {
		case *mcpsdk.TextContent:
			b.WriteString(c.Text)
		case *mcpsdk.EmbeddedResource:
			if c.Resource != nil && c.Resource.Blob == nil {
				fmt.Fprintf(&b, "[resource %s, %s]\n%s", oneLine(c.Resource.URI), orUnknown(c.Resource.MIMEType), c.Resource.Text)
			} else {
				b.WriteString(summarize(c))
			}
		default:
			b.WriteString(summarize(c))
		}
	}
	return b.String()
}

// promptsGetTool is prompts__get, with the server's prompts and their
// arguments in its description.
func promptsGetTool(server string, prompts []*mcpsdk.Prompt) mcs.Tool {
	var b strings.Builder
	b.WriteString("Gets a prompt (a message template) of the MCP server " + server + " by name, filled in with its arguments, and returns its messages as text. The prompts:\n")
	shown := 0
	for _, p := range prompts {
		if p == nil || p.Name == "" {
			continue
		}
		line := "- " + oneLine(p.Name)
		if p.Description != "" {
			line += ": " + oneLine(p.Description)
		}
		var as []string
		for _, a := range p.Arguments {
			if a == nil {
				continue
			}
			s := oneLine(a.Name)
			if a.Required {
				s += " (required)"
			}
			as = append(as, s)
		}
		sort.Strings(as)
		if len(as) > 0 {
			line += "; arguments: " + strings.Join(as, ", ")
		}
		if b.Len()+len(line) > maxDescription || shown == maxListedLines {
			fmt.Fprintf(&b, "[... %d more prompts not shown]\n", len(prompts)-shown)
			break
		}
		b.WriteString(line + "\n")
		shown++
	}
	return mcs.Tool{
		Name:        toolPromptsGet,
		Title:       "Get a prompt of the MCP server",
		Description: strings.TrimSuffix(b.String(), "\n"),
		Parameters: []mcs.Parameter{
			{Name: "name", Required: true, Description: "the prompt's name", Schema: map[string]any{"type": "string", "description": "the prompt's name"}},
			{Name: "arguments", Description: "the prompt's arguments by name", Schema: map[string]any{
				"type": "object", "description": "the prompt's arguments by name", "additionalProperties": map[string]any{"type": "string"},
			}},
		},
		Annotations: &mcs.ToolAnnotations{ReadOnly: true, Idempotent: true, OpenWorld: true},
	}
}

// ListPrompts lists the server's prompts; see [ToolDriver.ListPrompts].
func (d *Driver) ListPrompts(ctx context.Context) ([]*mcpsdk.Prompt, error) {
	return d.td.ListPrompts(ctx)
}

// GetPrompt gets one prompt; see [ToolDriver.GetPrompt].
func (d *Driver) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcpsdk.GetPromptResult, error) {
	return d.td.GetPrompt(ctx, name, args)
}
