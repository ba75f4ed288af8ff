package orchestrator

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/toolname"
)

// maxExposedName is the longest tool name an orchestrator exposes: the limit of
// OpenAI's function names, which the other providers accept too.
const maxExposedName = 64

// shortNames maps the shortened exposed names of a prefixed driver to the driver's
// own names, as of its last listing. Safe for concurrent use.
type shortNames struct {
	m atomic.Pointer[map[string]string]
}

func (s *shortNames) store(m map[string]string) {
	if len(m) == 0 && s.m.Load() == nil {
		return
	}
	s.m.Store(&m)
}

func (s *shortNames) lookup(exposed string) (string, bool) {
	if m := s.m.Load(); m != nil {
		inner, ok := (*m)[exposed]
		return inner, ok
	}
	return "", false
}

// expose returns the exposed name of the driver's tool inner: prefix + inner,
// shortened to maxExposedName when the prefix makes it longer (recorded in
// shortened). A name that breaks the rule by itself is left as it is, so that the
// name check reports the driver's tool.
func (p *prefixed) expose(inner string, shortened map[string]string) string {
	full := p.prefix + inner
	if len(full) <= maxExposedName || len(inner) > maxExposedName {
		return full
	}
	short := toolname.Shorten(full, maxExposedName)
	if shortened != nil {
		shortened[short] = inner
	}
	return short
}

// internal returns the driver's own name for the exposed name, and false when the
// name is not one of this driver's. A shortened name the last listing does not know
// (the driver's tools changed since) lists the driver again.
func (p *prefixed) internal(ctx context.Context, exposed string) (string, bool) {
	if inner, ok := p.short.lookup(exposed); ok {
		return inner, true
	}
	if len(exposed) == maxExposedName && looksShortened(exposed) {
		if _, err := p.ListTools(ctx); err == nil {
			if inner, ok := p.short.lookup(exposed); ok {
				return inner, true
			}
		}
	}
	return strings.CutPrefix(exposed, p.prefix)
}

// looksShortened reports whether name ends like a shortened name: "_" and seven
// lower-case hex digits.
func looksShortened(name string) bool {
	if len(name) < toolname.HashLen {
		return false
	}
	tail := name[len(name)-toolname.HashLen:]
	if tail[0] != '_' {
		return false
	}
	for i := 1; i < len(tail); i++ {
		c := tail[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// toolNamer is an error of a driver's own type that names a tool and can be
// renamed (the drivers of this module return *mcs.ArgumentsError instead).
type toolNamer interface {
	ToolName() string
	WithToolName(name string) error
}

// translate renames what a driver's call returned so that the model reads the
// names it uses: an error naming the driver's tool inner (an *mcs.ArgumentsError or
// a [toolNamer]) names exposed instead; a nested ToolSearch's result lists the
// exposed names of the tools it found.
func (p *prefixed) translate(inner, exposed string, res any, err error) (any, error) {
	if err != nil {
		switch e := err.(type) {
		case *mcs.ArgumentsError:
			if e.Tool == inner {
				c := *e
				c.Tool = exposed
				return res, &c
			}
		case toolNamer:
			if e.ToolName() == inner {
				return res, e.WithToolName(exposed)
			}
		}
		return res, err
	}
	if sr, ok := res.(*SearchResult); ok && sr != nil {
		c := *sr
		c.Tools = make([]FoundTool, len(sr.Tools))
		for i, t := range sr.Tools {
			t.Name = p.expose(t.Name, nil)
			if t.Description != "" {
				t.Description = "[" + p.label + "] " + t.Description
			}
			c.Tools[i] = t
		}
		return &c, nil
	}
	return res, nil
}
