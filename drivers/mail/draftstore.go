package mail

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Errors of a draft store.
var (
	errNoDraft   = errors.New("no such draft")
	errDraftBusy = errors.New("the draft is already being sent or was sent")
	errDamaged   = errors.New("damaged draft")
)

const (
	draftIDPrefix = "draft-"
	draftIDHex    = 32         // hex digits after the prefix: 16 bytes of SHA-256
	sendingSuffix = ".sending" // a draft file claimed by a send in progress
	// maxDraftFile bounds the file of one draft read back: the body's limit
	// with room for JSON escapes and the headers.
	maxDraftFile = 8 << 20
)

// validDraftID reports whether id has exactly the form draftID makes:
// "draft-" and 32 lower-case hex digits. Nothing else names a draft, so an id
// can never name another file (no separator, dot or other character).
func validDraftID(id string) bool {
	hexPart, ok := strings.CutPrefix(id, draftIDPrefix)
	if !ok || len(hexPart) != draftIDHex {
		return false
	}
	for i := range len(hexPart) {
		c := hexPart[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// checkDraftID refuses an id that is not one the driver makes.
func checkDraftID(id string) error {
	if !validDraftID(id) {
		return fmt.Errorf("%w: draft_id %q is not a draft id (%q and %d lower-case hex digits); pass the draft_id create_draft returned", errRefused, truncate(id, 80), draftIDPrefix, draftIDHex)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// draftStore keeps the drafts of a driver between create_draft and
// send_draft. Implementations are safe for concurrent use, also across
// drivers (and processes) that share one. The ids they are given are valid
// (validDraftID).
type draftStore interface {
	// put keeps d; the same content again (the same id) is the same draft. It
	// refuses a draft beyond MaxDrafts.
	put(d Draft) error
	// get returns draft id: errNoDraft, or an errDamaged error for a draft
	// whose content does not match its id.
	get(id string) (Draft, error)
	// claim takes draft id for one send: until release, no other claim of it
	// succeeds (errDraftBusy), and discard refuses it. errNoDraft when there
	// is no such draft; an errDamaged error for a draft that does not match
	// its id, which stays where it was.
	claim(id string) (Draft, error)
	// release ends the claim of id: a sent draft is removed, another one is
	// restored, to be sent again.
	release(id string, sent bool) error
	// discard removes draft id: errNoDraft, errDraftBusy while it is claimed.
	discard(id string) error
	close() error
}

// memDrafts keeps drafts in the memory of the process: the default.
type memDrafts struct {
	mu      sync.Mutex
	drafts  map[string]Draft
	sending map[string]bool
}

var (
	_ draftStore = (*memDrafts)(nil)
	_ draftStore = (*dirDrafts)(nil)
)

func newMemDrafts() *memDrafts {
	return &memDrafts{drafts: map[string]Draft{}, sending: map[string]bool{}}
}

func cloneDraft(d Draft) Draft {
	d.To, d.Cc, d.Bcc = slices.Clone(d.To), slices.Clone(d.Cc), slices.Clone(d.Bcc)
	return d
}

func (s *memDrafts) put(d Draft) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.drafts[d.ID]; ok {
		return nil
	}
	if len(s.drafts) >= MaxDrafts {
		return fmt.Errorf("%w: %d drafts are waiting; send or discard one first", errRefused, MaxDrafts)
	}
	s.drafts[d.ID] = cloneDraft(d)
	return nil
}

func (s *memDrafts) get(id string) (Draft, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.drafts[id]
	if !ok {
		return Draft{}, errNoDraft
	}
	return cloneDraft(d), nil
}

func (s *memDrafts) claim(id string) (Draft, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sending[id] {
		return Draft{}, errDraftBusy
	}
	d, ok := s.drafts[id]
	if !ok {
		return Draft{}, errNoDraft
	}
	s.sending[id] = true
	return cloneDraft(d), nil
}

func (s *memDrafts) release(id string, sent bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sending, id)
	if sent {
		delete(s.drafts, id)
	}
	return nil
}

func (s *memDrafts) discard(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sending[id] {
		return errDraftBusy
	}
	if _, ok := s.drafts[id]; !ok {
		return errNoDraft
	}
	delete(s.drafts, id)
	return nil
}

func (s *memDrafts) close() error { return nil }

// dirDrafts keeps each draft as one file in a directory, named by its id and
// holding its JSON, so that a draft outlives the process that made it. The
// directory is created (0700) with the first draft; files are written to a
// temporary name and renamed (0600), and every access goes through an
// [os.Root] on the directory. A send claims the file by renaming it to
// <id>.sending: rename is atomic, so of two processes sending one draft only
// one gets it.
type dirDrafts struct {
	dir  string
	mu   sync.Mutex // guards root
	root *os.Root
}

// open returns the root of the directory, creating the directory when create
// is set; nil (and no error) when it does not exist and create is not set.
func (s *dirDrafts) open(create bool) (*os.Root, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.root != nil {
		return s.root, nil
	}
	if create {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return nil, fmt.Errorf("drafts directory: %w", err)
		}
	}
	r, err := os.OpenRoot(s.dir)
	if err != nil {
		if !create && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("drafts directory: %w", err)
	}
	s.root = r
	return r, nil
}

func (s *dirDrafts) put(d Draft) error {
	r, err := s.open(true)
	if err != nil {
		return err
	}
	replace := false
	if _, err := r.Lstat(d.ID); err == nil {
		// The same draft is there, unless its file was damaged: then the
		// draft made now replaces it.
		if _, err := s.read(r, d.ID, d.ID); !errors.Is(err, errDamaged) {
			return err
		}
		replace = true
	}
	n, err := s.count(r)
	if err != nil {
		return err
	}
	if n >= MaxDrafts && !replace {
		return fmt.Errorf("%w: %d drafts are waiting in the drafts directory; send or discard one first", errRefused, MaxDrafts)
	}
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := "." + d.ID + "." + hex.EncodeToString(rnd[:]) + ".tmp"
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing draft: %w", err)
	}
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.Rename(tmp, d.ID)
	}
	if err != nil {
		r.Remove(tmp)
		return fmt.Errorf("writing draft: %w", err)
	}
	return nil
}

// count returns the number of drafts in the directory, claimed ones included.
func (s *dirDrafts) count(r *os.Root) (int, error) {
	f, err := r.Open(".")
	if err != nil {
		return 0, fmt.Errorf("drafts directory: %w", err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return 0, fmt.Errorf("drafts directory: %w", err)
	}
	n := 0
	for _, name := range names {
		if validDraftID(strings.TrimSuffix(name, sendingSuffix)) {
			n++
		}
	}
	return n, nil
}

// read reads and checks the draft id from the file name.
func (s *dirDrafts) read(r *os.Root, id, name string) (Draft, error) {
	f, err := r.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Draft{}, errNoDraft
		}
		return Draft{}, fmt.Errorf("reading draft %s: %w", id, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return Draft{}, fmt.Errorf("%w %s: its file is not a regular file; remove it and create the draft again", errDamaged, id)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxDraftFile+1))
	if err != nil {
		return Draft{}, fmt.Errorf("reading draft %s: %w", id, err)
	}
	if len(data) > maxDraftFile {
		return Draft{}, fmt.Errorf("%w %s: its file is larger than %d bytes, more than any draft; it will not be sent: remove it and create the draft again", errDamaged, id, maxDraftFile)
	}
	return decodeDraft(id, data)
}

// decodeDraft parses the file of draft id and checks that its content is what
// the id says (the id is a hash of the content) and what create_draft would
// have accepted.
func decodeDraft(id string, data []byte) (Draft, error) {
	var d Draft
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return Draft{}, fmt.Errorf("%w %s: its file is not a draft (%v); it will not be sent: remove it and create the draft again", errDamaged, id, err)
	}
	if d.ID != id || draftID(d) != id {
		return Draft{}, fmt.Errorf("%w %s: its content does not match its id, so it was changed after create_draft wrote it; it will not be sent: remove it and create the draft again", errDamaged, id)
	}
	if err := checkStored(d); err != nil {
		return Draft{}, fmt.Errorf("%w %s: %v; it will not be sent: remove it and create the draft again", errDamaged, id, err)
	}
	if d.Attachments == nil {
		d.Attachments = []string{}
	}
	return d, nil
}

// checkStored checks a draft read back as create_draft checked it when made.
func checkStored(d Draft) error {
	if len(d.To) == 0 {
		return errors.New("it has no recipient in to")
	}
	if len(d.Attachments) > 0 {
		return errors.New("it has attachments, which the driver never adds")
	}
	if hasCtl(d.References) || !utf8.ValidString(d.References) {
		return errors.New("its references contain a control character")
	}
	fields := []struct{ name, v string }{{"from", d.From}, {"subject", d.Subject}, {"in_reply_to", d.InReplyTo}}
	for _, list := range [][]string{d.To, d.Cc, d.Bcc} {
		for _, a := range list {
			fields = append(fields, struct{ name, v string }{"recipient", a})
		}
	}
	for _, f := range fields {
		if err := checkHeader(f.name, f.v); err != nil {
			return err
		}
	}
	if strings.ContainsRune(d.Body, 0) || !utf8.ValidString(d.Body) || len(d.Body) > maxBodyChars {
		return errors.New("its body is not text create_draft accepts")
	}
	return nil
}

func (s *dirDrafts) get(id string) (Draft, error) {
	r, err := s.open(false)
	if err != nil || r == nil {
		if err == nil {
			err = errNoDraft
		}
		return Draft{}, err
	}
	return s.read(r, id, id)
}

func (s *dirDrafts) claim(id string) (Draft, error) {
	r, err := s.open(false)
	if err != nil || r == nil {
		if err == nil {
			err = errNoDraft
		}
		return Draft{}, err
	}
	claimed := id + sendingSuffix
	if _, err := r.Lstat(claimed); err == nil {
		return Draft{}, errDraftBusy
	}
	if err := r.Rename(id, claimed); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return Draft{}, fmt.Errorf("claiming draft %s: %w", id, err)
		}
		if _, err := r.Lstat(claimed); err == nil {
			return Draft{}, errDraftBusy
		}
		return Draft{}, errNoDraft
	}
	d, err := s.read(r, id, claimed)
	if err != nil {
		if rerr := r.Rename(claimed, id); rerr != nil {
			err = errors.Join(err, fmt.Errorf("restoring draft %s: %w", id, rerr))
		}
		return Draft{}, err
	}
	return d, nil
}

func (s *dirDrafts) release(id string, sent bool) error {
	r, err := s.open(false)
	if err != nil || r == nil {
		return err
	}
	if sent {
		if err := r.Remove(id + sendingSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing sent draft %s: %w", id, err)
		}
		return nil
	}
	if err := r.Rename(id+sendingSuffix, id); err != nil {
		return fmt.Errorf("restoring draft %s after the failed send (its file is %s%s; rename it to %s to send it): %w", id, id, sendingSuffix, id, err)
	}
	return nil
}

func (s *dirDrafts) discard(id string) error {
	r, err := s.open(false)
	if err != nil || r == nil {
		if err == nil {
			err = errNoDraft
		}
		return err
	}
	if err := r.Remove(id); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing draft %s: %w", id, err)
		}
		if _, err := r.Lstat(id + sendingSuffix); err == nil {
			return errDraftBusy
		}
		return errNoDraft
	}
	return nil
}

func (s *dirDrafts) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.root == nil {
		return nil
	}
	err := s.root.Close()
	s.root = nil
	return err
}

// sentLog remembers the Message-IDs of the last drafts this driver sent, so
// that sending one again answers with its Message-ID instead of failing.
type sentLog struct {
	mu    sync.Mutex
	sent  map[string]string // draft id -> Message-ID
	order []string
}

const maxSentLog = 1000

func (l *sentLog) get(id string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, ok := l.sent[id]
	return m, ok
}

func (l *sentLog) add(id, messageID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sent == nil {
		l.sent = map[string]string{}
	}
	if _, ok := l.sent[id]; !ok {
		l.order = append(l.order, id)
	}
	l.sent[id] = messageID
	if len(l.order) > maxSentLog {
		delete(l.sent, l.order[0])
		l.order = l.order[1:]
	}
}

// forget drops id: a draft created again after it was sent is a new draft.
func (l *sentLog) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.sent[id]; ok {
		delete(l.sent, id)
		l.order = slices.DeleteFunc(l.order, func(s string) bool { return s == id })
	}
}
