package runner

import (
	"fmt"
	"github.com/mcs-go/mcs/internal/toolname"
	"slices"
	"strings"
)

// maxClosest is how many tool names an answer to a foreign call suggests.
const maxClosest = 3

// closest returns up to maxClosest of names, nearest to name first: a name that
// ends in "__"+name (a dropped namespace) or that name ends in (a namespace the
// model made up) first, then by edit distance, case-insensitively; ties keep the
// listing order.
func closest(name string, names []string) []string {
	type cand struct {
		name string
		rank int
		dist int
		pos  int
	}
	lname := strings.ToLower(name)
	cands := make([]cand, 0, len(names))
	for i, n := range names {
		ln := strings.ToLower(n)
		c := cand{name: n, rank: 2, pos: i}
		switch {
		case strings.HasSuffix(ln, "__"+lname) || strings.HasSuffix(lname, "__"+ln):
			c.rank = 0
		case strings.Contains(ln, lname) || strings.Contains(lname, ln):
			c.rank = 1
		}
		c.dist = toolname.Distance(lname, ln)
		if i := strings.LastIndex(ln, "__"); i >= 0 { // the name without its namespace
			c.dist = min(c.dist, toolname.Distance(lname, ln[i+2:]))
		}
		cands = append(cands, c)
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return a.dist - b.dist
	})
	out := make([]string, 0, maxClosest)
	for _, c := range cands {
		if len(out) == maxClosest {
			break
		}
		out = append(out, c.name)
	}
	return out
}

// closestText says which tools exist, for an answer to a call of a tool that does
// not.
func closestText(name string, names []string) string {
	near := closest(name, names)
	switch len(near) {
	case 0:
		return "no tools are available"
	case 1:
		return fmt.Sprintf("the closest tool is %q", near[0])
	}
	q := make([]string, len(near))
	for i, n := range near {
		q[i] = fmt.Sprintf("%q", n)
	}
	return "the closest tools are " + strings.Join(q, ", ")
}
