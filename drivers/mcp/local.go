package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcs-go/mcs"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools the driver adds beside the server's own when the operator turns
// them on. Their names hold the separator "__", which no tool of the server is
// listed with (see listedName), so a server cannot list a tool that passes for
// one of them.
const (
	toolResourcesList = "resources__list"
	toolResourcesRead = "resources__read"
	toolPromptsGet    = "prompts__get"
)

// addLocal appends the driver's own tools to ts: resources__list and
// resources__read when Config.Resources is set and the server declares
// resources, prompts__get when Config.Prompts is set and the server declares
// prompts. Their remote name is "", which no tool of the server has.
func (d *ToolDriver) addLocal(ctx context.Context, s *session, ts *toolSet) {
	caps := serverCaps(s)
	add := func(t mcs.Tool) {
		if _, taken := ts.byName[t.Name]; taken {
			return
		}
		ts.byName[t.Name] = len(ts.tools)
		ts.tools = append(ts.tools, t)
		ts.remote = append(ts.remote, "")
	}
	if d.cfg.Resources && caps.Resources != nil {
		add(resourcesListTool(d.server))
		add(resourcesReadTool(d.server))
	}
	if d.cfg.Prompts && caps.Prompts != nil && !d.promptsOff.Load() {
		prompts, err := d.listPrompts(ctx, s)
		if err != nil {
			if errors.Is(err, ErrServerLimit) || errors.Is(s.g.fault(), ErrServerLimit) {
				// Listing again would break the limit again, and over HTTP or
				// stdio end the session each time.
				d.promptsOff.Store(true)
				if f := s.g.fault(); f != nil {
					s.markBroken(f)
				}
			}
			d.log.Warn("mcp: prompts__get left out: the server's prompts cannot be listed", "server", d.server, "error", err)
			return
		}
		if len(prompts) > 0 {
			add(promptsGetTool(d.server, prompts))
		}
	}
}

// serverCaps returns what the server declared in the handshake; never nil.
func serverCaps(s *session) *mcpsdk.ServerCapabilities {
	if s == nil || s.cs == nil {
		return &mcpsdk.ServerCapabilities{}
	}
	if r := s.cs.InitializeResult(); r != nil && r.Capabilities != nil {
		return r.Capabilities
	}
	return &mcpsdk.ServerCapabilities{}
}

// executeLocal runs one of the driver's own tools.
func (d *ToolDriver) executeLocal(ctx context.Context, name string, args map[string]any) (any, error) {
	switch name {
	case toolResourcesList:
		return d.resourcesListText(ctx)
	case toolResourcesRead:
		uri, err := stringArg(name, args, "uri", true)
		if err != nil {
			return nil, err
		}
		return d.resourceText(ctx, uri)
	case toolPromptsGet:
		return d.promptText(ctx, args)
	}
	return nil, fmt.Errorf("%w: %q is not a tool of MCP server %s", mcs.ErrUnknownTool, name, d.server)
}

// stringArg reads the string argument key of a call of tool.
func stringArg(tool string, args map[string]any, key string, required bool) (string, error) {
	v, ok := args[key]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("%s: the argument %q is missing; pass it as a string", tool, key)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: the argument %q is a %T; pass it as a string", tool, key, v)
	}
	return s, nil
}

// refused marks an answer the driver read and refused (a broken limit, a
// repeated cursor): the session stays usable.
type refused struct{ err error }

func (r *refused) Error() string { return r.err.Error() }
func (r *refused) Unwrap() error { return r.err }

// request runs fn on the current session, bounded by CallTimeout and the
// driver's life. When fn finds that the session had ended before its request
// was sent, it connects again, once, and runs fn again: the requests of fn
// must only read. what names the request in errors ("list resources").
func (d *ToolDriver) request(ctx context.Context, what string, fn func(ctx context.Context, s *session) error) error {
	ctx, cancel := d.scoped(ctx, d.cfg.CallTimeout)
	defer cancel()
	s, reconnected, err := d.current(ctx)
	if err != nil {
		return fmt.Errorf("%s of MCP server %s: %w", what, d.server, err)
	}
	err = fn(ctx, s)
	if err != nil && errors.Is(err, mcpsdk.ErrConnectionClosed) && !reconnected && ctx.Err() == nil && s.g.fault() == nil {
		s.markBroken(err)
		if s, err = d.reconnect(ctx, s); err != nil {
			return fmt.Errorf("%s of MCP server %s: %w", what, d.server, err)
		}
		err = fn(ctx, s)
	}
	if err != nil {
		return d.requestError(ctx, s, what, err)
	}
	return nil
}

// requestError describes a failed request other than tools/call.
func (d *ToolDriver) requestError(ctx context.Context, s *session, what string, err error) error {
	var rf *refused
	if errors.As(err, &rf) {
		return fmt.Errorf("%s of MCP server %s: %w", what, d.server, rf.err)
	}
	if f := s.g.fault(); f != nil {
		s.markBroken(f)
		return fmt.Errorf("%s of MCP server %s: %w", what, d.server, f)
	}
	if ctx.Err() != nil {
		if d.life.Err() != nil {
			return fmt.Errorf("%s of MCP server %s: %w", what, d.server, ErrClosed)
		}
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return fmt.Errorf("%s of MCP server %s: no answer in time: %w", what, d.server, context.Cause(ctx))
		}
		return fmt.Errorf("%s of MCP server %s: %w", what, d.server, context.Cause(ctx))
	}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return fmt.Errorf("MCP server %s refused to %s: %s (code %d): %w", d.server, what, oneLine(rpc.Message), rpc.Code, ErrRefused)
	}
	s.markBroken(err)
	s.waitExit(exitGrace)
	return fmt.Errorf("%s of MCP server %s: %w", what, d.server, s.deadErr())
}

// ErrRefused is wrapped by the error of a request (other than a tool call)
// the server answered with a JSON-RPC error, such as a read of a resource it
// does not have.
var ErrRefused = errors.New("request refused by the server")

// pages reads every page of a listing: page fetches the page at cursor and
// returns its items and the next cursor. More than max items, more than
// maxPages pages or a repeated cursor end it with an error naming what.
func pages[T any](ctx context.Context, what string, max int, limitName string, page func(ctx context.Context, cursor string) ([]T, string, error)) ([]T, error) {
	var all []T
	seen := map[string]bool{}
	cursor := ""
	for n := 0; ; n++ {
		if n == maxPages {
			return nil, &refused{fmt.Errorf("%w: the server returned more than %d pages of %s", ErrServerLimit, maxPages, what)}
		}
		items, next, err := page(ctx, cursor)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if len(all) > max {
			return nil, &refused{fmt.Errorf("%w: the server lists more than %d %s over %d pages (Config.%s); raise the limit only for a server trusted to list that many", ErrServerLimit, max, what, n+1, limitName)}
		}
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, &refused{fmt.Errorf("%w: the server repeated the page cursor %q of its %s, a listing without end", ErrServerLimit, oneLine(next), what)}
		}
		seen[next] = true
		cursor = next
	}
}
