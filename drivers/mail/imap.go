package mail

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// store is what the read tools need of a mailbox: the driver's own small
// interface in front of the IMAP library, so that the library (a long-lived
// beta) is used in this one file.
type store interface {
	folders(ctx context.Context) ([]folderInfo, error)
	// search returns the UIDs of the messages of folder that match c, ascending.
	search(ctx context.Context, folder string, c criteria) ([]uint32, error)
	// summaries returns the summaries of the messages uids of folder, in the
	// order of uids; a UID that does not exist is left out.
	summaries(ctx context.Context, folder string, uids []uint32) ([]summary, error)
	// message returns the envelope, flags, size, References and structure of
	// one message; errNoMessage when it does not exist.
	message(ctx context.Context, folder string, uid uint32) (*messageMeta, error)
	// section returns at most max bytes of one part (its transfer encoding
	// still applied) without setting \Seen; part nil is the body of a message
	// that is not multipart.
	section(ctx context.Context, folder string, uid uint32, part []int, max int64) ([]byte, error)
	// move moves one message and says how: "MOVE" or "COPY+UID EXPUNGE".
	move(ctx context.Context, folder string, uid uint32, dest string) (string, error)
	// setFlags adds and removes flags and returns the flags the message has.
	setFlags(ctx context.Context, folder string, uid uint32, add, remove []string) ([]string, error)
	// noop checks the connection (opening it when needed).
	noop(ctx context.Context) error
	close() error
}

// errNoMessage is returned for a UID the folder does not have.
var errNoMessage = errors.New("no such message")

type folderInfo struct {
	Name       string   `json:"name"`
	Attributes []string `json:"attributes,omitempty"`
}

// criteria is a typed IMAP SEARCH: every field narrows the result.
type criteria struct {
	From, To, Subject, Text []string
	Since, Before           time.Time
	Unseen, Flagged         bool
	MaxUID                  uint32 // 0: no bound; else only UIDs <= MaxUID
	MessageID               string // a Message-ID header to match
}

type summary struct {
	UID       uint32    `json:"uid"`
	Date      time.Time `json:"date,omitzero"`
	From      []string  `json:"from,omitempty"`
	To        []string  `json:"to,omitempty"`
	Subject   string    `json:"subject"`
	Flags     []string  `json:"flags"`
	Size      int64     `json:"size"`
	MessageID string    `json:"message_id,omitempty"`
}

type messageMeta struct {
	summary
	Cc         []string
	ReplyTo    []string
	InReplyTo  string
	References string
	Structure  *part
}

// part is one node of a message's MIME structure, as the server describes it.
type part struct {
	Path        []int
	Type        string // "text/plain"
	Charset     string
	Encoding    string
	Disposition string
	Filename    string
	Size        int64
	Children    []*part
}

// structureLimits bound the MIME structure the driver accepts.
type structureLimits struct {
	depth, parts int
}

// errStructure is wrapped by the error for a message whose structure exceeds
// the limits (a MIME bomb).
var errStructure = errors.New("message structure refused")

// convertStructure turns the library's body structure into parts, refusing a
// structure deeper or wider than lim.
func convertStructure(bs imap.BodyStructure, lim structureLimits) (*part, error) {
	count := 0
	var conv func(bs imap.BodyStructure, path []int, depth int) (*part, error)
	conv = func(bs imap.BodyStructure, path []int, depth int) (*part, error) {
		count++
		if count > lim.parts {
			return nil, fmt.Errorf("%w: it has more than %d MIME parts", errStructure, lim.parts)
		}
		if depth > lim.depth {
			return nil, fmt.Errorf("%w: its MIME parts are nested more than %d levels deep", errStructure, lim.depth)
		}
		p := &part{Path: path, Type: strings.ToLower(bs.MediaType())}
		switch s := bs.(type) {
		case *imap.BodyStructureMultiPart:
			for i, c := range s.Children {
				cp, err := conv(c, append(slices.Clip(path), i+1), depth+1)
				if err != nil {
					return nil, err
				}
				p.Children = append(p.Children, cp)
			}
		case *imap.BodyStructureSinglePart:
			p.Charset = s.Params["charset"]
			p.Encoding = strings.ToLower(s.Encoding)
			p.Size = int64(s.Size)
			p.Filename = s.Filename()
			if d := s.Disposition(); d != nil {
				p.Disposition = strings.ToLower(d.Value)
			}
		}
		return p, nil
	}
	if bs == nil {
		return nil, fmt.Errorf("%w: the server sent no structure", errStructure)
	}
	root, err := conv(bs, nil, 0)
	if err != nil {
		return nil, err
	}
	// The single part of a message that is not multipart is its body: path nil.
	return root, nil
}

// imapStore is the store over one IMAP connection, opened when first needed
// and opened again after it broke. Operations run one at a time; a call whose
// ctx ends while it waits for its turn gives up.
type imapStore struct {
	cfg   *Config
	creds credentials

	turn     chan struct{} // holds a token while an operation runs
	c        *imapclient.Client
	conn     *budgetConn
	selected string
}

var _ store = (*imapStore)(nil)

// Bytes the server may send for an operation besides the data asked for.
const overheadBudget = 4 << 20

// do runs f on the connection within the driver's timeout and ctx, allowing
// the server budget bytes. The connection is dropped (and opened again by the
// next call) when it failed or ctx ended, not when the server answered NO or
// BAD.
func (s *imapStore) do(ctx context.Context, budget int64, f func(c *imapclient.Client) error) error {
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("imap: waiting for the connection: %w", context.Cause(ctx))
	}
	defer func() { <-s.turn }()
	ctx, cancel := context.WithTimeoutCause(ctx, s.cfg.Timeout, fmt.Errorf("the IMAP server %s did not answer within %s", s.cfg.IMAPAddr, s.cfg.Timeout))
	defer cancel()
	if s.c != nil {
		select {
		case <-s.c.Closed():
			s.drop()
		default:
		}
	}
	if s.c == nil {
		if err := s.connect(ctx); err != nil {
			return err
		}
	}
	s.conn.reset(budget + overheadBudget)
	c := s.c
	stop := context.AfterFunc(ctx, func() { c.Close() })
	err := f(c)
	if !stop() {
		s.drop()
		return fmt.Errorf("imap: %w", context.Cause(ctx))
	}
	if err != nil {
		var ie *imap.Error
		if !errors.As(err, &ie) && !errors.Is(err, errNoMessage) && !errors.Is(err, errStructure) && !errors.Is(err, errRefused) {
			over := s.conn != nil && s.conn.set.Load() && s.conn.left.Load() <= 0
			s.drop()
			if over || errors.Is(err, errBudget) {
				return fmt.Errorf("imap: %w; the connection was closed", errBudget)
			}
			return fmt.Errorf("imap: the connection to %s failed: %w; the next call connects again", s.cfg.IMAPAddr, err)
		}
	}
	return err
}

// drop closes the connection; the next operation opens a new one.
func (s *imapStore) drop() {
	if s.c != nil {
		s.c.Close()
	}
	s.c, s.conn, s.selected = nil, nil, ""
}

func (s *imapStore) connect(ctx context.Context) error {
	conn, err := dial(ctx, s.cfg.IMAPAddr, s.cfg.TLS, s.cfg.TLSConfig, s.cfg.Timeout)
	if err != nil {
		return fmt.Errorf("imap: connecting to %s: %w", s.cfg.IMAPAddr, err)
	}
	conn.reset(overheadBudget)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	opts := &imapclient.Options{TLSConfig: tlsConfigFor(s.cfg.TLSConfig, s.cfg.IMAPAddr)}
	var c *imapclient.Client
	if s.cfg.TLS == TLSStartTLS {
		c, err = imapclient.NewStartTLS(conn, opts)
		if err != nil {
			conn.Close()
			return fmt.Errorf("imap: STARTTLS with %s: %w", s.cfg.IMAPAddr, err)
		}
	} else {
		c = imapclient.New(conn, opts)
		if err := c.WaitGreeting(); err != nil {
			c.Close()
			return fmt.Errorf("imap: greeting of %s: %w", s.cfg.IMAPAddr, err)
		}
	}
	if err := s.login(ctx, c); err != nil {
		c.Close()
		return err
	}
	if ctx.Err() != nil {
		c.Close()
		return fmt.Errorf("imap: %w", context.Cause(ctx))
	}
	s.c, s.conn, s.selected = c, conn, ""
	return nil
}

func (s *imapStore) login(ctx context.Context, c *imapclient.Client) error {
	if s.creds.provider == nil {
		return nil
	}
	secret, err := s.creds.secret(ctx)
	if err != nil {
		return err
	}
	if s.creds.mech == MechPassword {
		if err := c.Login(s.cfg.Username, secret).Wait(); err != nil {
			return fmt.Errorf("imap: login as %q: %w", s.cfg.Username, err)
		}
		return nil
	}
	if err := c.Authenticate(s.creds.sasl(s.cfg.Username, secret, s.cfg.IMAPAddr)); err != nil {
		return fmt.Errorf("imap: %s authentication as %q: %w", s.creds.mech, s.cfg.Username, err)
	}
	return nil
}

// selectFolder selects folder unless it is selected.
func (s *imapStore) selectFolder(c *imapclient.Client, folder string) error {
	if s.selected == folder {
		return nil
	}
	s.selected = ""
	if _, err := c.Select(folder, nil).Wait(); err != nil {
		return fmt.Errorf("folder %q cannot be opened: %w", folder, err)
	}
	s.selected = folder
	return nil
}

func (s *imapStore) folders(ctx context.Context) ([]folderInfo, error) {
	var out []folderInfo
	err := s.do(ctx, 0, func(c *imapclient.Client) error {
		list, err := c.List("", "*", nil).Collect()
		if err != nil {
			return err
		}
		for _, l := range list {
			f := folderInfo{Name: l.Mailbox}
			for _, a := range l.Attrs {
				f.Attributes = append(f.Attributes, string(a))
			}
			out = append(out, f)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b folderInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, err
}

func (s *imapStore) search(ctx context.Context, folder string, cr criteria) ([]uint32, error) {
	var out []uint32
	err := s.do(ctx, 0, func(c *imapclient.Client) error {
		if err := s.selectFolder(c, folder); err != nil {
			return err
		}
		sc := &imap.SearchCriteria{Since: cr.Since, Before: cr.Before}
		for _, v := range cr.From {
			sc.Header = append(sc.Header, imap.SearchCriteriaHeaderField{Key: "From", Value: v})
		}
		for _, v := range cr.To {
			sc.Header = append(sc.Header, imap.SearchCriteriaHeaderField{Key: "To", Value: v})
		}
		for _, v := range cr.Subject {
			sc.Header = append(sc.Header, imap.SearchCriteriaHeaderField{Key: "Subject", Value: v})
		}
		if cr.MessageID != "" {
			sc.Header = append(sc.Header, imap.SearchCriteriaHeaderField{Key: "Message-ID", Value: cr.MessageID})
		}
		sc.Text = cr.Text
		if cr.Unseen {
			sc.NotFlag = append(sc.NotFlag, imap.FlagSeen)
		}
		if cr.Flagged {
			sc.Flag = append(sc.Flag, imap.FlagFlagged)
		}
		if cr.MaxUID > 0 {
			var set imap.UIDSet
			set.AddRange(1, imap.UID(cr.MaxUID))
			sc.UID = []imap.UIDSet{set}
		}
		data, err := c.UIDSearch(sc, nil).Wait()
		if err != nil {
			return fmt.Errorf("search in %q: %w", folder, err)
		}
		for _, u := range data.AllUIDs() {
			out = append(out, uint32(u))
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

func addrs(list []imap.Address) []string {
	var out []string
	for _, a := range list {
		if a.IsGroupStart() || a.IsGroupEnd() {
			continue
		}
		addr := a.Addr()
		if a.Name != "" {
			addr = clean(a.Name, 200) + " <" + addr + ">"
		}
		out = append(out, clean(addr, 400))
	}
	return out
}

// msgID returns a Message-ID as it is written in headers, in angle brackets
// (the library strips them).
func msgID(id string) string {
	id = clean(id, 998)
	if id == "" || strings.HasPrefix(id, "<") {
		return id
	}
	return "<" + id + ">"
}

func flagStrings(fl []imap.Flag) []string {
	out := make([]string, 0, len(fl))
	for _, f := range fl {
		out = append(out, string(f))
	}
	return out
}

func summaryOf(m *imapclient.FetchMessageBuffer) summary {
	s := summary{UID: uint32(m.UID), Flags: flagStrings(m.Flags), Size: m.RFC822Size}
	if e := m.Envelope; e != nil {
		s.Date = e.Date
		s.From = addrs(e.From)
		s.To = addrs(e.To)
		s.Subject = clean(e.Subject, 1000)
		s.MessageID = msgID(e.MessageID)
	}
	if s.Date.IsZero() {
		s.Date = m.InternalDate
	}
	return s
}

func (s *imapStore) summaries(ctx context.Context, folder string, uids []uint32) ([]summary, error) {
	if len(uids) == 0 {
		return nil, nil
	}
	byUID := map[uint32]summary{}
	err := s.do(ctx, 0, func(c *imapclient.Client) error {
		if err := s.selectFolder(c, folder); err != nil {
			return err
		}
		set := imap.UIDSet{}
		for _, u := range uids {
			set.AddNum(imap.UID(u))
		}
		msgs, err := c.Fetch(set, &imap.FetchOptions{UID: true, Flags: true, Envelope: true, RFC822Size: true, InternalDate: true}).Collect()
		if err != nil {
			return err
		}
		for _, m := range msgs {
			byUID[uint32(m.UID)] = summaryOf(m)
		}
		return nil
	})
	out := make([]summary, 0, len(uids))
	for _, u := range uids {
		if sm, ok := byUID[u]; ok {
			out = append(out, sm)
		}
	}
	return out, err
}

func (s *imapStore) message(ctx context.Context, folder string, uid uint32) (*messageMeta, error) {
	var out *messageMeta
	err := s.do(ctx, 0, func(c *imapclient.Client) error {
		if err := s.selectFolder(c, folder); err != nil {
			return err
		}
		refs := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, HeaderFields: []string{"References"}, Peek: true, Partial: &imap.SectionPartial{Size: 16 << 10}}
		msgs, err := c.Fetch(imap.UIDSetNum(imap.UID(uid)), &imap.FetchOptions{
			UID: true, Flags: true, Envelope: true, RFC822Size: true, InternalDate: true,
			BodyStructure: &imap.FetchItemBodyStructure{Extended: true},
			BodySection:   []*imap.FetchItemBodySection{refs},
		}).Collect()
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			return errNoMessage
		}
		m := msgs[0]
		out = &messageMeta{summary: summaryOf(m)}
		if e := m.Envelope; e != nil {
			out.Cc = addrs(e.Cc)
			// An envelope repeats From as Reply-To when the message has none.
			if r := addrs(e.ReplyTo); !slices.Equal(r, out.From) {
				out.ReplyTo = r
			}
			ids := make([]string, 0, len(e.InReplyTo))
			for _, id := range e.InReplyTo {
				ids = append(ids, msgID(id))
			}
			out.InReplyTo = clean(strings.Join(ids, " "), 1000)
		}
		if b := m.FindBodySection(refs); b != nil {
			out.References = headerValue(b, "References")
		}
		st, err := convertStructure(m.BodyStructure, s.cfg.structure)
		if err != nil {
			return err
		}
		out.Structure = st
		return nil
	})
	return out, err
}

func (s *imapStore) section(ctx context.Context, folder string, uid uint32, path []int, max int64) ([]byte, error) {
	var out []byte
	err := s.do(ctx, max, func(c *imapclient.Client) error {
		if err := s.selectFolder(c, folder); err != nil {
			return err
		}
		item := &imap.FetchItemBodySection{Part: path, Peek: true, Partial: &imap.SectionPartial{Size: max}}
		if path == nil {
			item.Specifier = imap.PartSpecifierText
		}
		msgs, err := c.Fetch(imap.UIDSetNum(imap.UID(uid)), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{item}}).Collect()
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			return errNoMessage
		}
		out = msgs[0].FindBodySection(item)
		if int64(len(out)) > max {
			out = out[:max]
		}
		return nil
	})
	return out, err
}

// exists fails with errNoMessage when folder has no message uid.
func exists(c *imapclient.Client, uid uint32) error {
	data, err := c.UIDSearch(&imap.SearchCriteria{UID: []imap.UIDSet{imap.UIDSetNum(imap.UID(uid))}}, nil).Wait()
	if err != nil {
		return err
	}
	if len(data.AllUIDs()) == 0 {
		return errNoMessage
	}
	return nil
}

// errRefused is wrapped by errors for operations the server cannot do safely.
var errRefused = errors.New("refused")

func (s *imapStore) move(ctx context.Context, folder string, uid uint32, dest string) (string, error) {
	method := ""
	err := s.do(ctx, 0, func(c *imapclient.Client) error {
		if err := s.selectFolder(c, folder); err != nil {
			return err
		}
		if err := exists(c, uid); err != nil {
			return err
		}
		set := imap.UIDSetNum(imap.UID(uid))
		caps := c.Caps()
		switch {
		case caps.Has(imap.CapMove):
			if _, err := c.Move(set, dest).Wait(); err != nil {
				return fmt.Errorf("moving to %q: %w", dest, err)
			}
			method = "MOVE"
		case caps.Has(imap.CapUIDPlus):
			// COPY, flag, then expunge exactly this UID: a plain EXPUNGE would
			// also purge every other message flagged \Deleted in the folder.
			if _, err := c.Copy(set, dest).Wait(); err != nil {
				return fmt.Errorf("copying to %q: %w", dest, err)
			}
			if err := c.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
				return fmt.Errorf("the message was copied to %q but not flagged for removal from %q: %w", dest, folder, err)
			}
			if err := c.UIDExpunge(set).Close(); err != nil {
				return fmt.Errorf("the message was copied to %q but not removed from %q: %w", dest, folder, err)
			}
			method = "COPY+UID EXPUNGE"
		default:
			return fmt.Errorf("%w: the server supports neither MOVE (RFC 6851) nor UIDPLUS (RFC 4315), so a message cannot be moved without purging every other message flagged \\Deleted in %q", errRefused, folder)
		}
		return nil
	})
	return method, err
}

func (s *imapStore) setFlags(ctx context.Context, folder string, uid uint32, add, remove []string) ([]string, error) {
	var out []string
	err := s.do(ctx, 0, func(c *imapclient.Client) error {
		if err := s.selectFolder(c, folder); err != nil {
			return err
		}
		if err := exists(c, uid); err != nil {
			return err
		}
		set := imap.UIDSetNum(imap.UID(uid))
		for _, op := range []struct {
			op    imap.StoreFlagsOp
			flags []string
		}{{imap.StoreFlagsAdd, add}, {imap.StoreFlagsDel, remove}} {
			if len(op.flags) == 0 {
				continue
			}
			fl := make([]imap.Flag, len(op.flags))
			for i, f := range op.flags {
				fl[i] = imap.Flag(f)
			}
			if err := c.Store(set, &imap.StoreFlags{Op: op.op, Silent: true, Flags: fl}, nil).Close(); err != nil {
				return fmt.Errorf("changing flags: %w", err)
			}
		}
		msgs, err := c.Fetch(set, &imap.FetchOptions{UID: true, Flags: true}).Collect()
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			return errNoMessage
		}
		out = flagStrings(msgs[0].Flags)
		return nil
	})
	return out, err
}

func (s *imapStore) noop(ctx context.Context) error {
	return s.do(ctx, 0, func(c *imapclient.Client) error { return c.Noop().Wait() })
}

func (s *imapStore) close() error {
	s.turn <- struct{}{}
	defer func() { <-s.turn }()
	if s.c != nil {
		c := s.c
		s.c, s.conn, s.selected = nil, nil, ""
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.Logout().Wait()
		}()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
		}
		return c.Close()
	}
	return nil
}
