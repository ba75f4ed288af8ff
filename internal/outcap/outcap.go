// Package outcap keeps the head and the tail of a command's output within a
// byte budget, for the drivers that run commands (sandbox, ssh).
package outcap

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcs-go/mcs/internal/textcut"
)

// Buffer is an io.Writer that keeps the first and the last bytes of a stream,
// at most Max in all, and counts the rest. It is safe for concurrent use. The
// zero value keeps nothing; set Max first.
type Buffer struct {
	// Max is the number of bytes kept: the first Max/2 and the last Max-Max/2.
	Max int

	mu    sync.Mutex
	head  []byte
	tail  []byte // ring buffer of the last bytes once head is full
	pos   int    // next write position in tail when it is full
	total int64
}

// Write keeps what fits and counts the rest; it never fails, so that a command
// that floods its output is not stopped by a broken pipe.
func (c *Buffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	c.total += int64(n)
	headMax := c.Max / 2
	if room := headMax - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	tailMax := c.Max - headMax
	if tailMax <= 0 || len(p) == 0 {
		return n, nil
	}
	if len(p) >= tailMax {
		c.tail = append(c.tail[:0], p[len(p)-tailMax:]...)
		c.pos = 0
		return n, nil
	}
	for len(p) > 0 {
		if len(c.tail) < tailMax {
			k := min(tailMax-len(c.tail), len(p))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(c.tail[c.pos:], p)
		p = p[k:]
		c.pos = (c.pos + k) % tailMax
	}
	return n, nil
}

// Total returns the number of bytes written so far.
func (c *Buffer) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Truncated reports whether bytes were dropped.
func (c *Buffer) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total > int64(len(c.head)+len(c.tail))
}

// String returns the kept bytes as text: the head, then, when bytes were
// dropped, a notice saying how many, then the tail. Invalid UTF-8 is replaced,
// and a character cut at either side of the gap is dropped.
func (c *Buffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := make([]byte, 0, len(c.tail))
	tail = append(tail, c.tail[c.pos:]...)
	tail = append(tail, c.tail[:c.pos]...)
	dropped := c.total - int64(len(c.head)+len(tail))
	if dropped <= 0 {
		return strings.ToValidUTF8(string(c.head)+string(tail), "\uFFFD")
	}
	head := textcut.TrimIncomplete(c.head)
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	notice := fmt.Sprintf("\n[... %d bytes cut: the output had %d bytes; the first %d and the last %d are shown ...]\n", dropped, c.total, len(c.head), len(c.tail))
	return strings.ToValidUTF8(string(head), "\uFFFD") + notice + strings.ToValidUTF8(string(tail), "\uFFFD")
}
