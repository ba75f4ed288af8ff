package mail

import (
	"context"
	"errors"
	"mime"
	"net"
	"net/mail"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/emersion/go-sasl"
	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs/middleware/auth"
)

func TestDraftThenSend(t *testing.T) {
	sm := startSMTP(t, nil)
	sm.secret = testPassword
	d := newTestDriver(t, nil, sm, nil)
	created := call(t, d, "create_draft", map[string]any{
		"to":      []any{`"Doe, Jane" <jane@example.com>, bob@partner.org`},
		"cc":      []any{"Carol <carol@example.com>"},
		"bcc":     []any{"audit@example.com"},
		"subject": "Quarterly numbers — draft",
		"body":    "Hello,\nthe numbers are attached.\n",
	})
	id := created["draft_id"].(string)
	want := map[string]any{
		"draft_id": id, "from": "Alice <alice@example.com>",
		"to":      []any{`"Doe, Jane" <jane@example.com>`, "bob@partner.org"},
		"cc":      []any{`"Carol" <carol@example.com>`},
		"bcc":     []any{"audit@example.com"},
		"subject": "Quarterly numbers — draft", "body": "Hello,\nthe numbers are attached.\n",
		"attachments": []any{},
	}
	if diff := cmp.Diff(want, created["draft"]); diff != "" {
		t.Errorf("preview (-want +got):\n%s", diff)
	}
	if created["sent"] != false || len(sm.messages()) != 0 {
		t.Fatalf("create_draft sent something: %v", sm.messages())
	}
	// The same content is the same draft; other content another one.
	again := call(t, d, "create_draft", map[string]any{
		"to": []any{`"Doe, Jane" <jane@example.com>, bob@partner.org`}, "cc": []any{"Carol <carol@example.com>"},
		"bcc": []any{"audit@example.com"}, "subject": "Quarterly numbers — draft", "body": "Hello,\nthe numbers are attached.\n",
	})
	other := call(t, d, "create_draft", map[string]any{"to": []any{"jane@example.com"}, "subject": "Quarterly numbers — draft", "body": "Hello!"})
	if again["draft_id"] != id || other["draft_id"] == id {
		t.Errorf("draft ids: %v, %v, %v", id, again["draft_id"], other["draft_id"])
	}
	if dr, ok := d.Draft(id); !ok || dr.Subject != "Quarterly numbers — draft" {
		t.Errorf("Draft(%s) = %v, %v", id, dr, ok)
	}

	sent := call(t, d, "send_draft", map[string]any{"draft_id": id})
	msgs := sm.messages()
	if len(msgs) != 1 {
		t.Fatalf("server received %d messages, want 1", len(msgs))
	}
	m := msgs[0]
	if diff := cmp.Diff([]string{"jane@example.com", "bob@partner.org", "carol@example.com", "audit@example.com"}, m.To); diff != "" {
		t.Errorf("envelope recipients (-want +got):\n%s", diff)
	}
	if m.From != "alice@example.com" {
		t.Errorf("envelope from = %q", m.From)
	}
	parsed, err := mail.ReadMessage(strings.NewReader(m.Data))
	if err != nil {
		t.Fatal(err)
	}
	if got := parsed.Header.Get("Message-Id"); got != sent["message_id"] || !strings.HasSuffix(got, "@example.com>") {
		t.Errorf("Message-ID header %q, result %v", got, sent["message_id"])
	}
	if parsed.Header.Get("Bcc") != "" {
		t.Errorf("the Bcc header went out: %q", parsed.Header.Get("Bcc"))
	}
	if subj, _ := new(mime.WordDecoder).DecodeHeader(parsed.Header.Get("Subject")); subj != "Quarterly numbers — draft" {
		t.Errorf("subject = %q", subj)
	}
	if to := parsed.Header.Get("To"); !strings.Contains(to, `"Doe, Jane" <jane@example.com>`) {
		t.Errorf("To = %q", to)
	}
	if len(sm.authList()) != 1 || sm.authList()[0] != "PLAIN alice@example.com app-token-1" {
		t.Errorf("auth = %v", sm.authList())
	}

	// Sending the same draft again does not send it twice.
	twice := call(t, d, "send_draft", map[string]any{"draft_id": id})
	if twice["sent"] != true || twice["message_id"] != sent["message_id"] || len(sm.messages()) != 1 {
		t.Errorf("second send = %v; %d messages", twice, len(sm.messages()))
	}
	if res := call(t, d, "discard_draft", map[string]any{"draft_id": other["draft_id"]}); res["discarded"] != true {
		t.Errorf("discard = %v", res)
	}
	if res := call(t, d, "send_draft", map[string]any{"draft_id": other["draft_id"]}); res["error"] != "no such draft" {
		t.Errorf("send after discard = %v", res)
	}
	if len(sm.messages()) != 1 {
		t.Errorf("a discarded draft was sent")
	}
}

func TestReplySetsThreadingHeaders(t *testing.T) {
	im := startIMAP(t, nil, nil)
	im.add(t, "INBOX", replyMsg)
	sm := startSMTP(t, nil)
	d := newTestDriver(t, im, sm, nil)
	created := call(t, d, "create_draft", map[string]any{"to": []any{"bob@partner.org"}, "subject": "Re: Lunch on Friday", "body": "See you.", "in_reply_to": "<lunch-3@partner.org>"})
	dr := created["draft"].(map[string]any)
	if dr["in_reply_to"] != "<lunch-3@partner.org>" || dr["references"] != "<lunch-1@partner.org> <lunch-2@example.com> <lunch-3@partner.org>" {
		t.Errorf("draft threading = %v / %v", dr["in_reply_to"], dr["references"])
	}
	call(t, d, "send_draft", map[string]any{"draft_id": created["draft_id"]})
	parsed, err := mail.ReadMessage(strings.NewReader(sm.messages()[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	if parsed.Header.Get("In-Reply-To") != "<lunch-3@partner.org>" || parsed.Header.Get("References") != "<lunch-1@partner.org> <lunch-2@example.com> <lunch-3@partner.org>" {
		t.Errorf("headers: %v", parsed.Header)
	}
}

func TestDraftRefusals(t *testing.T) {
	sm := startSMTP(t, nil)
	d := newTestDriver(t, nil, sm, func(c *Config) { c.MaxRecipients = 3 })
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"outside the allow list", map[string]any{"to": []any{"eve@evil.example"}, "subject": "s", "body": "b"},
			`recipient "eve@evil.example" is not allowed by allow_recipients (*@example.com, bob@partner.org)`},
		{"a subdomain is another domain", map[string]any{"to": []any{"x@mail.example.com"}, "subject": "s", "body": "b"}, "is not allowed"},
		{"outside in bcc", map[string]any{"to": []any{"jane@example.com"}, "bcc": []any{"eve@evil.example"}, "subject": "s", "body": "b"}, "eve@evil.example"},
		{"too many", map[string]any{"to": []any{"a@example.com, b@example.com", "c@example.com"}, "cc": []any{"d@example.com"}, "subject": "s", "body": "b"}, "4 recipients; at most 3"},
		{"CRLF in subject", map[string]any{"to": []any{"jane@example.com"}, "subject": "Hi\r\nBcc: eve@evil.example", "body": "b"}, "subject contains a line break"},
		{"LF in subject", map[string]any{"to": []any{"jane@example.com"}, "subject": "Hi\nX: y", "body": "b"}, "line break"},
		{"CRLF in to", map[string]any{"to": []any{"jane@example.com\r\nBcc: eve@evil.example"}, "subject": "s", "body": "b"}, "to contains a line break"},
		{"not an address", map[string]any{"to": []any{"jane at example"}, "subject": "s", "body": "b"}, "is not an address list"},
		{"unquoted comma name", map[string]any{"to": []any{"Doe, Jane <jane@example.com>"}, "subject": "s", "body": "b"}, "is not an address list"},
		{"no recipient", map[string]any{"to": []any{}, "subject": "s", "body": "b"}, "no recipient"},
		{"bad in_reply_to", map[string]any{"to": []any{"jane@example.com"}, "subject": "s", "body": "b", "in_reply_to": "lunch"}, "is not a Message-ID"},
		{"CR in in_reply_to", map[string]any{"to": []any{"jane@example.com"}, "subject": "s", "body": "b", "in_reply_to": "<a@b>\rX: y"}, "line break"},
		{"NUL in body", map[string]any{"to": []any{"jane@example.com"}, "subject": "s", "body": "a\x00b"}, "NUL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := callErr(t, d, "create_draft", tc.args)
			if !strings.Contains(err.Error(), tc.want) || !errors.Is(err, errRefused) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
	if n := len(sm.messages()); n != 0 {
		t.Errorf("%d messages sent", n)
	}
	if m := d.drafts.(*memDrafts); len(m.drafts) != 0 {
		t.Errorf("refused drafts were kept: %v", m.drafts)
	}
}

func TestRecipientParsing(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []string
	}{
		{[]string{`"Doe, Jane" <jane@example.com>`}, []string{"jane@example.com"}},
		{[]string{`"Doe, Jane" <jane@example.com>, "Roe, Rick" <rick@example.com>`}, []string{"jane@example.com", "rick@example.com"}},
		{[]string{"jane@example.com", "Rick <rick@example.com>"}, []string{"jane@example.com", "rick@example.com"}},
		{[]string{"=?utf-8?q?J=C3=B6rg?= <joerg@example.com>"}, []string{"joerg@example.com"}},
		{[]string{"  "}, nil},
	} {
		list, err := parseRecipients("to", tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		var got []string
		for _, a := range list {
			got = append(got, a.Address)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.in, diff)
		}
	}
	for _, tc := range []struct {
		allow []string
		addr  string
		want  bool
	}{
		{[]string{"*@example.com"}, "Jane@EXAMPLE.com", true},
		{[]string{"*@example.com"}, "jane@example.com.evil.org", false},
		{[]string{"*@example.com"}, "jane@sub.example.com", false},
		{[]string{"bob@partner.org"}, "BOB@partner.org", true},
		{[]string{"bob@partner.org"}, "bob2@partner.org", false},
		{nil, "jane@example.com", false},
		{[]string{"*"}, "anyone@anywhere.example", true},
	} {
		if got := allowed(tc.allow, tc.addr); got != tc.want {
			t.Errorf("allowed(%v, %q) = %v, want %v", tc.allow, tc.addr, got, tc.want)
		}
	}
}

func TestSendRateLimit(t *testing.T) {
	sm := startSMTP(t, nil)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	d := newTestDriver(t, nil, sm, func(c *Config) {
		c.SendsPerMinute = 2
		c.now = func() time.Time { return now }
	})
	send := func(body string) error {
		created := call(t, d, "create_draft", map[string]any{"to": []any{"jane@example.com"}, "subject": "s", "body": body})
		_, err := d.ExecuteTool(context.Background(), "send_draft", map[string]any{"draft_id": created["draft_id"]})
		return err
	}
	for i, body := range []string{"one", "two"} {
		if err := send(body); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	err := send("three")
	if !errors.Is(err, errRate) || !strings.Contains(err.Error(), "2 messages were sent in the last minute") {
		t.Errorf("third send: %v", err)
	}
	now = now.Add(time.Minute)
	if err := send("four"); err != nil {
		t.Errorf("after a minute: %v", err)
	}
	if n := len(sm.messages()); n != 3 {
		t.Errorf("%d messages sent, want 3", n)
	}
}

func TestConfigRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no server", Config{TLS: TLSImplicit}, "neither IMAPAddr nor SMTPAddr"},
		{"clear text off loopback", Config{IMAPAddr: "imap.example.com:143", TLS: TLSNone}, "without TLS is refused"},
		{"smtp clear text off loopback", Config{SMTPAddr: "192.0.2.1:25", TLS: TLSImplicit, SMTPTLS: TLSNone, From: "a@example.com"}, `SMTP server "192.0.2.1:25" without TLS is refused`},
		{"no tls mode", Config{IMAPAddr: "imap.example.com:993"}, "needs a TLS mode"},
		{"unknown tls", Config{IMAPAddr: "imap.example.com:993", TLS: "ssl"}, `TLS mode "ssl" is unknown`},
		{"no from", Config{SMTPAddr: "smtp.example.com:587", TLS: TLSStartTLS}, "sending needs From"},
		{"from with CRLF", Config{SMTPAddr: "smtp.example.com:587", TLS: TLSStartTLS, From: "a@example.com\r\nBcc: x@y"}, "control character"},
		{"bad rule", Config{SMTPAddr: "smtp.example.com:587", TLS: TLSStartTLS, From: "a@example.com", AllowRecipients: []string{"*.example.com"}}, "allow_recipients entry"},
		{"mechanism", Config{IMAPAddr: "imap.example.com:993", TLS: TLSImplicit, Mechanism: "cram-md5"}, "Mechanism"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewToolDriver(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := NewToolDriver(Config{IMAPAddr: "localhost:143", TLS: TLSNone}); err != nil {
		t.Errorf("loopback without TLS: %v", err)
	}
}

func TestSTARTTLS(t *testing.T) {
	server, client := testCert(t)
	im := startIMAP(t, nil, server)
	im.add(t, "INBOX", plainMsg)
	sm := startSMTP(t, server)
	d := newTestDriver(t, im, sm, func(c *Config) {
		c.TLS, c.TLSConfig = TLSStartTLS, client
	})
	if res := call(t, d, "list_messages", nil); res["count"] != 1.0 {
		t.Errorf("list over STARTTLS = %v", res)
	}
	created := call(t, d, "create_draft", map[string]any{"to": []any{"jane@example.com"}, "subject": "s", "body": "b"})
	call(t, d, "send_draft", map[string]any{"draft_id": created["draft_id"]})
	if len(sm.messages()) != 1 {
		t.Errorf("not sent over STARTTLS")
	}
	// A client that does not trust the certificate does not talk.
	d2 := newTestDriver(t, im, nil, func(c *Config) { c.TLS = TLSStartTLS })
	err := callErr(t, d2, "list_messages", nil)
	if !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate: %v", err)
	}
}

func TestImplicitTLS(t *testing.T) {
	server, client := testCert(t)
	im := serveIMAP(t, nil, server, true)
	im.add(t, "INBOX", plainMsg)
	d := newTestDriver(t, im, nil, func(c *Config) { c.TLS, c.TLSConfig = TLSImplicit, client })
	if res := call(t, d, "list_messages", nil); res["count"] != 1.0 {
		t.Errorf("list over implicit TLS = %v", res)
	}
	// Implicit TLS against a server that speaks plain IMAP fails, and says so.
	plain := startIMAP(t, nil, nil)
	d2 := newTestDriver(t, plain, nil, func(c *Config) { c.TLS, c.TLSConfig = TLSImplicit, client })
	err := callErr(t, d2, "list_messages", nil)
	if !strings.Contains(err.Error(), "imap: connecting to") {
		t.Errorf("plain server: %v", err)
	}
}

func TestXOAUTH2(t *testing.T) {
	sm := startSMTP(t, nil)
	sm.secret = "ya29.token"
	d := newTestDriver(t, nil, sm, func(c *Config) {
		c.Mechanism = MechXOAUTH2
		c.Credentials = staticCreds{"gmail": "ya29.token"}
		c.Scope = "gmail"
	})
	created := call(t, d, "create_draft", map[string]any{"to": []any{"jane@example.com"}, "subject": "s", "body": "b"})
	call(t, d, "send_draft", map[string]any{"draft_id": created["draft_id"]})
	if len(sm.messages()) != 1 || sm.authList()[0] != "XOAUTH2 alice@example.com ya29.token" {
		t.Errorf("auths %v, messages %d", sm.authList(), len(sm.messages()))
	}
	sm.setSecret("other")
	created = call(t, d, "create_draft", map[string]any{"to": []any{"jane@example.com"}, "subject": "s", "body": "b2"})
	err := callErr(t, d, "send_draft", map[string]any{"draft_id": created["draft_id"]})
	if !strings.Contains(err.Error(), "xoauth2 authentication") {
		t.Errorf("rejected token: %v", err)
	}
	if _, ok := d.Draft(created["draft_id"].(string)); !ok {
		t.Errorf("a draft that failed to send was dropped")
	}
}

func TestOAuthBearer(t *testing.T) {
	sm := startSMTP(t, nil)
	sm.setSecret("bearer-token")
	d := newTestDriver(t, nil, sm, func(c *Config) {
		c.Mechanism = MechOAuthBearer
		c.Credentials = staticCreds{"mail": "bearer-token"}
	})
	created := call(t, d, "create_draft", map[string]any{"to": []any{"jane@example.com"}, "subject": "s", "body": "b"})
	call(t, d, "send_draft", map[string]any{"draft_id": created["draft_id"]})
	if got := sm.authList(); len(got) != 1 || got[0] != "OAUTHBEARER alice@example.com bearer-token" || len(sm.messages()) != 1 {
		t.Errorf("auths %v, messages %d", got, len(sm.messages()))
	}
}

// oauthSession is an in-memory IMAP session that accepts only XOAUTH2 with
// one token.
type oauthSession struct {
	*imapmemserver.UserSession
	token string
	seen  *atomic.Value
}

func (s oauthSession) AuthenticateMechanisms() []string { return []string{"XOAUTH2"} }
func (s oauthSession) Authenticate(mech string) (sasl.Server, error) {
	return xoauth2Server(func(user, token string) error {
		s.seen.Store(user + " " + token)
		if token != s.token {
			return &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeAuthenticationFailed, Text: "invalid token"}
		}
		return nil
	}), nil
}

func TestIMAPXOAUTH2(t *testing.T) {
	user := imapmemserver.NewUser(testUser, "unused")
	user.Create("INBOX", nil)
	var seen atomic.Value
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return oauthSession{UserSession: imapmemserver.NewUserSession(user), token: "ya29.token", seen: &seen}, nil, nil
		},
		Caps: imap.CapSet{imap.CapIMAP4rev2: {}}, InsecureAuth: true, Logger: quiet,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); ln.Close(); <-done })

	token := "ya29.token"
	d := newTestDriver(t, &imapFixture{addr: ln.Addr().String()}, nil, func(c *Config) {
		c.Mechanism = MechXOAUTH2
		c.Credentials = credFunc(func() string { return token })
	})
	if res := call(t, d, "list_folders", nil); res["count"] != 1.0 {
		t.Errorf("folders = %v", res)
	}
	if seen.Load() != "alice@example.com ya29.token" {
		t.Errorf("server saw %v", seen.Load())
	}
	d2 := newTestDriver(t, &imapFixture{addr: ln.Addr().String()}, nil, func(c *Config) {
		c.Mechanism = MechXOAUTH2
		c.Credentials = staticCreds{"mail": "expired"}
	})
	err = callErr(t, d2, "list_folders", nil)
	if !strings.Contains(err.Error(), "xoauth2 authentication as \"alice@example.com\"") || !strings.Contains(err.Error(), "invalid token") {
		t.Errorf("rejected token: %v", err)
	}
}

// credFunc is a credential provider over a function.
type credFunc func() string

func (f credFunc) Token(context.Context, string) (string, error) { return f(), nil }

// TestChallengeReachesCaller checks that an auth challenge of the credential
// provider comes back wrapped, for the auth middleware.
func TestChallengeReachesCaller(t *testing.T) {
	sm := startSMTP(t, nil)
	d := newTestDriver(t, nil, sm, func(c *Config) { c.Credentials = challenger{} })
	created := call(t, d, "create_draft", map[string]any{"to": []any{"jane@example.com"}, "subject": "s", "body": "b"})
	_, err := d.ExecuteTool(context.Background(), "send_draft", map[string]any{"draft_id": created["draft_id"]})
	var ch *auth.Challenge
	if !errors.As(err, &ch) || ch.URL != "https://login.example.com/device" {
		t.Errorf("error = %v, want the challenge", err)
	}
	if len(sm.messages()) != 0 {
		t.Errorf("sent without credentials")
	}
}

type challenger struct{}

func (challenger) Token(context.Context, string) (string, error) {
	return "", &auth.Challenge{Message: "sign in", URL: "https://login.example.com/device"}
}
