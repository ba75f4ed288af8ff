package mcp

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// normalizeRoots turns the roots of a Config into file URIs: a path is made
// absolute (relative to the current directory); a file: URI is kept. Any other
// URI is an error.
func normalizeRoots(roots []string) ([]string, error) {
	var out []string
	for _, r := range roots {
		r = strings.TrimSpace(r)
		if r == "" {
			return nil, fmt.Errorf("%w: Roots holds an empty entry; list directories such as \"./data\"", ErrInvalidConfig)
		}
		if u, err := url.Parse(r); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
			if u.Scheme != "file" || u.Path == "" {
				return nil, fmt.Errorf("%w: root %q is not a directory or a file: URI", ErrInvalidConfig, r)
			}
			out = append(out, u.String())
			continue
		}
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, fmt.Errorf("%w: root %q: %w", ErrInvalidConfig, r, err)
		}
		out = append(out, (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String())
	}
	return out, nil
}

// rootList is what the driver answers to roots/list: the roots of the Config,
// named by their last element, and nothing else.
func rootList(uris []string) []*mcpsdk.Root {
	var out []*mcpsdk.Root
	for _, u := range uris {
		name := u
		if p, err := url.Parse(u); err == nil {
			name = filepath.Base(filepath.FromSlash(p.Path))
		}
		out = append(out, &mcpsdk.Root{URI: u, Name: name})
	}
	return out
}
