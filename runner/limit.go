package runner

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/mcs-go/mcs"
)

// chunkCost is what every streamed chunk counts on top of what it carries, so
// that an endless stream of chunks that carry nothing (each of which still costs
// the assemblers a little) ends too.
const chunkCost = 16

// replyMeter counts one streamed reply against the limit: the text of a text
// stream as the buffer holds it, the payload of each chunk of a native one (see
// payloadBytes), and chunkCost per chunk.
type replyMeter struct {
	max        int // <= 0: no limit
	textFormat string
	pending    int // bytes of chunks that came before the format was known
	text       int
	native     int
	chunks     int
}

// add counts chunk, which buf has just taken, and reports whether the reply is
// still within the limit.
func (m *replyMeter) add(buf *mcs.StreamBuffer, chunk any) bool {
	m.chunks++
	switch f := buf.Format(); f {
	case "":
		m.pending += rawLen(chunk)
	case m.textFormat:
		m.text = len(buf.Content())
	default:
		m.native += payloadBytes(chunk)
	}
	return m.max <= 0 || m.pending+m.text+m.native+m.chunks*chunkCost <= m.max
}

func rawLen(chunk any) int {
	switch c := chunk.(type) {
	case string:
		return len(c)
	case []byte:
		return len(c)
	case json.RawMessage:
		return len(c)
	}
	return payloadBytes(chunk)
}

// isLabel reports whether the values of a key are a provider's labels (a fixed,
// short vocabulary: the type of an event or block, a role, an index, why the
// message ended) rather than payload.
func isLabel(key string) bool {
	switch key {
	case "type", "object", "role", "index", "finish_reason", "stop_reason":
		return true
	}
	return false
}

// payloadBytes returns the size of what a reply or a chunk carries: the bytes of
// its string values (text, reasoning, names, ids, call arguments) and of its
// other scalars, but not of keys, of JSON punctuation, or of the values of
// labels (see isLabel). A string, bytes or json.RawMessage is read as JSON from
// its first brace (a server-sent event's "data:" line, for example); text before
// it, or without one, counts whole. Any other value counts as its JSON.
func payloadBytes(v any) int {
	switch x := v.(type) {
	case nil:
		return 0
	case string:
		return jsonText(x)
	case []byte:
		return jsonText(unsafe.String(unsafe.SliceData(x), len(x)))
	case json.RawMessage:
		return jsonText(unsafe.String(unsafe.SliceData(x), len(x)))
	case map[string]any:
		n := 0
		for k, e := range x {
			if !isLabel(k) {
				n += valueBytes(e)
			}
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n += valueBytes(e)
		}
		return n
	}
	data, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return jsonText(unsafe.String(unsafe.SliceData(data), len(data)))
}

// valueBytes is payloadBytes of a decoded JSON value: a string is its bytes.
func valueBytes(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case float64:
		var b [32]byte
		return len(strconv.AppendFloat(b[:0], x, 'g', -1, 64))
	case json.Number:
		return len(x)
	case bool:
		if x {
			return len("true")
		}
		return len("false")
	case nil:
		return 4
	}
	return payloadBytes(v)
}

// jsonText is payloadBytes of text: JSON from its first brace on.
func jsonText(s string) int {
	i := strings.IndexByte(s, '{')
	if i < 0 {
		return len(s)
	}
	return i + jsonBytes(s[i:])
}

// jsonBytes scans JSON text (it need not be valid) and counts the bytes of its
// values but those of labels, the way payloadBytes counts a decoded value.
func jsonBytes(s string) int {
	n := 0
	label := false // the scalar being read is the value of a label
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			end := min(j, len(s))
			k := j + 1
			for k < len(s) && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r') {
				k++
			}
			if k < len(s) && s[k] == ':' { // a key
				label = isLabel(s[i+1 : end])
				i = k
				continue
			}
			if !label {
				n += end - i - 1
			}
			i = j
		case '{', '}', '[', ']':
			label = false
		case ' ', '\t', '\n', '\r', ',', ':':
		default: // a number or a literal
			if !label {
				n++
			}
		}
	}
	return n
}

// tooLarge is the error of a reply past the limit.
func (r *Runner) tooLarge(streamed bool) error {
	e := &ModelError{Model: r.m.Name(), Kind: ErrReplyTooLarge,
		Detail: fmt.Sprintf("the reply passed %d bytes of text, reasoning and call arguments", r.o.maxReply),
		Hint:   "ask for a shorter reply (a lower max tokens), or raise the limit (runner.WithMaxReplyBytes) for a model you trust"}
	if streamed {
		e.Detail += "; the stream was cancelled"
	}
	if ep, ok := r.m.(interface{ Endpoint() string }); ok {
		e.Endpoint = ep.Endpoint()
	}
	return e
}
