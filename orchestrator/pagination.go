package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcs-go/mcs"
)

// The names of the tools with which the model turns the pages of a [Paginator].
const (
	NextPageTool = "tools__next_page"
	PrevPageTool = "tools__prev_page"
)

// Paginator is the Layer that shows a long tool listing one page at a time. When its
// inner listing has more tools than fit one page, it exposes the current page
// followed by NextPageTool when there is a next page and PrevPageTool when there is
// a previous one (a tool that could do nothing is not offered: it would cost tokens
// and invite useless calls), and contributes an instruction line such as "You see
// tools 1–20 of 135 (page 1/7). ...". With at most one page of tools (none included)
// it exposes them unchanged, adds nothing and contributes no instruction.
//
// The page offset always stays on the page grid: a page tool called although it is
// not offered (ExecuteTool routes it) stays on the last or the first page and says
// so in its result, and when the listing shrinks the page
// is clamped to the last one. A call by a name on another page is still routed by
// ExecuteTool; through ProcessLLMResponse only the current page is callable. Inner
// tools named like the page tools are hidden by them.
//
// Create it with [Pagination]. A Paginator is safe for concurrent use and belongs to
// one pipeline: its page and the size of the listing it last saw are its own state.
type Paginator struct {
	size int

	mu    sync.Mutex
	page  int // zero-based, clamped at the last listing
	total int // tools in the inner listing at the last listing

	version atomic.Uint64
}

var (
	_ callableLayer      = (*Paginator)(nil)
	_ Layer              = (*Paginator)(nil)
	_ mcs.VersionedTools = (*Paginator)(nil)
	_ windowLayer        = (*Paginator)(nil)
)

// Pagination returns a Paginator that shows pageSize tools per page, starting on the
// first page. It panics when pageSize is less than 1, which is a programming error.
func Pagination(pageSize int) *Paginator {
	if pageSize < 1 {
		panic(fmt.Sprintf("orchestrator: Pagination(%d): the page size must be at least 1", pageSize))
	}
	return &Paginator{size: pageSize}
}

// PageSize returns the number of tools per page.
func (p *Paginator) PageSize() int { return p.size }

// Page returns the current page, counted from 1, and the number of pages, as of the
// last listing; (1, 0) before any listing and for an empty listing.
func (p *Paginator) Page() (page, pages int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.page + 1, p.pages(p.total)
}

// ToolsVersion increases every time the page changes: turned by a page tool, or
// clamped because the listing shrank.
func (p *Paginator) ToolsVersion() uint64 { return p.version.Load() }

func (p *Paginator) pages(total int) int { return (total + p.size - 1) / p.size }

// clamp keeps page on the grid of total tools.
func (p *Paginator) clamp(page, total int) int {
	return max(0, min(page, p.pages(total)-1))
}

var pageTools = []mcs.Tool{
	{
		Name:        NextPageTool,
		Title:       "Next page of tools",
		Description: "Shows the next page of the tool list and returns the tools on it.",
	},
	{
		Name:        PrevPageTool,
		Title:       "Previous page of tools",
		Description: "Shows the previous page of the tool list and returns the tools on it.",
	},
}

func isPageTool(name string) bool { return name == NextPageTool || name == PrevPageTool }

// inner lists the inner tools without those the page tools hide.
func (p *Paginator) inner(ctx context.Context, drivers []Entry, inner Strategy) ([]mcs.Tool, error) {
	tools, err := inner.ListTools(ctx, drivers)
	out := tools[:0:0]
	for _, t := range tools {
		if !isPageTool(t.Name) {
			out = append(out, t)
		}
	}
	return out, err
}

// ListTools returns the current page of inner's listing and the page tools.
func (p *Paginator) ListTools(ctx context.Context, drivers []Entry, inner Strategy) ([]mcs.Tool, error) {
	tools, err := p.inner(ctx, drivers, inner)
	if len(tools) == 0 && err != nil {
		return nil, err // keep the page through a failure
	}
	p.mu.Lock()
	p.total = len(tools)
	page := p.clamp(p.page, p.total)
	moved := page != p.page
	p.page = page
	p.mu.Unlock()
	if moved {
		p.version.Add(1) // the listing shrank under the page
	}
	if len(tools) <= p.size {
		return tools, err
	}
	lo, hi := page*p.size, min((page+1)*p.size, len(tools))
	out := make([]mcs.Tool, 0, hi-lo+len(pageTools))
	out = append(out, tools[lo:hi]...)
	return append(out, p.offered(page, p.pages(len(tools)))...), err
}

// alsoCallable returns the page tools that are not offered on the current page but
// still answer a forced call in band (the model may call one from an earlier
// listing); none with at most one page.
func (p *Paginator) alsoCallable() []string {
	p.mu.Lock()
	page, pages := p.page, p.pages(p.total)
	p.mu.Unlock()
	if pages < 2 {
		return nil
	}
	var out []string
	offered := p.offered(page, pages)
	for _, t := range pageTools {
		if !slices.ContainsFunc(offered, func(o mcs.Tool) bool { return o.Name == t.Name }) {
			out = append(out, t.Name)
		}
	}
	return out
}

// offered returns the page tools that do something on page of pages: next unless it
// is the last page, previous unless it is the first.
func (p *Paginator) offered(page, pages int) []mcs.Tool {
	switch {
	case pages < 2:
		return nil
	case page == 0:
		return pageTools[:1]
	case page == pages-1:
		return pageTools[1:]
	}
	return pageTools
}

// ExecuteTool turns the page for the page tools and hands every other name to inner.
func (p *Paginator) ExecuteTool(ctx context.Context, drivers []Entry, name string, args map[string]any, inner Strategy) (any, error) {
	switch name {
	case NextPageTool:
		return p.turn(ctx, drivers, inner, +1)
	case PrevPageTool:
		return p.turn(ctx, drivers, inner, -1)
	}
	return inner.ExecuteTool(ctx, drivers, name, args)
}

// turn moves the page by delta, staying on the grid, and describes the new page.
func (p *Paginator) turn(ctx context.Context, drivers []Entry, inner Strategy, delta int) (any, error) {
	tools, err := p.inner(ctx, drivers, inner)
	if len(tools) == 0 && err != nil {
		return nil, fmt.Errorf("turn the page: %w", err)
	}
	p.mu.Lock()
	total := len(tools)
	from := p.clamp(p.page, total)
	to := p.clamp(from+delta, total)
	changed := to != p.page
	p.page, p.total = to, total
	p.mu.Unlock()
	if changed {
		p.version.Add(1)
	}
	pages := p.pages(total)
	if pages == 0 {
		return map[string]any{"message": "There are no tools.", "tools": []any{}}, nil
	}
	lo, hi := to*p.size, min((to+1)*p.size, total)
	msg := p.line(lo, hi, total, to, pages)
	switch {
	case from == to && delta > 0:
		msg = "This is already the last page. " + msg
	case from == to && delta < 0:
		msg = "This is already the first page. " + msg
	}
	list := make([]any, 0, hi-lo)
	for _, t := range tools[lo:hi] {
		list = append(list, map[string]any{
			"name":        t.Name,
			"description": t.Summary(),
			"parameters":  mcs.ToolSchema(t),
		})
	}
	return map[string]any{"message": msg, "page": to + 1, "pages": pages, "tools": list}, nil
}

// line describes the page that shows tools[lo:hi] of total.
func (p *Paginator) line(lo, hi, total, page, pages int) string {
	return fmt.Sprintf("You see tools %d–%d of %d (page %d/%d).", lo+1, hi, total, page+1, pages)
}

// Instructions describes the current page and how to turn it, as of the last
// listing; "" when everything fits one page.
func (p *Paginator) Instructions(context.Context) string {
	p.mu.Lock()
	total, page := p.total, p.page
	p.mu.Unlock()
	if total <= p.size {
		return ""
	}
	lo, hi := page*p.size, min((page+1)*p.size, total)
	pages := p.pages(total)
	var how string
	switch offered := p.offered(page, pages); len(offered) {
	case 1:
		how = fmt.Sprintf(" Call %s to see the other tools;", offered[0].Name)
	default:
		how = fmt.Sprintf(" Call %s or %s to see the other tools;", NextPageTool, PrevPageTool)
	}
	return p.line(lo, hi, total, page, pages) + how + " only the tools on the current page can be called."
}

// listEvery lists every page at once, with the page tools when there is more than
// one page.
func (p *Paginator) listEvery(ctx context.Context, drivers []Entry, inner Strategy) ([]mcs.Tool, error) {
	tools, err := p.inner(ctx, drivers, inner)
	if len(tools) > p.size {
		tools = append(tools, pageTools...)
	}
	return tools, err
}
