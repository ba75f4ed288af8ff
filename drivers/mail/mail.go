package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/emersion/go-sasl"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/confine"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/tools"
)

const version = "0.1.0"

// Defaults and bounds of [Config].
const (
	DefaultTimeout        = 30 * time.Second
	DefaultMaxRecipients  = 10
	DefaultSendsPerMinute = 10
	DefaultMaxBodyBytes   = 64 << 10
	// MaxBodyBytes is the most text fetch_message returns, whatever max_bytes
	// or Config.MaxBodyBytes say.
	MaxBodyBytes              = 1 << 20
	DefaultMaxAttachmentBytes = 10 << 20
	// MaxAttachmentBytes is the largest Config.MaxAttachmentBytes.
	MaxAttachmentBytes = 100 << 20
	// MaxListMessages is the most messages list_messages and search_messages
	// return per call.
	MaxListMessages = 100
	// MaxParts and MaxDepth bound the MIME structure of a message the driver
	// reads: a message with more parts, or parts nested deeper, is refused.
	MaxParts = 500
	MaxDepth = 20
	// MaxDrafts is the most drafts a driver keeps at once.
	MaxDrafts = 100
)

// Authentication mechanisms of [Config].Mechanism.
const (
	MechPassword    = "password"    // IMAP LOGIN, SMTP AUTH PLAIN; the secret is a password or app token
	MechXOAUTH2     = "xoauth2"     // SASL XOAUTH2 (Gmail, Outlook); the secret is an OAuth access token
	MechOAuthBearer = "oauthbearer" // SASL OAUTHBEARER (RFC 7628); the secret is an OAuth access token
)

// Config configures a mail driver. It is plain data.
type Config struct {
	// IMAPAddr is the IMAP server, "host:port". Empty: no reading tools.
	IMAPAddr string
	// SMTPAddr is the SMTP submission server, "host:port". Empty: no sending
	// tools.
	SMTPAddr string
	// TLS is how the IMAP connection (and the SMTP one, unless SMTPTLS is set)
	// is protected: TLSImplicit, TLSStartTLS, or TLSNone, which is allowed only
	// for a loopback address. Required.
	TLS string
	// SMTPTLS overrides TLS for SMTP (IMAP on 993 with implicit TLS, SMTP
	// submission on 587 with STARTTLS is common).
	SMTPTLS string
	// TLSConfig is the TLS configuration (root CAs); nil: the system's roots.
	// The server name is taken from the address when the config does not set
	// one.
	TLSConfig *tls.Config
	// Username is the account's login name.
	Username string
	// From is the sender of the mail the driver sends, "Name <addr>" or an
	// address. Required for sending.
	From string
	// Credentials provides the secret for Username: Credentials.Token(ctx,
	// Scope). nil: the driver does not log in (a test server or a relay that
	// trusts the host). A *auth.Challenge it returns reaches the auth
	// middleware.
	Credentials auth.CredentialProvider
	// Scope is the credential scope asked for; default "mail".
	Scope string
	// Mechanism is how the secret is used: MechPassword (default), MechXOAUTH2
	// or MechOAuthBearer.
	Mechanism string
	// AllowRecipients lists who mail may go to: addresses ("bob@example.org")
	// and domains ("*@example.com"), compared without case. Empty: every
	// recipient is refused, so the driver cannot send until the operator says
	// where mail may go; ["*"] allows everyone.
	AllowRecipients []string
	// MaxRecipients caps To, Cc and Bcc together; default DefaultMaxRecipients.
	MaxRecipients int
	// SendsPerMinute caps the mail sent per minute; default
	// DefaultSendsPerMinute.
	SendsPerMinute int
	// Timeout bounds every network operation; default DefaultTimeout.
	Timeout time.Duration
	// MaxBodyBytes is the default and cap of fetch_message's max_bytes; default
	// DefaultMaxBodyBytes, at most MaxBodyBytes.
	MaxBodyBytes int
	// AttachmentRoot, when set, publishes save_attachment, which writes one
	// attachment into this directory (confined to it, never overwriting).
	AttachmentRoot string
	// DraftDir, when set, keeps every draft as a file in this directory
	// (created 0700 with the first draft; one file per draft, named by its id,
	// 0600), so that a draft outlives the driver that made it: send_draft in
	// another process (an approval run later) sends exactly that draft. A file
	// whose content does not match its id is never sent. Empty: drafts live in
	// the driver's memory and end with it.
	DraftDir string
	// MaxAttachmentBytes caps an attachment save_attachment writes; default
	// DefaultMaxAttachmentBytes, at most MaxAttachmentBytes.
	MaxAttachmentBytes int64

	structure structureLimits
	now       func() time.Time
}

// credentials is how the driver logs in.
type credentials struct {
	provider auth.CredentialProvider
	scope    string
	mech     string
}

func (c credentials) secret(ctx context.Context) (string, error) {
	s, err := c.provider.Token(ctx, c.scope)
	if err != nil {
		return "", fmt.Errorf("mail: the credential for scope %q: %w", c.scope, err)
	}
	return s, nil
}

// sasl returns the SASL client of the mechanism for an OAuth token or, for
// MechPassword, PLAIN.
func (c credentials) sasl(user, secret, addr string) sasl.Client {
	switch c.mech {
	case MechXOAUTH2:
		return xoauth2{user: user, token: secret}
	case MechOAuthBearer:
		host, port, _ := net.SplitHostPort(addr)
		p := 0
		fmt.Sscan(port, &p)
		return sasl.NewOAuthBearerClient(&sasl.OAuthBearerOptions{Username: user, Token: secret, Host: host, Port: p})
	}
	return sasl.NewPlainClient("", user, secret)
}

// xoauth2 is the SASL XOAUTH2 client (Google's and Microsoft's mechanism for
// OAuth 2.0 bearer tokens).
type xoauth2 struct{ user, token string }

func (x xoauth2) Start() (string, []byte, error) {
	return "XOAUTH2", []byte("user=" + x.user + "\x01auth=Bearer " + x.token + "\x01\x01"), nil
}

// Next answers an error challenge (a JSON status) with an empty response, as
// the mechanism asks; the server then fails the exchange with its message.
func (x xoauth2) Next([]byte) ([]byte, error) { return []byte{}, nil }

// validate checks cfg and fills in the defaults.
func (cfg *Config) validate() error {
	if cfg.IMAPAddr == "" && cfg.SMTPAddr == "" {
		return errors.New("mail: neither IMAPAddr nor SMTPAddr is set; set at least one")
	}
	if cfg.SMTPTLS == "" {
		cfg.SMTPTLS = cfg.TLS
	}
	for _, a := range []struct{ what, addr, mode string }{{"IMAP server", cfg.IMAPAddr, cfg.TLS}, {"SMTP server", cfg.SMTPAddr, cfg.SMTPTLS}} {
		if a.addr == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			return fmt.Errorf("mail: %s address %q is not host:port: %w", a.what, a.addr, err)
		}
		if err := checkTLS(a.what, a.mode, a.addr); err != nil {
			return err
		}
	}
	if hasCtl(cfg.Username) {
		return errors.New("mail: Username contains a control character")
	}
	if cfg.SMTPAddr != "" {
		if cfg.From == "" {
			return errors.New("mail: sending needs From, the sender's address (\"Alice <alice@example.com>\")")
		}
		if hasCtl(cfg.From) {
			return errors.New("mail: From contains a control character (CR or LF could add headers)")
		}
		if _, err := mail.ParseAddress(cfg.From); err != nil {
			return fmt.Errorf("mail: From %q is not an address: %w", cfg.From, err)
		}
		for _, r := range cfg.AllowRecipients {
			if err := checkAllowRule(r); err != nil {
				return err
			}
		}
	}
	switch cfg.Mechanism {
	case "":
		cfg.Mechanism = MechPassword
	case MechPassword, MechXOAUTH2, MechOAuthBearer:
	default:
		return fmt.Errorf("mail: Mechanism %q is unknown; use %q, %q or %q", cfg.Mechanism, MechPassword, MechXOAUTH2, MechOAuthBearer)
	}
	if cfg.Credentials != nil && cfg.Username == "" {
		return errors.New("mail: Credentials are set but Username is empty; set the account's login name")
	}
	if cfg.Scope == "" {
		cfg.Scope = "mail"
	}
	if cfg.MaxRecipients < 0 || cfg.SendsPerMinute < 0 || cfg.MaxBodyBytes < 0 || cfg.MaxAttachmentBytes < 0 || cfg.Timeout < 0 {
		return errors.New("mail: MaxRecipients, SendsPerMinute, MaxBodyBytes, MaxAttachmentBytes and Timeout must not be negative")
	}
	if cfg.MaxRecipients == 0 {
		cfg.MaxRecipients = DefaultMaxRecipients
	}
	if cfg.SendsPerMinute == 0 {
		cfg.SendsPerMinute = DefaultSendsPerMinute
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxBodyBytes > MaxBodyBytes {
		return fmt.Errorf("mail: MaxBodyBytes is %d; at most %d", cfg.MaxBodyBytes, MaxBodyBytes)
	}
	if cfg.MaxAttachmentBytes == 0 {
		cfg.MaxAttachmentBytes = DefaultMaxAttachmentBytes
	}
	if cfg.MaxAttachmentBytes > MaxAttachmentBytes {
		return fmt.Errorf("mail: MaxAttachmentBytes is %d; at most %d", cfg.MaxAttachmentBytes, MaxAttachmentBytes)
	}
	if cfg.structure == (structureLimits{}) {
		cfg.structure = structureLimits{depth: MaxDepth, parts: MaxParts}
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	return nil
}

// checkAllowRule validates one AllowRecipients entry.
func checkAllowRule(r string) error {
	switch {
	case r == "*":
		return nil
	case strings.HasPrefix(r, "*@") && len(r) > 2 && !strings.ContainsAny(r[2:], "@*"):
		return nil
	case !strings.Contains(r, "*"):
		a, err := mail.ParseAddress(r)
		if err == nil && a.Name == "" && strings.EqualFold(a.Address, r) {
			return nil
		}
	}
	return fmt.Errorf("mail: allow_recipients entry %q is neither an address (\"bob@example.org\"), a domain (\"*@example.com\") nor \"*\"", r)
}

// ToolDriver is the technical half of the mail driver: the reading tools over
// one IMAP connection and the drafting and sending tools over SMTP. It is safe
// for concurrent use; IMAP operations run one at a time on the one connection,
// which is opened on first use and opened again after it broke.
//
// It publishes, in this order and when the server they need is configured,
// list_folders, list_messages, search_messages, fetch_message, move_message,
// set_flags, save_attachment (with AttachmentRoot), then create_draft,
// send_draft and discard_draft. The reading tools are annotated read-only;
// send_draft is annotated destructive and open-world.
type ToolDriver struct {
	*toolTable
	cfg    Config
	store  store
	creds  credentials
	drafts draftStore
	sent   sentLog
	limit  *rateLimiter
	root   *confine.Root
	sender sender
}

type toolTable = tools.Table

var (
	_ mcs.ToolDriver                     = (*ToolDriver)(nil)
	_ mcs.SupportsHealthcheck            = (*ToolDriver)(nil)
	_ mcs.SupportsHealthcheck            = (*Driver)(nil)
	_ mcs.ToolLookup                     = (*ToolDriver)(nil)
	_ mcs.ToolDefiner                    = (*ToolDriver)(nil)
	_ interface{ ToolsVersion() uint64 } = (*ToolDriver)(nil)
)

// NewToolDriver validates cfg and returns the tool driver. It does not connect:
// the first call of a tool does. It fails for a configuration without a server,
// with a TLS mode of none for a server that is not on loopback, with an
// unknown mechanism, a From that is not an address, an AllowRecipients entry
// that is neither an address nor a domain, or an AttachmentRoot that is not a
// directory.
func NewToolDriver(cfg Config) (*ToolDriver, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	d := &ToolDriver{cfg: cfg, creds: credentials{provider: cfg.Credentials, scope: cfg.Scope, mech: cfg.Mechanism}}
	d.drafts = newMemDrafts()
	if cfg.DraftDir != "" {
		dir := filepath.Clean(cfg.DraftDir)
		if st, err := os.Stat(dir); err == nil && !st.IsDir() {
			return nil, fmt.Errorf("mail: DraftDir %s is not a directory", dir)
		}
		d.drafts = &dirDrafts{dir: dir}
	}
	d.limit = &rateLimiter{n: cfg.SendsPerMinute, window: time.Minute, now: cfg.now}
	if cfg.IMAPAddr != "" {
		d.store = &imapStore{cfg: &d.cfg, creds: d.creds, turn: make(chan struct{}, 1)}
	}
	if cfg.SMTPAddr != "" {
		d.sender = &smtpSender{cfg: &d.cfg, creds: d.creds}
	}
	if cfg.AttachmentRoot != "" {
		root, err := confine.Open(filepath.Clean(cfg.AttachmentRoot))
		if err != nil {
			return nil, fmt.Errorf("mail: AttachmentRoot: %w", err)
		}
		d.root = root
	}
	d.toolTable = tools.New(mcs.Meta{
		ID:       "mcs-go/mail",
		Name:     "Mail",
		Version:  version,
		Bindings: []mcs.Binding{{Capability: "mail", Adapter: "imap+smtp", SpecFormat: "builtin"}},
	})
	d.addTools()
	return d, nil
}

// ExecuteTool runs the named tool. A message, draft or folder the model named
// wrongly is a result with an error and a hint; the call fails for an unknown
// tool, invalid arguments, refused input (a header with CR or LF, a recipient
// outside AllowRecipients, too many recipients, a date that does not parse, a
// message whose MIME structure is too large), the rate limit, and network and
// server errors. Errors begin with the tool name. A *auth.Challenge from the
// credential provider is wrapped, for the auth middleware.
func (d *ToolDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	return d.toolTable.ExecuteTool(ctx, name, args)
}

// Draft returns the draft id as create_draft showed it, and whether the driver
// holds it (in memory, or in [Config].DraftDir, where it may have been made by
// another driver or process): for a consent handler or an approver that wants
// to see what send_draft {draft_id} would send. It is false for an id not of
// the driver's form, and for a draft file whose content does not match its id.
// See [ToolDriver.DescribeCall].
func (d *ToolDriver) Draft(id string) (Draft, bool) {
	if !validDraftID(id) {
		return Draft{}, false
	}
	dr, err := d.drafts.get(id)
	return dr, err == nil
}

// DescribeCall returns args with, for a call of send_draft, the whole draft
// added under "draft", so that a consent prompt shows exactly what would go
// out; other calls get args as they are. tool is the driver's own tool name:
// a caller that sees namespaced names ("mail__send_draft") strips its prefix
// first. The result is a new map; args is not modified.
func (d *ToolDriver) DescribeCall(tool string, args map[string]any) map[string]any {
	if tool != "send_draft" || d.sender == nil {
		return args
	}
	id, _ := args["draft_id"].(string)
	out := mcs.CloneArgs(args)
	switch dr, err := d.drafts.get(id); {
	case !validDraftID(id):
		out["draft"] = "not a draft id: the call will fail"
	case err == nil:
		out["draft"] = dr
	case errors.Is(err, errNoDraft):
		out["draft"] = "no such draft: the call will fail"
	default:
		out["draft"] = "the draft cannot be read (" + err.Error() + "): the call will fail"
	}
	return out
}

// Meta returns the driver's data sheet: ID "mcs-go/mail", binding
// {mail, imap+smtp, builtin}, capabilities orchestratable and healthcheck.
func (d *ToolDriver) Meta() mcs.Meta { return mcs.DeriveCapabilities(d.toolTable.Meta(), d) }

// Healthcheck connects to the servers the driver uses: IMAP (the driver's
// connection, opened when needed, answers NOOP) and SMTP (a connection that
// says hello, logs in and quits without sending). The result is OK when both
// answer, ERROR naming the server otherwise. It honours ctx.
func (d *ToolDriver) Healthcheck(ctx context.Context) mcs.HealthResult {
	var problems, ok []string
	if d.store != nil {
		if err := d.store.noop(ctx); err != nil {
			problems = append(problems, err.Error())
		} else {
			ok = append(ok, "IMAP "+d.cfg.IMAPAddr)
		}
	}
	if d.sender != nil {
		if err := d.sender.check(ctx); err != nil {
			problems = append(problems, err.Error())
		} else {
			ok = append(ok, "SMTP "+d.cfg.SMTPAddr)
		}
	}
	if len(problems) > 0 {
		return mcs.HealthResult{Status: mcs.HealthError, Detail: strings.Join(problems, "; ")}
	}
	return mcs.HealthResult{Status: mcs.HealthOK, Detail: strings.Join(ok, ", ") + " answered"}
}

// Close closes the IMAP connection, the attachment root and the drafts
// directory. Drafts in a DraftDir stay there.
func (d *ToolDriver) Close() error {
	errs := []error{d.drafts.close()}
	if d.store != nil {
		errs = append(errs, d.store.close())
	}
	if d.root != nil {
		errs = append(errs, d.root.Close())
	}
	return errors.Join(errs...)
}

// Driver is the complete mail driver: the [ToolDriver] with the LLM-facing half
// of [mcs.BaseDriver]. It is safe for concurrent use.
type Driver struct {
	*mcs.BaseDriver
	tools *ToolDriver
}

var _ mcs.Driver = (*Driver)(nil)

// New returns a Driver over a new ToolDriver for cfg, configured by opts. It
// fails as NewToolDriver does.
func New(cfg Config, opts ...mcs.Option) (*Driver, error) {
	td, err := NewToolDriver(cfg)
	if err != nil {
		return nil, err
	}
	return &Driver{BaseDriver: mcs.NewBaseDriver(td, opts...), tools: td}, nil
}

// Meta returns the BaseDriver's meta with the healthcheck capability.
func (d *Driver) Meta() mcs.Meta { return mcs.DeriveCapabilities(d.BaseDriver.Meta(), d) }

// Healthcheck is the tool driver's [ToolDriver.Healthcheck].
func (d *Driver) Healthcheck(ctx context.Context) mcs.HealthResult { return d.tools.Healthcheck(ctx) }

// Tools returns the tool driver, for [ToolDriver.Draft] and
// [ToolDriver.DescribeCall].
func (d *Driver) Tools() *ToolDriver { return d.tools }

// Close closes the tool driver.
func (d *Driver) Close() error { return d.tools.Close() }
