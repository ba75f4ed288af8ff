package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mcs-go/mcs/internal/origin"
)

// ErrRedirect is wrapped by the error of a request the server redirected to
// another origin (scheme, host and port) than Config.URL's; the redirect is not
// followed, so the Headers never reach the other origin.
var ErrRedirect = errors.New("redirect refused")

// ErrServerLimit is wrapped by the error of a call or listing whose answer broke
// a limit of the driver: an SSE event or a JSON body larger than
// Config.MaxMessageBytes, a listing of more than Config.MaxTools tools. The
// session is ended; the next call connects again.
var ErrServerLimit = errors.New("limit exceeded")

// ErrMalformedStream is wrapped by the error of a call whose answer was not a
// well-formed stream of JSON-RPC messages: an SSE line that is no field, an
// event that is not JSON-RPC, an answer stream without any event. The session
// is ended; the next call connects again.
var ErrMalformedStream = errors.New("malformed message stream")

// guard holds the first fault the transport found in a session's traffic: a
// refused redirect, a broken limit, a malformed stream. Once it holds one, the
// session's transport sends nothing more, so the session ends. Safe for
// concurrent use.
type guard struct {
	mu  sync.Mutex
	err error
}

// trip records err unless an earlier fault is recorded, and returns the fault
// recorded.
func (g *guard) trip(err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil {
		g.err = err
	}
	return g.err
}

// fault returns the recorded fault or nil; a nil guard has none.
func (g *guard) fault() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// httpClient returns the client of one session's streamable transport: a copy
// of cfg.HTTPClient (http.DefaultClient when nil) that follows redirects only
// within the origin of cfg.URL, sends cfg.Headers only to that origin, and reads
// answers through the limits of cfg, recording faults in g. The client given is
// never modified; its own redirect policy still applies to the redirects this
// one follows.
func httpClient(cfg Config, g *guard) *http.Client {
	base := cfg.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	home, _ := url.Parse(cfg.URL) // checked by normalize
	c := *base
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = &guardTransport{base: rt, home: home, headers: cfg.Headers, maxMessage: cfg.MaxMessageBytes, maxTools: cfg.MaxTools, g: g}
	c.CheckRedirect = origin.Redirects(home, base.CheckRedirect,
		func(target, home *url.URL) error {
			return g.trip(fmt.Errorf("%w: the server redirected to %s; only redirects within %s are followed, so that the configured headers go nowhere else (if that endpoint is the server's, set Config.URL, or url in a stack file, to it)",
				ErrRedirect, redactURL(target.String()), origin.String(home)))
		},
		func() error {
			return g.trip(fmt.Errorf("%w: stopped after %d redirects", ErrRedirect, origin.MaxRedirects))
		})
	return &c
}

// guardTransport adds the configured headers to requests to the configured
// origin (and to no other), refuses every request once its session's guard
// holds a fault, and bounds the answers it reads.
type guardTransport struct {
	base       http.RoundTripper
	home       *url.URL
	headers    map[string]string
	maxMessage int
	maxTools   int
	g          *guard
}

func (t *guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.g.fault(); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	if len(t.headers) > 0 && origin.Same(t.home, req.URL) {
		r := req.Clone(req.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
		req = r
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	lim := &limitedBody{
		body:   resp.Body,
		g:      t.g,
		max:    t.maxMessage,
		tools:  toolCounter{max: t.maxTools},
		sse:    ct == "text/event-stream",
		answer: req.Method == http.MethodPost,
	}
	resp.Body = lim
	return resp, nil
}

// CloseIdleConnections closes the idle connections of the transport below.
func (t *guardTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// limitedBody reads an answer of the server and stops it once it breaks a
// limit: a JSON body or one SSE event larger than max bytes, a listing of more
// than the counter's tools. It also stops at an SSE line that is no field, and
// at the end of the answer to a POST whose event stream held neither a message
// (a data field) nor an event ID to resume from. Each fault is recorded in the
// guard and returned from every later Read.
type limitedBody struct {
	body   io.ReadCloser
	g      *guard
	max    int
	tools  toolCounter
	sse    bool // an event stream; otherwise one JSON body
	answer bool // the answer to a POST, which must hold an event
	err    error

	n int // bytes of the body (JSON) or of the current event (SSE)

	// SSE line state.
	lineLen   int    // bytes of the current line before '\n' (without '\r')
	field     []byte // the field name of the current line, up to 5 bytes
	inValue   bool   // past the ':' of the current line
	skipSpace bool   // the next byte is the optional space after ':'
	isData    bool   // the current line is a data field
	useful    bool   // a data or id field was seen
	badLine   []byte // start of a line that is no field
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.body.Read(p)
	for i := 0; i < n; i++ {
		var ferr error
		if b.sse {
			ferr = b.sseByte(p[i])
		} else {
			b.n++
			if b.max > 0 && b.n > b.max {
				ferr = fmt.Errorf("%w: an answer of the server is larger than %d bytes (Config.MaxMessageBytes); raise the limit only for a server trusted to send that much", ErrServerLimit, b.max)
			} else {
				ferr = b.tools.feed(p[i])
			}
		}
		if ferr != nil {
			b.err = b.g.trip(ferr)
			return i, b.err
		}
	}
	if errors.Is(err, io.EOF) && b.sse && b.answer && !b.useful && !(b.inValue && (b.isData || string(b.field) == "id")) {
		return n, b.fail(fmt.Errorf("%w: the server answered a request with an event stream that holds no message (no SSE data or id field)", ErrMalformedStream))
	}
	return n, err
}

func (b *limitedBody) fail(err error) error {
	b.err = b.g.trip(err)
	return b.err
}

// sseByte follows one byte of an event stream: it counts the event's bytes,
// feeds the values of data fields to the tool counter and checks that every
// line is a field, a comment or blank.
func (b *limitedBody) sseByte(c byte) error {
	b.n++
	if b.max > 0 && b.n > b.max {
		return fmt.Errorf("%w: an SSE event of the server is larger than %d bytes (Config.MaxMessageBytes); raise the limit only for a server trusted to send that much", ErrServerLimit, b.max)
	}
	if c == '\n' {
		switch {
		case b.lineLen == 0: // a blank line ends the event
			b.n = 0
			b.tools.reset()
		case !b.inValue && (len(b.field) == 0 || b.field[0] != ':'):
			return fmt.Errorf("%w: the SSE stream has a line that is no field: %q", ErrMalformedStream, oneLine(string(b.badLine)))
		default:
			if b.isData {
				if err := b.tools.feed('\n'); err != nil {
					return err
				}
			}
			if b.isData || string(b.field) == "id" {
				b.useful = true
			}
		}
		b.lineLen, b.field, b.inValue, b.isData, b.skipSpace, b.badLine = 0, b.field[:0], false, false, false, b.badLine[:0]
		return nil
	}
	if c == '\r' {
		return nil
	}
	b.lineLen++
	if !b.inValue {
		if c == ':' && (b.lineLen > 1) {
			b.inValue, b.skipSpace = true, true
			b.isData = string(b.field) == "data"
			return nil
		}
		if len(b.field) < 5 {
			b.field = append(b.field, c)
		} else if len(b.field) == 5 {
			b.field = append(b.field, 0) // longer than any field that matters
		}
		if len(b.badLine) < 40 {
			b.badLine = append(b.badLine, c)
		}
		return nil
	}
	if b.skipSpace {
		b.skipSpace = false
		if c == ' ' {
			return nil
		}
	}
	if b.isData {
		return b.tools.feed(c)
	}
	return nil
}

func (b *limitedBody) Close() error { return b.body.Close() }

// toolCounter follows JSON-RPC messages byte by byte and counts the elements of
// result.tools of each, so that a listing of too many tools is refused before
// it is decoded. It keeps nothing of the message but the key being read.
type toolCounter struct {
	max int // 0: no limit

	depth   int
	kinds   [4]byte // the containers at depth 1..4: '{' or '['
	keys    [4]byte // the last key read at depth 1..4: keyResult, keyTools or 0
	msg     int     // depth of the message object: 1, or 2 in a batch
	inRes   bool    // in the result object of a message
	inTools bool    // in its tools array
	n       int     // tools counted in the message

	inStr, esc, isKey, expectKey bool
	key                          []byte // the key being read, up to 64 bytes
	keyLong                      bool
}

// The keys the counter looks for.
const (
	keyResult = 1 + iota
	keyTools
)

// reset forgets the message being followed (an SSE event ended).
func (t *toolCounter) reset() {
	*t = toolCounter{max: t.max, key: t.key[:0]}
}

func (t *toolCounter) kind(depth int) byte {
	if depth < 1 || depth > len(t.kinds) {
		return 0
	}
	return t.kinds[depth-1]
}

func (t *toolCounter) keyAt(depth int) byte {
	if depth < 1 || depth > len(t.keys) {
		return 0
	}
	return t.keys[depth-1]
}

// feed follows one byte; it fails once a message lists more than max tools.
func (t *toolCounter) feed(c byte) error {
	if t.max <= 0 {
		return nil
	}
	if t.inStr {
		switch {
		case t.esc:
			t.esc = false
		case c == '\\':
			t.esc = true
		case c == '"':
			t.inStr = false
			if t.isKey {
				t.keys[t.depth-1] = t.keyCode()
			}
			return nil
		}
		if t.isKey {
			if len(t.key) < 64 {
				t.key = append(t.key, c)
			} else {
				t.keyLong = true
			}
		}
		return nil
	}
	switch c {
	case '"':
		t.inStr = true
		// Only the keys of a message and of its result matter.
		t.isKey = t.expectKey && t.kind(t.depth) == '{' && t.depth <= t.msg+1 && t.depth <= len(t.keys)
		t.key, t.keyLong = t.key[:0], false
	case '{', '[':
		t.depth++
		if t.depth <= len(t.kinds) {
			t.kinds[t.depth-1] = c
			t.keys[t.depth-1] = 0
		}
		if t.depth == 1 {
			t.msg = 1
			if c == '[' {
				t.msg = 2
			}
		}
		switch {
		case c == '{' && t.depth == t.msg+1 && t.kind(t.msg) == '{' && t.keyAt(t.msg) == keyResult:
			t.inRes = true
		case c == '[' && t.inRes && t.depth == t.msg+2 && t.keyAt(t.msg+1) == keyTools:
			t.inTools = true
		case c == '{' && t.inTools && t.depth == t.msg+3:
			if t.n++; t.n > t.max {
				return fmt.Errorf("%w: the server lists more than %d tools (Config.MaxTools); raise the limit only for a server trusted to list that many", ErrServerLimit, t.max)
			}
		}
		t.expectKey = c == '{'
	case '}', ']':
		switch t.depth {
		case t.msg + 2:
			t.inTools = false
		case t.msg + 1:
			t.inRes = false
		}
		if t.depth > 0 {
			t.depth--
		}
		if t.depth == 0 {
			t.n = 0 // the next message counts anew
		}
		t.expectKey = false
	case ',':
		t.expectKey = t.kind(t.depth) == '{'
	case ':':
		t.expectKey = false
	}
	return nil
}

// keyCode names the key just read, unescaped and compared as the SDK's
// decoder would at its most lenient (ignoring case).
func (t *toolCounter) keyCode() byte {
	if t.keyLong {
		return 0
	}
	k := t.key
	if bytes.IndexByte(k, '\\') >= 0 {
		var s string
		if json.Unmarshal(append(append([]byte{'"'}, k...), '"'), &s) != nil {
			return 0
		}
		k = []byte(s)
	}
	switch {
	case bytes.EqualFold(k, []byte("result")):
		return keyResult
	case bytes.EqualFold(k, []byte("tools")):
		return keyTools
	}
	return 0
}

// sdkMalformed are the SDK's words for an answer it could not read as JSON-RPC.
var sdkMalformed = []string{"failed to decode event", "failed to decode response", "malformed event", "unmarshaling jsonrpc message", "invalid trailing data"}

// malformed returns err as wrapping [ErrMalformedStream] when it is the SDK's
// report of an answer that is not JSON-RPC, and nil otherwise.
func malformed(err error) error {
	if err == nil || errors.Is(err, ErrMalformedStream) {
		return err
	}
	msg := err.Error()
	for _, m := range sdkMalformed {
		if strings.Contains(msg, m) {
			return fmt.Errorf("%w: %w", ErrMalformedStream, err)
		}
	}
	return nil
}
