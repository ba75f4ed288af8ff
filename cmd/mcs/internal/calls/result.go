package calls

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcs-go/mcs"
)

// WriteJSON writes v as indented JSON and a newline, without HTML escaping.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Pretty renders a tool result for people: JSON (also a string that holds
// JSON) pretty-printed, other text as it is, trailing line ends trimmed. It
// does not make the text safe for a terminal or a page: the caller escapes it.
func Pretty(v any) string {
	if s, ok := v.(string); ok {
		t := strings.TrimSpace(s)
		if (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Valid([]byte(t)) {
			var buf bytes.Buffer
			if json.Indent(&buf, []byte(t), "", "  ") == nil {
				return buf.String()
			}
		}
		return strings.TrimRight(s, "\n")
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimRight(buf.String(), "\n")
}

// PendingID is the approval id of a pending or denied result: the "id" of the
// Data of an [mcs.Signal], or "".
func PendingID(res any) string {
	var sig mcs.Signal
	switch r := res.(type) {
	case mcs.Signal:
		sig = r
	case *mcs.Signal:
		if r != nil {
			sig = *r
		}
	}
	id, _ := sig.Data["id"].(string)
	return id
}

// InvalidArguments is the message of a call the validation refused: a line
// saying so, then one line per problem, each "path: what is wrong".
func InvalidArguments(name string, problems []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s was not run: %d problem", name, len(problems))
	if len(problems) != 1 {
		b.WriteByte('s')
	}
	b.WriteString(" with its arguments; fix them and call again:")
	flat := strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")
	for _, p := range problems {
		b.WriteString("\n  ")
		b.WriteString(flat.Replace(p))
	}
	return b.String()
}
