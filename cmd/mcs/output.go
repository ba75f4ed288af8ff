package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mcs-go/mcs/cmd/mcs/internal/calls"
)

// writeJSON writes v as indented JSON and a newline.
func writeJSON(w io.Writer, v any) error { return calls.WriteJSON(w, v) }

// formatResult renders a tool result for people: JSON (also a string that holds
// JSON) pretty-printed, other text as it is, safe for a terminal (see safeText).
func formatResult(v any) string { return safeText(calls.Pretty(v)) }

// safeText makes text from a driver (tool names and descriptions from a spec,
// results from an API, model replies) safe to print on a terminal: control
// characters other than line feed and tab, DEL and the C1 controls, which could
// move the cursor or rewrite what is shown, are written as \u escapes; invalid
// UTF-8 becomes U+FFFD.
func safeText(s string) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if unsafeRune(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f)
}
