package filetools

import (
	"fmt"
	"path"
	"strings"
)

// glob is a compiled search_files pattern.
type glob struct {
	segs     []string // pattern segments; "**" matches any number of path elements
	baseOnly bool     // the pattern has no "/": match the last element only
}

// compileGlob checks pattern and compiles it. The error says what is wrong.
func compileGlob(pattern string) (*glob, error) {
	switch {
	case strings.TrimSpace(pattern) == "":
		return nil, fmt.Errorf(`pattern is empty; give a glob such as "*.txt" or "docs/**/*.md"`)
	case len(pattern) > 4096:
		return nil, fmt.Errorf("pattern is %d bytes long; the limit is 4096", len(pattern))
	case strings.ContainsRune(pattern, 0):
		return nil, fmt.Errorf("pattern contains a NUL byte; remove it")
	}
	g := &glob{baseOnly: !strings.Contains(pattern, "/")}
	if g.baseOnly {
		g.segs = []string{pattern}
	} else {
		for s := range strings.SplitSeq(strings.Trim(pattern, "/"), "/") {
			switch {
			case s == "" || s == ".":
				continue
			case s == "**" && len(g.segs) > 0 && g.segs[len(g.segs)-1] == "**":
				continue
			}
			g.segs = append(g.segs, s)
		}
	}
	for _, s := range g.segs {
		if s == "**" {
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("pattern %q is not a valid glob (%v); use *, ?, [abc] and **", pattern, err)
		}
	}
	return g, nil
}

// match reports whether the slash path rel (relative to the searched directory)
// matches.
func (g *glob) match(rel string) bool {
	if g.baseOnly {
		ok, _ := path.Match(g.segs[0], path.Base(rel))
		return ok
	}
	elems := strings.Split(rel, "/")
	// ok[i][j]: segs[i:] matches elems[j:]; filled from the end, so the cost is
	// len(segs)*len(elems) whatever the number of "**".
	n, m := len(g.segs), len(elems)
	ok := make([]bool, (n+1)*(m+1))
	at := func(i, j int) *bool { return &ok[i*(m+1)+j] }
	*at(n, m) = true
	for i := n - 1; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			if g.segs[i] == "**" {
				*at(i, j) = *at(i+1, j) || (j < m && *at(i, j+1))
				continue
			}
			if j < m {
				matched, _ := path.Match(g.segs[i], elems[j])
				*at(i, j) = matched && *at(i+1, j+1)
			}
		}
	}
	return *at(0, 0)
}
