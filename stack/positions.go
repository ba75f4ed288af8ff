package stack

import (
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// positions maps the path of every key and table of a TOML document to the line
// it is written on. A path joins the keys with "."; an element of an array of
// tables carries its index: "driver[1].spec", "middleware.hooks".
type positions map[string]int

// indexPositions reads the lines of data, which must be valid TOML (it is
// decoded first). It never fails: what it cannot place gets no line.
func indexPositions(data []byte) positions {
	pos := positions{}
	var p unstable.Parser
	p.Reset(data)
	arrays := map[string]int{} // canonical path of an array of tables -> last index
	prefix := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts, first := keyParts(e.Key())
			canon, out := "", ""
			for i, k := range parts {
				canon = join(canon, k)
				out = join(out, k)
				last := i == len(parts)-1
				if last && e.Kind == unstable.ArrayTable {
					n, ok := arrays[canon]
					if !ok {
						n = -1
					}
					arrays[canon] = n + 1
					out += "[" + strconv.Itoa(n+1) + "]"
					continue
				}
				if n, ok := arrays[canon]; ok {
					out += "[" + strconv.Itoa(n) + "]"
				}
			}
			prefix = out
			if first != nil {
				pos.set(&p, prefix, first)
			}
		case unstable.KeyValue:
			pos.keyValue(&p, prefix, e)
		}
	}
	return pos
}

// keyValue records the key of e under prefix, and the keys of an inline table
// value below it.
func (pos positions) keyValue(p *unstable.Parser, prefix string, e *unstable.Node) {
	parts, first := keyParts(e.Key())
	path := prefix
	for _, k := range parts {
		path = join(path, k)
	}
	if first != nil {
		pos.set(p, path, first)
	}
	v := e.Value()
	if v.Kind != unstable.InlineTable {
		return
	}
	it := v.Children()
	for it.Next() {
		if c := it.Node(); c.Kind == unstable.KeyValue {
			pos.keyValue(p, path, c)
		}
	}
}

func (pos positions) set(p *unstable.Parser, path string, n *unstable.Node) {
	if _, ok := pos[path]; ok || n.Raw.Length == 0 {
		return
	}
	pos[path] = p.Shape(n.Raw).Start.Line
}

func keyParts(it unstable.Iterator) ([]string, *unstable.Node) {
	var parts []string
	var first *unstable.Node
	for it.Next() {
		n := it.Node()
		if first == nil {
			first = n
		}
		parts = append(parts, string(n.Data))
	}
	return parts, first
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// line returns the line of path, or of its nearest enclosing key or table that
// has one; 0 when none does.
func (pos positions) line(path string) int {
	for path != "" {
		if l, ok := pos[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}
