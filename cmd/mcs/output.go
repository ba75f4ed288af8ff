package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// writeJSON writes v as indented JSON and a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// formatResult renders a tool result for people: JSON (also a string that holds
// JSON) pretty-printed, other text as it is.
func formatResult(v any) string {
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
	if err := writeJSON(&buf, v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimRight(buf.String(), "\n")
}
