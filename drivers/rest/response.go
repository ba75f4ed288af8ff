package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"mime"
	"net/http"
	"regexp"
	"strings"

	"github.com/mcs-go/mcs/internal/textcut"
)

// maxSummaryTitle bounds the page title an HTML summary quotes.
const maxSummaryTitle = 120

// isHTML reports whether a response is an HTML page: its Content-Type says so,
// or, without a usable one, its body starts like a page.
func isHTML(contentType string, body []byte) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err == nil {
		switch mt {
		case "text/html", "application/xhtml+xml":
			return true
		}
		if mt != "text/plain" && mt != "application/octet-stream" {
			return false
		}
	}
	head := bytes.ToLower(bytes.TrimLeft(body[:min(len(body), 512)], " \t\r\n\ufeff"))
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html"))
}

var (
	titleRE = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
	h1RE    = regexp.MustCompile(`(?is)<h1[^>]*>(.*?)</h1>`)
	tagRE   = regexp.MustCompile(`(?s)<[^>]*>`)
)

// summarizeHTML describes an HTML page in one line, without its markup:
// `HTML page "<title>" (<n> bytes), not shown`. The title is the page's title,
// else its first h1, tags removed, entities decoded, white space collapsed and
// cut at maxSummaryTitle characters. size is the size of the whole body; more
// says it was larger than what was read.
func summarizeHTML(body []byte, size int, more bool) string {
	title := ""
	for _, re := range []*regexp.Regexp{titleRE, h1RE} {
		if m := re.FindSubmatch(body); m != nil {
			title = oneLine(html.UnescapeString(tagRE.ReplaceAllString(string(m[1]), " ")))
			if title != "" {
				break
			}
		}
	}
	n := fmt.Sprintf("%d bytes", size)
	if more {
		n = fmt.Sprintf("more than %d bytes", size)
	}
	if title == "" {
		return fmt.Sprintf("HTML page (%s), not shown", n)
	}
	if len([]rune(title)) > maxSummaryTitle {
		title = string([]rune(title)[:maxSummaryTitle-3]) + "..."
	}
	return fmt.Sprintf("HTML page %q (%s), not shown", title, n)
}

// oneLine collapses every run of white space (line breaks included) into one
// space and trims the ends.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// errorMessage returns the human message of a JSON error body, in the shapes
// common APIs use: {"message": ...} (GitHub), {"error": {"message": ...}}
// (Stripe, Google), {"error": "...", "error_description": ...} (OAuth),
// {"detail": ...} and {"title": ...} (RFC 9457 problem details), and
// {"errors": [{"message": ...}]}. "" when the body is not JSON or has none.
func errorMessage(body []byte) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	return oneLine(findMessage(v, 0))
}

func findMessage(v any, depth int) string {
	if depth > 3 {
		return ""
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"message", "error_description", "detail", "title", "error", "errors", "msg", "description"} {
			switch e := x[k].(type) {
			case string:
				if strings.TrimSpace(e) != "" {
					if k == "error" {
						if d, ok := x["error_description"].(string); ok && d != "" {
							return e + ": " + d
						}
					}
					return e
				}
			case map[string]any, []any:
				if m := findMessage(e, depth+1); m != "" {
					return m
				}
			}
		}
	case []any:
		if len(x) > 0 {
			return findMessage(x[0], depth+1)
		}
	}
	return ""
}

// errorBody is the text a StatusError quotes for a failed response: a one-line
// summary of an HTML page; compact JSON for a JSON body (so that more of it
// fits); otherwise the body. It also returns the message of a JSON body. The
// caller redacts and cuts the text.
func errorBody(resp *http.Response, data []byte, more bool) (text, message string) {
	ct := resp.Header.Get("Content-Type")
	if isHTML(ct, data) {
		return summarizeHTML(data, len(data), more), ""
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		var buf bytes.Buffer
		if json.Compact(&buf, trimmed) == nil {
			return buf.String(), textcut.Prefix(errorMessage(trimmed), maxErrorBody)
		}
	}
	return string(data), ""
}
