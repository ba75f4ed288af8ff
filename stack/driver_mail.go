package stack

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/mail"
	"github.com/mcs-go/mcs/middleware/auth"
)

func init() {
	RegisterDriverType(DriverType{
		Name:    "mail",
		Summary: "a mailbox over IMAP and sending over SMTP, draft then send (imap, smtp, tls, smtp_tls, username, from, credentials, mechanism, oauth, allow_recipients, max_recipients, sends_per_minute, timeout, max_body_bytes, attachment_dir, max_attachment_bytes, drafts_dir)",
		Decode:  decodeMail,
	})
}

// defaultDraftsDir is the directory, next to the stack file, where a mail
// driver that sends keeps its drafts when the table has no drafts_dir.
const defaultDraftsDir = "mcs-drafts"

var (
	_ DriverConfig = (*mailDriver)(nil)
	_ effecter     = (*mailDriver)(nil)
)

type mailDriver struct {
	cfg   mail.Config
	label string
	mode  string // the credentials key as written
	creds credentialSpec
}

// decodeMail reads a [[driver]] table of type "mail":
//
//	imap = "imap.example.com:993"
//	smtp = "smtp.example.com:587"
//	tls = "implicit"                 # "implicit" | "starttls" | "none" (loopback only)
//	smtp_tls = "starttls"            # optional: SMTP's own mode (default: tls)
//	username = "alice@example.com"
//	from = "Alice <alice@example.com>"
//	credentials = "env"              # password or app token from MCS_TOKEN_<LABEL>; "oauth": an OAuth access token (XOAUTH2); "none"
//	mechanism = "xoauth2"            # with "oauth": "xoauth2" (default) or "oauthbearer"
//	allow_recipients = ["*@example.com", "bob@partner.org"]
//	max_recipients = 10
//	sends_per_minute = 10
//	timeout = "30s"
//	max_body_bytes = 65536
//	attachment_dir = "./attachments" # save_attachment writes here; relative to the stack file
//	max_attachment_bytes = 10485760
//	drafts_dir = "./mcs-drafts"      # where drafts wait to be sent; relative to the stack file
//
// A driver that sends (smtp) keeps its drafts as files in drafts_dir, by
// default "mcs-drafts" next to the stack file, so that a send_draft approved
// later runs in another process (mcs approvals run) and finds the exact draft.
// With credentials = "oauth" the access token comes from MCS_TOKEN_<LABEL>
// unless a [driver.oauth] table configures a sign-in, as for a REST driver: the
// authorization code flow (client_id, authorize_url, token_url, scopes,
// token_store) or the device flow (device_auth_url in place of
// authorize_url), whose provider then obtains and refreshes the token.
func decodeMail(t *Table, label string) DriverConfig {
	d := &mailDriver{label: label}
	c := &d.cfg
	c.IMAPAddr = t.String("imap")
	c.SMTPAddr = t.String("smtp")
	if c.IMAPAddr == "" && c.SMTPAddr == "" {
		t.Errorf("", `has neither imap nor smtp; add imap = "imap.example.com:993" to read mail and smtp = "smtp.example.com:587" to send it`)
	}
	c.TLS = t.String("tls")
	if !t.Has("tls") {
		t.Errorf("", `has no tls; add tls = "implicit" (port 993/465) or "starttls" (port 143/587); "none" is allowed for a loopback server only`)
	}
	c.SMTPTLS = t.String("smtp_tls")
	c.Username = t.String("username")
	c.From = t.String("from")
	c.AllowRecipients = t.Strings("allow_recipients")
	if c.SMTPAddr != "" && !t.Has("allow_recipients") {
		t.Errorf("", `sends mail but has no allow_recipients; list who mail may go to, such as allow_recipients = ["*@example.com"] (["*"] allows everyone)`)
	}
	c.MaxRecipients = int(t.Int("max_recipients", 1, 1000))
	c.SendsPerMinute = int(t.Int("sends_per_minute", 1, 10000))
	c.Timeout = t.Duration("timeout")
	c.MaxBodyBytes = int(t.Int("max_body_bytes", 256, mail.MaxBodyBytes))
	c.AttachmentRoot = t.Path("attachment_dir")
	c.MaxAttachmentBytes = t.Int("max_attachment_bytes", 1, mail.MaxAttachmentBytes)
	c.DraftDir = t.Path("drafts_dir")
	if c.SMTPAddr == "" && c.DraftDir != "" {
		t.Errorf("drafts_dir", "is only used by a driver that sends mail; add smtp or remove drafts_dir")
	}
	if c.SMTPAddr != "" && c.DraftDir == "" {
		c.DraftDir = filepath.Join(t.Dir(), defaultDraftsDir)
	}
	c.Scope = label
	mode := t.String("credentials")
	d.mode = mode
	mech := t.String("mechanism")
	switch mode {
	case "", credentialsNone:
		if mech != "" {
			t.Errorf("mechanism", `is only used with credentials = %q; set that or remove mechanism`, credentialsOAuth)
		}
	case credentialsEnv:
		if mech != "" {
			t.Errorf("mechanism", `is only used with credentials = %q (an access token); with %q the secret is a password sent with PLAIN or LOGIN`, credentialsOAuth, credentialsEnv)
		}
		c.Mechanism = mail.MechPassword
	case credentialsOAuth:
		switch mech {
		case "", mail.MechXOAUTH2:
			c.Mechanism = mail.MechXOAUTH2
		case mail.MechOAuthBearer:
			c.Mechanism = mail.MechOAuthBearer
		default:
			t.Errorf("mechanism", "%q is not an OAuth mechanism; use %q or %q", mech, mail.MechXOAUTH2, mail.MechOAuthBearer)
		}
	default:
		t.Errorf("credentials", "%q is not a credential source of a mail driver; use %q (a password or app token in %s), %q (an OAuth access token, sent with XOAUTH2) or %q",
			mode, credentialsEnv, auth.EnvVarName(label), credentialsOAuth, credentialsNone)
	}
	if (mode == credentialsEnv || mode == credentialsOAuth) && c.Username == "" {
		t.Errorf("username", "is required with credentials = %q; set the account's login name, such as username = \"alice@example.com\"", mode)
	}
	if mode == credentialsOAuth && t.Has("oauth") {
		// The [driver.oauth] table signs in as for a REST driver: the
		// authorization code flow when it has authorize_url, else the device flow.
		flow := credentialsDevice
		if v, _ := t.get("oauth"); v != nil {
			if m, ok := v.(map[string]any); ok && m["authorize_url"] != nil {
				flow = credentialsOAuth
			}
		}
		d.creds = credentialSpec{mode: flow, label: label}
		d.creds.decodeOAuth(t)
	} else if mode == credentialsEnv || mode == credentialsOAuth {
		d.creds = credentialSpec{mode: credentialsEnv, label: label}
	}
	if mode != credentialsOAuth && t.Has("oauth") {
		t.Errorf("oauth", "is only used with credentials = %q; set that or remove the table", credentialsOAuth)
	}
	return d
}

func (d *mailDriver) config(ctx context.Context, b *Builder) (mail.Config, error) {
	cfg := d.cfg
	p, err := d.creds.provider(ctx, b)
	if err != nil {
		return cfg, err
	}
	cfg.Credentials = p
	return cfg, nil
}

// describe registers td's description of send_draft for the consent handler:
// the call's name is the tool's, or label__tool when the stack prefixes names.
func (d *mailDriver) describe(b *Builder, td *mail.ToolDriver) {
	prefix := ""
	if b.prefixed {
		prefix = d.label + "__"
	}
	b.describers = append(b.describers, func(name string, args map[string]any) map[string]any {
		tool, ok := strings.CutPrefix(name, prefix)
		if !ok {
			return args
		}
		return td.DescribeCall(tool, args)
	})
}

func (d *mailDriver) ToolDriver(ctx context.Context, b *Builder) (mcs.ToolDriver, error) {
	cfg, err := d.config(ctx, b)
	if err != nil {
		return nil, err
	}
	td, err := mail.NewToolDriver(cfg)
	if err != nil {
		return nil, err
	}
	d.describe(b, td)
	return td, nil
}

func (d *mailDriver) Driver(ctx context.Context, b *Builder, opts ...mcs.Option) (mcs.Driver, error) {
	cfg, err := d.config(ctx, b)
	if err != nil {
		return nil, err
	}
	drv, err := mail.New(cfg, opts...)
	if err != nil {
		return nil, err
	}
	d.describe(b, drv.Tools())
	return drv, nil
}

// effects declares the credential the driver sends to the servers the file
// names (EffectCredential) and the directories it writes: attachments, drafts
// and the device flow's token store (EffectWrite).
func (d *mailDriver) effects(e Effect) []Effect {
	var out []Effect
	switch d.creds.mode {
	case credentialsEnv:
		c := e
		c.Kind, c.Path, c.Env = EffectCredential, d.mode, []string{auth.EnvVarName(d.label)}
		out = append(out, c)
	case credentialsDevice, credentialsOAuth:
		c := e
		c.Kind, c.Path = EffectCredential, credentialsOAuth
		out = append(out, c)
	}
	if d.cfg.AttachmentRoot != "" {
		w := e
		w.Kind, w.Path = EffectWrite, d.cfg.AttachmentRoot
		out = append(out, w)
	}
	if d.cfg.DraftDir != "" {
		w := e
		w.Kind, w.Path = EffectWrite, d.cfg.DraftDir
		out = append(out, w)
	}
	if d.creds.store != "" {
		out = append(out, tokenStoreEffect(d.creds.store, e)...)
	}
	return out
}
