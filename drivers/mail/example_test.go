package mail_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mcs-go/mcs/drivers/mail"
	"github.com/mcs-go/mcs/middleware/auth"
)

// The model reads a message, drafts a reply, is refused a recipient outside
// the allow list, and sends the draft. The servers are in-process, on
// loopback.
func Example() {
	imapAddr, smtpAddr, stop := exampleServers()
	defer stop()

	d, err := mail.New(mail.Config{
		IMAPAddr: imapAddr, SMTPAddr: smtpAddr,
		TLS:             mail.TLSNone, // loopback only
		Username:        "alice@example.com",
		From:            "Alice <alice@example.com>",
		Credentials:     auth.NewStaticProvider(map[string]string{"mail": "app-token"}),
		AllowRecipients: []string{"*@example.com"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()

	draftID := ""
	for _, reply := range []func() string{
		func() string { return `{"tool":"search_messages","arguments":{"from":"bob"}}` },
		func() string { return `{"tool":"fetch_message","arguments":{"uid":1,"max_bytes":40}}` },
		func() string {
			return `{"tool":"create_draft","arguments":{"to":["eve@evil.example"],"subject":"Fwd","body":"..."}}`
		},
		func() string {
			return `{"tool":"create_draft","arguments":{"to":["Bob <bob@example.com>"],"subject":"Re: Lunch","body":"Noon is fine.","in_reply_to":"<lunch-1@example.com>"}}`
		},
		func() string { return `{"tool":"send_draft","arguments":{"draft_id":"` + draftID + `"}}` },
	} {
		resp := d.ProcessLLMResponse(ctx, reply())
		for _, c := range resp.Calls {
			if c.Err != nil {
				fmt.Println(c.Name, "failed:", c.Err)
				continue
			}
			m := c.Result.(map[string]any)
			switch c.Name {
			case "search_messages":
				fmt.Println(c.Name, "found", m["count"])
			case "fetch_message":
				fmt.Printf("%s %q\n", c.Name, m["body"])
			case "create_draft":
				draftID = m["draft_id"].(string)
				fmt.Print(c.Name, " ")
				enc := json.NewEncoder(os.Stdout)
				enc.SetEscapeHTML(false)
				enc.Encode(m["draft"])
			case "send_draft":
				fmt.Println(c.Name, "sent", m["sent"], strings.HasSuffix(m["message_id"].(string), "@example.com>"))
			}
		}
	}
	// Output:
	// search_messages found 1
	// fetch_message "Shall we meet at noon? Or at one?\r\n"
	// create_draft failed: create_draft: refused: recipient "eve@evil.example" is not allowed by allow_recipients (*@example.com); mail can go only to those addresses and domains, which the operator sets
	// create_draft {"draft_id":"draft-c0ea9e3c7b2be7710a3b4cd44d4d2997","from":"Alice <alice@example.com>","to":["\"Bob\" <bob@example.com>"],"subject":"Re: Lunch","body":"Noon is fine.","in_reply_to":"<lunch-1@example.com>","references":"<lunch-1@example.com>","attachments":[]}
	// send_draft sent true true
}

// exampleServers starts an IMAP server with one message in INBOX and an SMTP
// server that accepts everything.
func exampleServers() (imapAddr, smtpAddr string, stop func()) {
	mem := imapmemserver.New()
	user := imapmemserver.NewUser("alice@example.com", "app-token")
	user.Create("INBOX", nil)
	raw := "From: Bob <bob@example.com>\r\nTo: alice@example.com\r\nSubject: Lunch\r\nMessage-ID: <lunch-1@example.com>\r\n\r\nShall we meet at noon? Or at one?\r\n"
	user.Append("INBOX", literal{strings.NewReader(raw), int64(len(raw))}, &imap.AppendOptions{})
	mem.AddUser(user)
	is := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev2: {}},
		InsecureAuth: true,
		Logger:       log.New(io.Discard, "", 0),
	})
	il, _ := net.Listen("tcp", "127.0.0.1:0")
	go is.Serve(il)

	ss := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return acceptAll{}, nil }))
	ss.AllowInsecureAuth = true
	sl, _ := net.Listen("tcp", "127.0.0.1:0")
	go ss.Serve(sl)
	return il.Addr().String(), sl.Addr().String(), func() { is.Close(); il.Close(); ss.Close(); sl.Close() }
}

type literal struct {
	io.Reader
	n int64
}

func (l literal) Size() int64 { return l.n }

// acceptAll is an SMTP session that takes any login and any message.
type acceptAll struct{}

func (acceptAll) Reset()                               {}
func (acceptAll) Logout() error                        { return nil }
func (acceptAll) Mail(string, *smtp.MailOptions) error { return nil }
func (acceptAll) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (acceptAll) Data(r io.Reader) error               { _, err := io.Copy(io.Discard, r); return err }
func (acceptAll) AuthMechanisms() []string             { return []string{"PLAIN"} }
func (acceptAll) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, _, _ string) error { return nil }), nil
}

// A draft made by one driver is sent by another on the same DraftDir, as an
// approval run later in another process does; the draft's file is gone once
// it was sent.
func ExampleConfig_draftDir() {
	_, smtpAddr, stop := exampleServers()
	defer stop()
	dir, err := os.MkdirTemp("", "drafts")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := mail.Config{
		SMTPAddr: smtpAddr, TLS: mail.TLSNone,
		From: "Alice <alice@example.com>", AllowRecipients: []string{"*@example.com"},
		DraftDir: dir,
	}
	ctx := context.Background()

	first, err := mail.NewToolDriver(cfg)
	if err != nil {
		log.Fatal(err)
	}
	res, err := first.ExecuteTool(ctx, "create_draft", map[string]any{"to": []any{"bob@example.com"}, "subject": "Minutes", "body": "Here they are."})
	if err != nil {
		log.Fatal(err)
	}
	first.Close()
	id := res.(map[string]any)["draft_id"].(string)
	files, _ := os.ReadDir(dir)
	fmt.Println("files waiting:", len(files), files[0].Name() == id)

	second, err := mail.NewToolDriver(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer second.Close()
	dr, _ := second.Draft(id)
	fmt.Println("the new driver shows:", dr.To, dr.Subject)
	res, err = second.ExecuteTool(ctx, "send_draft", map[string]any{"draft_id": id})
	if err != nil {
		log.Fatal(err)
	}
	files, _ = os.ReadDir(dir)
	fmt.Println("sent:", res.(map[string]any)["sent"], "files waiting:", len(files))
	// Output:
	// files waiting: 1 true
	// the new driver shows: [bob@example.com] Minutes
	// sent: true files waiting: 0
}
