package stack

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// positions maps the path of every key and table of a TOML document to the line
// it is written on. A path joins the keys with "."; an element of an array of
// tables carries its index: "driver[1].spec", "middleware.hooks".
type positions map[string]int

// indexPositions reads the lines of data, which must be valid TOML (it is
// decoded first). It never fails: what it cannot place gets no line. It takes
// time linear in the size of data: a line is found by a binary search in the
// offsets of the line breaks, not by counting them from the start as
// unstable.Parser.Shape does for every node.
func indexPositions(data []byte) positions {
	pos := positions{}
	var p unstable.Parser
	p.Reset(data)
	lines := newLineIndex(data)
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
				pos.set(lines, prefix, first)
			}
		case unstable.KeyValue:
			pos.keyValue(lines, prefix, e)
		}
	}
	return pos
}

// keyValue records the key of e under prefix, and the keys of an inline table
// value below it.
func (pos positions) keyValue(lines lineIndex, prefix string, e *unstable.Node) {
	parts, first := keyParts(e.Key())
	path := prefix
	for _, k := range parts {
		path = join(path, k)
	}
	if first != nil {
		pos.set(lines, path, first)
	}
	v := e.Value()
	if v.Kind != unstable.InlineTable {
		return
	}
	it := v.Children()
	for it.Next() {
		if c := it.Node(); c.Kind == unstable.KeyValue {
			pos.keyValue(lines, path, c)
		}
	}
}

func (pos positions) set(lines lineIndex, path string, n *unstable.Node) {
	if _, ok := pos[path]; ok || n.Raw.Length == 0 {
		return
	}
	pos[path] = lines.line(int(n.Raw.Offset))
}

// lineIndex holds the offsets of the line breaks of a document, in order.
type lineIndex []int

func newLineIndex(data []byte) lineIndex {
	idx := make(lineIndex, 0, bytes.Count(data, []byte{'\n'}))
	for i, c := range data {
		if c == '\n' {
			idx = append(idx, i)
		}
	}
	return idx
}

// line returns the 1-based line of the byte at offset: one more than the
// number of line breaks before it.
func (idx lineIndex) line(offset int) int {
	n, _ := slices.BinarySearch(idx, offset)
	return n + 1
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
