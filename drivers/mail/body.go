package mail

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"io"
	"mime/quotedprintable"
	"net/textproto"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/emersion/go-message/charset"
	"golang.org/x/net/html"

	"github.com/mcs-go/mcs/internal/textcut"
)

// clean makes a header value the server sent fit to show: control characters
// become spaces, invalid UTF-8 is replaced, and it is cut to max bytes.
func clean(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	return textcut.Prefix(strings.TrimSpace(s), max)
}

// headerValue returns the value of field in a header block, unfolded and
// cleaned; "" when it is missing or the block does not parse.
func headerValue(block []byte, field string) string {
	r := textproto.NewReader(bufio.NewReader(io.MultiReader(bytes.NewReader(block), strings.NewReader("\r\n\r\n"))))
	h, err := r.ReadMIMEHeader()
	if err != nil && len(h) == 0 {
		return ""
	}
	return clean(h.Get(field), 8000)
}

// decodeTransfer undoes the transfer encoding of a part that may be cut short:
// what decodes is kept.
func decodeTransfer(raw []byte, encoding string) []byte {
	switch encoding {
	case "base64":
		clean := make([]byte, 0, len(raw))
		for _, b := range raw {
			if b != '\r' && b != '\n' && b != ' ' && b != '\t' {
				clean = append(clean, b)
			}
		}
		clean = bytes.TrimRight(clean, "=")
		if len(clean)%4 == 1 { // a cut in the middle of a group
			clean = clean[:len(clean)-1]
		}
		out := make([]byte, base64.RawStdEncoding.DecodedLen(len(clean)))
		n, _ := base64.RawStdEncoding.Decode(out, clean)
		return out[:n]
	case "quoted-printable":
		out, _ := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
		return out
	}
	return raw
}

// decodeCharset converts text in the named charset to UTF-8. An unknown
// charset is read as UTF-8; bytes that are not UTF-8 become U+FFFD. It reports
// whether the charset was known.
func decodeCharset(b []byte, name string) (string, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	known := true
	if name != "" && name != "utf-8" && name != "us-ascii" && name != "utf8" {
		r, err := charset.Reader(name, bytes.NewReader(b))
		if err == nil {
			if out, err := io.ReadAll(r); err == nil || len(out) > 0 {
				b = out
			}
		} else {
			known = false
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), known
}

// htmlText reduces HTML to text through an allow-list: text, line breaks for
// block elements, list bullets, link targets (http, https and mailto only) and
// image alt text. Everything else (scripts, styles, forms, comments, hidden
// elements, attributes) is dropped. The result is at most max bytes.
func htmlText(src string, max int) string {
	z := html.NewTokenizer(strings.NewReader(src))
	var b strings.Builder
	skip := 0 // depth inside elements whose content is dropped
	var skipTag []string
	pre := 0
	href := []string{}
	space := true // the output ends with white space
	write := func(s string) {
		if b.Len() < max+utf8.UTFMax {
			b.WriteString(s)
		}
	}
	newline := func() {
		s := b.String()
		if !strings.HasSuffix(s, "\n") && len(s) > 0 {
			write("\n")
		}
		space = true
	}
	for b.Len() <= max {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		tok := z.Token()
		name := tok.Data
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			if skip > 0 {
				if tt == html.StartTagToken && !voidElement(name) {
					skipTag = append(skipTag, name)
					skip++
				}
				continue
			}
			if droppedElement(name) || hidden(tok) {
				if tt == html.StartTagToken && !voidElement(name) {
					skipTag = append(skipTag, name)
					skip++
				}
				continue
			}
			switch name {
			case "br":
				write("\n")
				space = true
			case "li":
				newline()
				write("- ")
			case "img":
				if alt := attr(tok, "alt"); alt != "" {
					write("[image: " + clean(alt, 200) + "]")
					space = false
				}
			case "a":
				href = append(href, safeLink(attr(tok, "href")))
			case "pre":
				pre++
				newline()
			default:
				if blockElement(name) {
					newline()
				}
			}
		case html.EndTagToken:
			if skip > 0 {
				if n := len(skipTag); n > 0 && skipTag[n-1] == name {
					skipTag = skipTag[:n-1]
					skip--
				}
				continue
			}
			switch {
			case name == "a" && len(href) > 0:
				if h := href[len(href)-1]; h != "" {
					write(" (" + h + ")")
				}
				href = href[:len(href)-1]
			case name == "pre":
				pre = max0(pre - 1)
				newline()
			case blockElement(name) || name == "li":
				newline()
			}
		case html.TextToken:
			if skip > 0 {
				continue
			}
			text := tok.Data
			if pre > 0 {
				write(text)
				space = strings.HasSuffix(text, "\n")
				continue
			}
			for _, w := range strings.FieldsFunc(text, unicode.IsSpace) {
				if !space {
					write(" ")
				}
				write(w)
				space = false
			}
			if len(text) > 0 && unicode.IsSpace(rune(text[len(text)-1])) {
				space = true
				if !strings.HasSuffix(b.String(), "\n") && !strings.HasSuffix(b.String(), " ") && b.Len() > 0 {
					write(" ")
				}
			}
		}
	}
	return textcut.Prefix(collapseBlankLines(b.String()), max)
}

func max0(n int) int { return max(n, 0) }

func collapseBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	blank := 0
	for _, l := range lines {
		l = strings.TrimRight(l, " ")
		if l == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

func attr(t html.Token, key string) string {
	for _, a := range t.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// hidden reports whether an element is hidden from a reader of the mail (a
// place to hide instructions for a model).
func hidden(t html.Token) bool {
	for _, a := range t.Attr {
		switch a.Key {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(a.Val, "true") {
				return true
			}
		case "style":
			s := strings.ToLower(strings.ReplaceAll(a.Val, " ", ""))
			if strings.Contains(s, "display:none") || strings.Contains(s, "visibility:hidden") || strings.Contains(s, "font-size:0") || strings.Contains(s, "opacity:0") {
				return true
			}
		}
	}
	return false
}

func safeLink(h string) string {
	h = strings.TrimSpace(h)
	l := strings.ToLower(h)
	if strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "mailto:") {
		return clean(h, 500)
	}
	return ""
}

func droppedElement(name string) bool {
	switch name {
	case "script", "style", "head", "title", "noscript", "template", "svg", "math", "iframe", "object", "embed", "form", "select", "textarea", "button", "canvas", "audio", "video":
		return true
	}
	return false
}

func voidElement(name string) bool {
	switch name {
	case "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr":
		return true
	}
	return false
}

func blockElement(name string) bool {
	switch name {
	case "p", "div", "table", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "blockquote", "hr", "section", "article", "header", "footer", "address", "dl", "dt", "dd", "center":
		return true
	}
	return false
}
