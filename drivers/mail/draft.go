package mail

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	gomail "github.com/emersion/go-message/mail"
)

// Limits of a draft.
const (
	maxBodyChars    = 1 << 20 // bytes of a draft's body
	maxHeaderChars  = 998     // bytes of one header value the model writes (RFC 5322 line limit)
	maxReferenceIDs = 20      // Message-IDs kept in References
)

// Draft is a message create_draft prepared: everything send_draft would send.
// Its ID is derived from its content (a SHA-256 over every field below), so a
// draft cannot change under its id: new content is a new draft with a new id,
// and an approval of send_draft {draft_id} binds to the content. Attachments is
// always empty: the driver does not attach files to mail it sends.
type Draft struct {
	ID          string   `json:"draft_id"`
	From        string   `json:"from"`
	To          []string `json:"to"`
	Cc          []string `json:"cc,omitempty"`
	Bcc         []string `json:"bcc,omitempty"`
	Subject     string   `json:"subject"`
	Body        string   `json:"body"`
	InReplyTo   string   `json:"in_reply_to,omitempty"`
	References  string   `json:"references,omitempty"`
	Attachments []string `json:"attachments"`
}

// recipients returns the envelope recipients: To, Cc and Bcc addresses.
func (d Draft) recipients() []string {
	var out []string
	for _, list := range [][]string{d.To, d.Cc, d.Bcc} {
		for _, s := range list {
			if a, err := mail.ParseAddress(s); err == nil {
				out = append(out, a.Address)
			}
		}
	}
	return out
}

// draftID is the content hash of d, without its ID.
func draftID(d Draft) string {
	d.ID = ""
	b, _ := json.Marshal(d)
	sum := sha256.Sum256(b)
	return "draft-" + hex.EncodeToString(sum[:16])
}

// hasCtl reports whether s has a control character (CR, LF, NUL, ...).
func hasCtl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// checkHeader refuses a header value the model wrote that could break the
// header block.
func checkHeader(field, v string) error {
	switch {
	case strings.ContainsAny(v, "\r\n"):
		return fmt.Errorf("%w: %s contains a line break (CR or LF), which could add headers to the message; write it on one line", errRefused, field)
	case hasCtl(v):
		return fmt.Errorf("%w: %s contains a control character; remove it", errRefused, field)
	case !utf8.ValidString(v):
		return fmt.Errorf("%w: %s is not valid UTF-8", errRefused, field)
	case len(v) > maxHeaderChars:
		return fmt.Errorf("%w: %s is %d bytes long; at most %d", errRefused, field, len(v), maxHeaderChars)
	}
	return nil
}

// parseRecipients parses the entries of one recipient field; each entry is an
// address or a list of them ("\"Doe, Jane\" <jane@example.com>, bob@example.com").
func parseRecipients(field string, entries []string) ([]*mail.Address, error) {
	var out []*mail.Address
	for _, e := range entries {
		if err := checkHeader(field, e); err != nil {
			return nil, err
		}
		if strings.TrimSpace(e) == "" {
			continue
		}
		list, err := mail.ParseAddressList(e)
		if err != nil {
			return nil, fmt.Errorf("%w: %s entry %q is not an address list (%v); write addresses as \"name@example.com\" or \"Name <name@example.com>\", a display name with a comma in double quotes", errRefused, field, e, err)
		}
		out = append(out, list...)
	}
	return out, nil
}

// allowed reports whether addr matches a rule of allow.
func allowed(allow []string, addr string) bool {
	addr = strings.ToLower(addr)
	at := strings.LastIndexByte(addr, '@')
	for _, r := range allow {
		r = strings.ToLower(r)
		switch {
		case r == "*":
			return true
		case strings.HasPrefix(r, "*@"):
			if at >= 0 && addr[at+1:] == r[2:] {
				return true
			}
		case r == addr:
			return true
		}
	}
	return false
}

// draftInput is what create_draft takes.
type draftInput struct {
	To, Cc, Bcc []string
	Subject     string
	Body        string
	InReplyTo   string
}

// newDraft checks in and makes the draft, looking up the message answered (for
// References) when the driver reads mail.
func (d *ToolDriver) newDraft(ctx context.Context, in draftInput) (Draft, error) {
	dr := Draft{From: d.cfg.From, Attachments: []string{}}
	if err := checkHeader("subject", in.Subject); err != nil {
		return Draft{}, err
	}
	dr.Subject = in.Subject
	if strings.ContainsRune(in.Body, 0) || !utf8.ValidString(in.Body) {
		return Draft{}, fmt.Errorf("%w: body contains a NUL byte or is not valid UTF-8", errRefused)
	}
	if len(in.Body) > maxBodyChars {
		return Draft{}, fmt.Errorf("%w: body is %d bytes long; at most %d", errRefused, len(in.Body), maxBodyChars)
	}
	dr.Body = in.Body
	total := 0
	seen := map[string]bool{}
	for _, f := range []struct {
		name    string
		entries []string
		into    *[]string
	}{{"to", in.To, &dr.To}, {"cc", in.Cc, &dr.Cc}, {"bcc", in.Bcc, &dr.Bcc}} {
		list, err := parseRecipients(f.name, f.entries)
		if err != nil {
			return Draft{}, err
		}
		for _, a := range list {
			if !allowed(d.cfg.AllowRecipients, a.Address) {
				return Draft{}, fmt.Errorf("%w: recipient %q is not allowed by allow_recipients (%s); mail can go only to those addresses and domains, which the operator sets", errRefused, a.Address, allowList(d.cfg.AllowRecipients))
			}
			key := strings.ToLower(a.Address)
			if seen[key] {
				continue
			}
			seen[key] = true
			total++
			shown := a.Address
			if a.Name != "" {
				shown = a.String()
			}
			*f.into = append(*f.into, shown)
		}
	}
	if len(dr.To) == 0 {
		return Draft{}, fmt.Errorf("%w: the draft has no recipient in to", errRefused)
	}
	if total > d.cfg.MaxRecipients {
		return Draft{}, fmt.Errorf("%w: the draft has %d recipients; at most %d (max_recipients)", errRefused, total, d.cfg.MaxRecipients)
	}
	if in.InReplyTo != "" {
		id := strings.TrimSpace(in.InReplyTo)
		if err := checkHeader("in_reply_to", id); err != nil {
			return Draft{}, err
		}
		if !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, ">") || strings.ContainsAny(id[1:len(id)-1], "<> \t") || !strings.Contains(id, "@") {
			return Draft{}, fmt.Errorf("%w: in_reply_to %q is not a Message-ID; pass the message_id of the message answered, such as \"<abc@example.com>\"", errRefused, in.InReplyTo)
		}
		dr.InReplyTo = id
		dr.References = d.references(ctx, id)
	}
	dr.ID = draftID(dr)
	return dr, nil
}

// references returns the References of a reply to id: the References of the
// message answered when it is in INBOX, then id.
func (d *ToolDriver) references(ctx context.Context, id string) string {
	var ids []string
	if d.store != nil {
		if uids, err := d.store.search(ctx, "INBOX", criteria{MessageID: id}); err == nil && len(uids) > 0 {
			if m, err := d.store.message(ctx, "INBOX", uids[len(uids)-1]); err == nil {
				ids = strings.Fields(m.References)
			}
		}
	}
	ids = slices.DeleteFunc(ids, func(s string) bool { return s == id || !strings.HasPrefix(s, "<") })
	ids = append(ids, id)
	if len(ids) > maxReferenceIDs {
		ids = append(ids[:1], ids[len(ids)-maxReferenceIDs+1:]...)
	}
	return strings.Join(ids, " ")
}

func allowList(allow []string) string {
	if len(allow) == 0 {
		return "empty: no recipient is allowed"
	}
	return strings.Join(allow, ", ")
}

// build returns the message of d as it goes out, with its Message-ID.
func (d Draft) build(now time.Time) (msg []byte, messageID string, err error) {
	var h gomail.Header
	from, err := mail.ParseAddress(d.From)
	if err != nil {
		return nil, "", err
	}
	h.SetAddressList("From", []*gomail.Address{from})
	for _, f := range []struct {
		key  string
		list []string
	}{{"To", d.To}, {"Cc", d.Cc}} {
		if len(f.list) == 0 {
			continue
		}
		var as []*gomail.Address
		for _, s := range f.list {
			a, err := mail.ParseAddress(s)
			if err != nil {
				return nil, "", err
			}
			as = append(as, a)
		}
		h.SetAddressList(f.key, as)
	}
	h.SetSubject(d.Subject)
	h.SetDate(now)
	var rnd [12]byte
	rand.Read(rnd[:])
	domain := from.Address[strings.LastIndexByte(from.Address, '@')+1:]
	id := hex.EncodeToString(rnd[:]) + "." + strings.TrimPrefix(d.ID, "draft-")[:12] + "@" + domain
	h.SetMessageID(id)
	if d.InReplyTo != "" {
		h.Set("In-Reply-To", d.InReplyTo)
		h.Set("References", d.References)
	}
	h.Set("MIME-Version", "1.0")
	h.SetContentType("text/plain", map[string]string{"charset": "utf-8"})
	h.Set("Content-Transfer-Encoding", "quoted-printable")
	var buf bytes.Buffer
	w, err := gomail.CreateSingleInlineWriter(&buf, h)
	if err != nil {
		return nil, "", err
	}
	body := strings.ReplaceAll(strings.ReplaceAll(d.Body, "\r\n", "\n"), "\n", "\r\n")
	if _, err := w.Write([]byte(body)); err != nil {
		return nil, "", err
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), "<" + id + ">", nil
}

// errRate is wrapped by the error of a send over the rate limit.
var errRate = errors.New("rate limit")
