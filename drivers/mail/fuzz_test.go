package mail

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzHTMLText: whatever the HTML, the text is within the bound and valid
// UTF-8 when the HTML is.
func FuzzHTMLText(f *testing.F) {
	for _, s := range []string{
		"<p>a</p><script>x</script>",
		"<div hidden><p>secret</p></div>shown",
		"<a href='javascript:x'>l</a><img alt='i'>",
		"<pre>  a\n b</pre><ul><li>x<li>y</ul>",
		"<style>p{}</style><<<>>>&amp;&#x41;&bogus;",
		strings.Repeat("<div>", 1000) + "deep",
	} {
		f.Add(s, 64)
	}
	f.Fuzz(func(t *testing.T, src string, max int) {
		max = max%4096 + 4096 // 1 to 8191
		out := htmlText(src, max)
		if len(out) > max {
			t.Fatalf("%d bytes, more than %d", len(out), max)
		}
		if !utf8.ValidString(out) && utf8.ValidString(src) {
			t.Fatalf("invalid UTF-8 from valid input: %q", out)
		}
	})
}

// FuzzDecodeTransfer: broken encodings never fail and never grow the data.
func FuzzDecodeTransfer(f *testing.F) {
	f.Add([]byte("aGVsbG8=\r\nd29y"), "base64")
	f.Add([]byte("a=3D=\r\nb=ZZ="), "quoted-printable")
	f.Fuzz(func(t *testing.T, raw []byte, enc string) {
		for _, e := range []string{"base64", "quoted-printable", enc} {
			if out := decodeTransfer(raw, e); len(out) > len(raw) {
				t.Fatalf("%s: %d bytes from %d", e, len(out), len(raw))
			}
		}
	})
}

// FuzzDecodeDraft: whatever a draft file holds, it is refused or it is a
// draft whose content hashes to its name.
func FuzzDecodeDraft(f *testing.F) {
	d := Draft{From: "Alice <alice@example.com>", To: []string{"bob@example.com"}, Subject: "s", Body: "b", Attachments: []string{}}
	d.ID = draftID(d)
	good, _ := json.Marshal(d)
	f.Add(d.ID, good)
	f.Add(d.ID, []byte(`{"draft_id":"`+d.ID+`","to":[]}`))
	f.Add("draft-0", []byte("{}"))
	f.Fuzz(func(t *testing.T, id string, data []byte) {
		got, err := decodeDraft(id, data)
		if err != nil {
			if !errors.Is(err, errDamaged) {
				t.Fatalf("error %v is not errDamaged", err)
			}
			return
		}
		if got.ID != id || draftID(got) != id || len(got.To) == 0 {
			t.Fatalf("accepted %+v under %q", got, id)
		}
	})
}
