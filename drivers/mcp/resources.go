package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcs-go/mcs"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxResources bounds the resources, the resource templates and the
// prompts of one listing, each over all its pages.
const DefaultMaxResources = 10000

// ListResources returns every resource the server lists (resources/list, all
// pages), in the server's order. More than Config.MaxResources resources, more
// than 1,000 pages or a repeated page cursor is an error wrapping
// [ErrServerLimit]; a server that declares no resources gives none. It
// connects again, once, when the session had ended. Safe for concurrent use.
func (d *ToolDriver) ListResources(ctx context.Context) ([]*mcpsdk.Resource, error) {
	var out []*mcpsdk.Resource
	err := d.request(ctx, "list resources", func(ctx context.Context, s *session) error {
		if serverCaps(s).Resources == nil {
			out = nil
			return nil
		}
		var err error
		out, err = pages(ctx, "resources", d.cfg.MaxResources, "MaxResources", func(ctx context.Context, cursor string) ([]*mcpsdk.Resource, string, error) {
			res, err := s.cs.ListResources(ctx, &mcpsdk.ListResourcesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return res.Resources, res.NextCursor, nil
		})
		return err
	})
	return out, err
}

// ListResourceTemplates returns every resource template the server lists
// (resources/templates/list, all pages): URI templates (RFC 6570) the server
// reads resources under. The driver does not expand them; a caller builds a
// URI and reads it with [ToolDriver.ReadResource]. Limits and errors as
// [ToolDriver.ListResources].
func (d *ToolDriver) ListResourceTemplates(ctx context.Context) ([]*mcpsdk.ResourceTemplate, error) {
	var out []*mcpsdk.ResourceTemplate
	err := d.request(ctx, "list resource templates", func(ctx context.Context, s *session) error {
		if serverCaps(s).Resources == nil {
			out = nil
			return nil
		}
		var err error
		out, err = pages(ctx, "resource templates", d.cfg.MaxResources, "MaxResources", func(ctx context.Context, cursor string) ([]*mcpsdk.ResourceTemplate, string, error) {
			res, err := s.cs.ListResourceTemplates(ctx, &mcpsdk.ListResourceTemplatesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return res.ResourceTemplates, res.NextCursor, nil
		})
		return err
	})
	return out, err
}

// ReadResource reads the resource at uri (resources/read) and returns its
// contents: text, or a blob with its bytes. Contents of more than
// Config.MaxMessageBytes bytes in all are refused with an error wrapping
// [ErrServerLimit] (over stdio and HTTP while the answer is read, before it is
// decoded; over a Transport given in the Config once decoded, and nothing of
// them is kept). A uri the server does not know is an error wrapping
// [ErrRefused] with the server's message. Safe for concurrent use.
func (d *ToolDriver) ReadResource(ctx context.Context, uri string) ([]*mcpsdk.ResourceContents, error) {
	what := fmt.Sprintf("read resource %q", oneLine(uri))
	if strings.TrimSpace(uri) == "" {
		return nil, fmt.Errorf("%s: the URI is empty; pass one that resources/list or a template gives", what)
	}
	var out []*mcpsdk.ResourceContents
	err := d.request(ctx, what, func(ctx context.Context, s *session) error {
		res, err := s.cs.ReadResource(ctx, &mcpsdk.ReadResourceParams{URI: uri})
		if err != nil {
			return err
		}
		size := 0
		for _, c := range res.Contents {
			if c != nil {
				size += len(c.Text) + len(c.Blob)
			}
		}
		if size > d.cfg.MaxMessageBytes {
			return &refused{fmt.Errorf("%w: the contents hold %d bytes, more than %d (Config.MaxMessageBytes); raise the limit only for a server trusted to send that much", ErrServerLimit, size, d.cfg.MaxMessageBytes)}
		}
		out = res.Contents
		return nil
	})
	return out, err
}

// Subscribe asks the server to tell the driver when the resource at uri
// changes (resources/subscribe). Every notifications/resources/updated of the
// server, for any resource, increases ToolsVersion, so an orchestrator holding
// the driver lists it again, and the next ReadResource reads the resource anew.
// A server that declares no subscriptions gives an error wrapping [ErrRefused].
// A subscription ends with the session; after a reconnect, subscribe again.
func (d *ToolDriver) Subscribe(ctx context.Context, uri string) error {
	what := fmt.Sprintf("subscribe to resource %q", oneLine(uri))
	return d.request(ctx, what, func(ctx context.Context, s *session) error {
		if r := serverCaps(s).Resources; r == nil || !r.Subscribe {
			return &refused{fmt.Errorf("%w: the server declares no resource subscriptions", ErrRefused)}
		}
		return s.cs.Subscribe(ctx, &mcpsdk.SubscribeParams{URI: uri})
	})
}

// Unsubscribe ends a subscription made with [ToolDriver.Subscribe].
func (d *ToolDriver) Unsubscribe(ctx context.Context, uri string) error {
	what := fmt.Sprintf("unsubscribe from resource %q", oneLine(uri))
	return d.request(ctx, what, func(ctx context.Context, s *session) error {
		return s.cs.Unsubscribe(ctx, &mcpsdk.UnsubscribeParams{URI: uri})
	})
}

// resourceUpdated records a notifications/resources/updated of the server.
func (d *ToolDriver) resourceUpdated(_ context.Context, req *mcpsdk.ResourceUpdatedNotificationRequest) {
	uri := ""
	if req != nil && req.Params != nil {
		uri = req.Params.URI
	}
	d.log.Debug("mcp: resource updated", "server", d.server, "uri", oneLine(uri))
	d.markChanged()
}

// maxListedLines bounds the lines resources__list and the description of
// prompts__get show; the rest is counted.
const maxListedLines = 500

// resourcesListText is the result of resources__list.
func (d *ToolDriver) resourcesListText(ctx context.Context) (any, error) {
	res, err := d.ListResources(ctx)
	if err != nil {
		return nil, err
	}
	tpl, err := d.ListResourceTemplates(ctx)
	if errors.Is(err, ErrRefused) {
		tpl = nil // a server without templates
	} else if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Resources (%d):\n", len(res))
	for i, r := range res {
		if i == maxListedLines {
			fmt.Fprintf(&b, "[... %d more resources not shown]\n", len(res)-i)
			break
		}
		if r == nil {
			continue
		}
		b.WriteString("- " + oneLine(r.URI))
		if name := firstOf(r.Title, r.Name); name != "" {
			b.WriteString(" — " + oneLine(name))
		}
		var facts []string
		if r.MIMEType != "" {
			facts = append(facts, oneLine(r.MIMEType))
		}
		if r.Size > 0 {
			facts = append(facts, fmt.Sprintf("%d bytes", r.Size))
		}
		if len(facts) > 0 {
			b.WriteString(" [" + strings.Join(facts, ", ") + "]")
		}
		if r.Description != "" {
			b.WriteString(": " + oneLine(r.Description))
		}
		b.WriteByte('\n')
	}
	if len(tpl) > 0 {
		fmt.Fprintf(&b, "Resource templates (%d; fill in the {placeholders} and read the URI):\n", len(tpl))
		for i, t := range tpl {
			if i == maxListedLines {
				fmt.Fprintf(&b, "[... %d more templates not shown]\n", len(tpl)-i)
				break
			}
			if t == nil {
				continue
			}
			b.WriteString("- " + oneLine(t.URITemplate))
			if name := firstOf(t.Title, t.Name); name != "" {
				b.WriteString(" — " + oneLine(name))
			}
			if t.MIMEType != "" {
				b.WriteString(" [" + oneLine(t.MIMEType) + "]")
			}
			if t.Description != "" {
				b.WriteString(": " + oneLine(t.Description))
			}
			b.WriteByte('\n')
		}
	}
	return cut(strings.TrimSuffix(b.String(), "\n")), nil
}

// resourceText is the result of resources__read: text contents as they are,
// every blob summarised by its type and size, all cut at MaxResultBytes.
func (d *ToolDriver) resourceText(ctx context.Context, uri string) (any, error) {
	contents, err := d.ReadResource(ctx, uri)
	if err != nil {
		return nil, err
	}
	return cut(contentsText(contents)), nil
}

// contentsText joins resource contents: text as is, a blob as one line.
func contentsText(contents []*mcpsdk.ResourceContents) string {
	var parts []string
	for _, c := range contents {
		switch {
		case c == nil:
		case c.Blob != nil:
			parts = append(parts, fmt.Sprintf("[blob: %s, %s, %d bytes]", oneLine(c.URI), orUnknown(c.MIMEType), len(c.Blob)))
		case len(contents) > 1:
			parts = append(parts, fmt.Sprintf("[%s, %s]\n%s", oneLine(c.URI), orUnknown(c.MIMEType), c.Text))
		default:
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func firstOf(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

func resourcesListTool(server string) mcs.Tool {
	return mcs.Tool{
		Name:        toolResourcesList,
		Title:       "List the resources of the MCP server",
		Description: "Lists the resources (data the server offers to read: files, records, documents) and resource templates of the MCP server " + server + ", with their URIs. Read one with " + toolResourcesRead + ".",
		Annotations: &mcs.ToolAnnotations{ReadOnly: true, Idempotent: true, OpenWorld: true},
	}
}

func resourcesReadTool(server string) mcs.Tool {
	return mcs.Tool{
		Name:        toolResourcesRead,
		Title:       "Read a resource of the MCP server",
		Description: "Reads one resource of the MCP server " + server + " by its URI (from " + toolResourcesList + ", or a template with its placeholders filled in). Text is returned as it is; binary contents are described by type and size.",
		Parameters: []mcs.Parameter{{
			Name: "uri", Required: true, Description: "the URI of the resource",
			Schema: map[string]any{"type": "string", "description": "the URI of the resource"},
		}},
		Annotations: &mcs.ToolAnnotations{ReadOnly: true, Idempotent: true, OpenWorld: true},
	}
}

// ListResources lists the server's resources; see [ToolDriver.ListResources].
func (d *Driver) ListResources(ctx context.Context) ([]*mcpsdk.Resource, error) {
	return d.td.ListResources(ctx)
}

// ListResourceTemplates lists the server's resource templates; see
// [ToolDriver.ListResourceTemplates].
func (d *Driver) ListResourceTemplates(ctx context.Context) ([]*mcpsdk.ResourceTemplate, error) {
	return d.td.ListResourceTemplates(ctx)
}

// ReadResource reads one resource; see [ToolDriver.ReadResource].
func (d *Driver) ReadResource(ctx context.Context, uri string) ([]*mcpsdk.ResourceContents, error) {
	return d.td.ReadResource(ctx, uri)
}

// Subscribe subscribes to one resource; see [ToolDriver.Subscribe].
func (d *Driver) Subscribe(ctx context.Context, uri string) error { return d.td.Subscribe(ctx, uri) }

// Unsubscribe ends a subscription; see [ToolDriver.Unsubscribe].
func (d *Driver) Unsubscribe(ctx context.Context, uri string) error {
	return d.td.Unsubscribe(ctx, uri)
}
