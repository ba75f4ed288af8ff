package stack

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/mail"
)

const mailStack = `[[driver]]
label = "mail"
type = "mail"
imap = "127.0.0.1:1143"
smtp = "127.0.0.1:1587"
tls = "none"
username = "alice@example.com"
from = "Alice <alice@example.com>"
credentials = "env"
allow_recipients = ["*@example.com", "bob@partner.org"]
max_recipients = 5
`

func TestMailKeys(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       string // "" for no error
	}{
		{"complete", mailStack, ""},
		{"no server", "[[driver]]\nlabel = \"m\"\ntype = \"mail\"\ntls = \"implicit\"\n", "has neither imap nor smtp"},
		{"no tls", "[[driver]]\nlabel = \"m\"\ntype = \"mail\"\nimap = \"imap.example.com:993\"\n", "has no tls"},
		{"no allow list", "[[driver]]\nlabel = \"m\"\ntype = \"mail\"\nsmtp = \"smtp.example.com:587\"\ntls = \"starttls\"\nfrom = \"a@example.com\"\n", "has no allow_recipients"},
		{"bad credentials", mailStack + "credentials = \"device\"\n", `"device" is not a credential source of a mail driver`},
		{"mechanism without oauth", mailStack + "mechanism = \"xoauth2\"\n", "mechanism"},
		{"oauth needs username", "[[driver]]\nlabel = \"m\"\ntype = \"mail\"\nimap = \"imap.example.com:993\"\ntls = \"implicit\"\ncredentials = \"oauth\"\n", "username"},
		{"unknown key", mailStack + "password = \"x\"\n", "password"},
		{"oauth from the environment", strings.Replace(mailStack, `credentials = "env"`, `credentials = "oauth"`, 1), ""},
		{"oauth with the device flow", strings.Replace(mailStack, `credentials = "env"`, `credentials = "oauth"
mechanism = "oauthbearer"`, 1) + "[driver.oauth]\nclient_id = \"c\"\ndevice_auth_url = \"https://login.example.com/device\"\ntoken_url = \"https://login.example.com/token\"\nscopes = [\"https://mail.example.com/\"]\n", ""},
		{"device flow incomplete", strings.Replace(mailStack, `credentials = "env"`, `credentials = "oauth"`, 1) + "[driver.oauth]\nclient_id = \"c\"\n", "device_auth_url"},
		{"oauth table without oauth", mailStack + "[driver.oauth]\nclient_id = \"c\"\n", `only used with credentials = "oauth"`},
		{"drafts_dir without smtp", "[[driver]]\nlabel = \"m\"\ntype = \"mail\"\nimap = \"imap.example.com:993\"\ntls = \"implicit\"\ndrafts_dir = \"d\"\n", "drafts_dir"},
		{"unknown mechanism", strings.Replace(mailStack, `credentials = "env"`, `credentials = "oauth"
mechanism = "plain"`, 1), "not an OAuth mechanism"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if tc.name == "bad credentials" || tc.name == "mechanism without oauth" {
				file = strings.Replace(file, "credentials = \"env\"\n", "", 1)
			}
			_, err := Parse("s.toml", []byte(file))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Parse: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Parse error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestMailBuildTLSRefused(t *testing.T) {
	file := strings.Replace(mailStack, "127.0.0.1:1143", "imap.example.com:143", 1)
	s, err := Parse("s.toml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Build(context.Background()); err == nil || !strings.Contains(err.Error(), "without TLS is refused") {
		t.Errorf("Build: %v", err)
	}
}

// TestMailConsentShowsDraft builds a mail stack whose permission middleware
// asks, and checks that the question about send_draft {draft_id} carries the
// whole draft, alone and behind an orchestrator.
func TestMailConsentShowsDraft(t *testing.T) {
	for _, tc := range []struct {
		name, extra, prefix string
	}{
		{"alone", "", ""},
		{"orchestrated", "[[driver]]\nlabel = \"t\"\ntype = \"csv\"\nroot = \".\"\n", "mail__"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Parse(filepath.Join(dir, "s.toml"), []byte(mailStack+tc.extra+"[middleware.permission]\nallow = [\"*create_draft\"]\nask = true\n"))
			if err != nil {
				t.Fatal(err)
			}
			var shown []map[string]any
			s.Host.Consent = func(_ context.Context, name string, args map[string]any) (bool, error) {
				shown = append(shown, args)
				return false, nil
			}
			d, err := s.Build(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			td := d.(mcs.ToolDriver)
			ctx := context.Background()
			res, err := td.ExecuteTool(ctx, tc.prefix+"create_draft", map[string]any{"to": []any{"bob@partner.org"}, "subject": "Hi", "body": "Hello Bob"})
			if err != nil {
				t.Fatal(err)
			}
			id := res.(map[string]any)["draft_id"].(string)
			res, err = td.ExecuteTool(ctx, tc.prefix+"send_draft", map[string]any{"draft_id": id})
			if err != nil || mcs.CodeOf(res, nil) != mcs.CodeDenied {
				t.Fatalf("send_draft = %v, %v; want the denial", res, err)
			}
			if len(shown) != 1 {
				t.Fatalf("asked %d times", len(shown))
			}
			dr, ok := shown[0]["draft"].(mail.Draft)
			if !ok {
				t.Fatalf("the question shows %v, no draft", shown[0])
			}
			want := mail.Draft{ID: id, From: "Alice <alice@example.com>", To: []string{"bob@partner.org"}, Subject: "Hi", Body: "Hello Bob", Attachments: []string{}}
			if diff := cmp.Diff(want, dr); diff != "" {
				t.Errorf("draft shown (-want +got):\n%s", diff)
			}
			// The draft waits in mcs-drafts next to the stack file.
			if _, err := os.Stat(filepath.Join(dir, "mcs-drafts", id)); err != nil {
				t.Errorf("the draft is not in the default drafts directory: %v", err)
			}
		})
	}
}

func TestMailEffects(t *testing.T) {
	s, err := Parse("s.toml", []byte(mailStack+"attachment_dir = \"att\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Effect{
		{Kind: EffectCredential, Table: `[[driver]] "mail"`, Line: 1, Path: "env", Env: []string{"MCS_TOKEN_MAIL"}},
		{Kind: EffectWrite, Table: `[[driver]] "mail"`, Line: 1, Path: "att"},
		{Kind: EffectWrite, Table: `[[driver]] "mail"`, Line: 1, Path: "mcs-drafts"},
	}
	if diff := cmp.Diff(want, s.Effects()); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
	s, err = Parse(filepath.Join("conf", "s.toml"), []byte(strings.Replace(mailStack, `credentials = "env"`, `credentials = "none"`, 1)+"drafts_dir = \"../outbox\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	want = []Effect{{Kind: EffectWrite, Table: `[[driver]] "mail"`, Line: 1, Path: "outbox"}}
	if diff := cmp.Diff(want, s.Effects()); diff != "" {
		t.Errorf("a mail driver without credentials, drafts_dir set (-want +got):\n%s", diff)
	}
	s, err = Parse("s.toml", []byte("[[driver]]\nlabel = \"mail\"\ntype = \"mail\"\nimap = \"127.0.0.1:1143\"\ntls = \"none\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if e := s.Effects(); len(e) != 0 {
		t.Errorf("a mail driver that only reads, without credentials: %v", e)
	}
	s, err = Parse("s.toml", []byte(strings.Replace(mailStack, `credentials = "env"`, `credentials = "oauth"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	want = []Effect{
		{Kind: EffectCredential, Table: `[[driver]] "mail"`, Line: 1, Path: "oauth", Env: []string{"MCS_TOKEN_MAIL"}},
		{Kind: EffectWrite, Table: `[[driver]] "mail"`, Line: 1, Path: "mcs-drafts"},
	}
	if diff := cmp.Diff(want, s.Effects()); diff != "" {
		t.Errorf("oauth effects (-want +got):\n%s", diff)
	}
}
