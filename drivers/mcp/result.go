package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcs-go/mcs/internal/textcut"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// resultValue is what the model gets of a successful call: the text content
// joined by newlines, with every other content summarised in one line; the
// structured content when there is neither; "" for an empty result.
func resultValue(res *mcpsdk.CallToolResult) any {
	text, hasText, summaries := contentText(res.Content)
	if !hasText && res.StructuredContent != nil {
		if len(summaries) == 0 {
			return res.StructuredContent
		}
		b, err := json.Marshal(res.StructuredContent)
		if err == nil {
			text = strings.Join(append(summaries, string(b)), "\n")
			return cut(text)
		}
	}
	return cut(text)
}

// contentText joins the content: text as is, everything else as a summary line.
func contentText(content []mcpsdk.Content) (text string, hasText bool, summaries []string) {
	var lines []string
	for _, c := range content {
		switch x := c.(type) {
		case *mcpsdk.TextContent:
			hasText = true
			lines = append(lines, x.Text)
		default:
			s := summarize(c)
			summaries = append(summaries, s)
			lines = append(lines, s)
		}
	}
	return strings.Join(lines, "\n"), hasText, summaries
}

// summarize describes non-text content in one line, never with its data.
func summarize(c mcpsdk.Content) string {
	switch x := c.(type) {
	case *mcpsdk.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes]", orUnknown(x.MIMEType), len(x.Data))
	case *mcpsdk.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(x.MIMEType), len(x.Data))
	case *mcpsdk.ResourceLink:
		s := "[resource link: " + oneLine(x.URI)
		if x.MIMEType != "" {
			s += ", " + oneLine(x.MIMEType)
		}
		if x.Size != nil {
			s += fmt.Sprintf(", %d bytes", *x.Size)
		}
		if x.Name != "" {
			s += ", " + oneLine(x.Name)
		}
		return s + "]"
	case *mcpsdk.EmbeddedResource:
		r := x.Resource
		if r == nil {
			return "[resource]"
		}
		size := len(r.Blob)
		if r.Text != "" {
			size = len(r.Text)
		}
		return fmt.Sprintf("[resource: %s, %s, %d bytes]", oneLine(r.URI), orUnknown(r.MIMEType), size)
	case nil:
		return "[empty content]"
	default:
		return fmt.Sprintf("[%T content]", c)
	}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return oneLine(mime)
}

// oneLine keeps a server's string on one short line.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > 200 {
		s = textcut.Prefix(s, 200) + "..."
	}
	return s
}

// cut bounds the text a call returns.
func cut(s string) string {
	if len(s) <= MaxResultBytes {
		return s
	}
	kept := textcut.Prefix(s, MaxResultBytes)
	return kept + fmt.Sprintf("\n[... %d more bytes cut]", len(s)-len(kept))
}
