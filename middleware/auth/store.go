package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// TokenStore keeps credentials between calls (and, for a persistent store, between
// runs), one value per key, each with an expiry.
//
// Load returns an entry even when its expiry has passed: the store keeps no clock,
// the caller decides what an expired entry is still good for (a refresh token
// outlives the access token it came with). A zero expiry means "does not expire".
// A key that is not there gives ok == false and a nil error. Implementations must be
// safe for concurrent use.
type TokenStore interface {
	// Load returns the value and expiry stored under key.
	Load(key string) (value string, expiry time.Time, ok bool, err error)
	// Save stores value under key with expiry, replacing any previous entry.
	Save(key, value string, expiry time.Time) error
	// Delete removes key; deleting a key that is not there is not an error.
	Delete(key string) error
}

type storeEntry struct {
	Value  string    `json:"value"`
	Expiry time.Time `json:"expiry,omitzero"`
}

// MemoryStore is a [TokenStore] in memory; its entries live as long as the process.
// The zero value is an empty store ready to use. Safe for concurrent use.
type MemoryStore struct {
	mu      sync.RWMutex
	entries map[string]storeEntry
	leases  map[string]chan struct{} // see Lock
}

var _ TokenStore = (*MemoryStore)(nil)

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{entries: make(map[string]storeEntry)}
}

// Load returns the entry under key, expired or not. It never fails.
func (s *MemoryStore) Load(key string) (string, time.Time, bool, error) {
	s.mu.RLock()
	e, ok := s.entries[key]
	s.mu.RUnlock()
	return e.Value, e.Expiry, ok, nil
}

// Save stores value under key with expiry. It never fails.
func (s *MemoryStore) Save(key, value string, expiry time.Time) error {
	s.mu.Lock()
	if s.entries == nil {
		s.entries = make(map[string]storeEntry)
	}
	s.entries[key] = storeEntry{Value: value, Expiry: expiry}
	s.mu.Unlock()
	return nil
}

// Delete removes key. It never fails.
func (s *MemoryStore) Delete(key string) error {
	s.mu.Lock()
	delete(s.entries, key)
	s.mu.Unlock()
	return nil
}

// fileStoreVersion is the version of the file format FileStore writes.
const fileStoreVersion = 1

// maxStoreFile bounds the size of a token file FileStore reads.
const maxStoreFile = 4 << 20

type storeFile struct {
	Version int                   `json:"version"`
	Entries map[string]storeEntry `json:"entries"`
}

// CorruptFileError reports a token file that exists but cannot be read as a token
// store: not JSON, the wrong shape, another format version or too large. It never
// quotes the file's content. The next Save or Delete replaces the file.
type CorruptFileError struct {
	Path string // the token file
	Err  error  // what is wrong with it
}

// Error says what is wrong with the file and that it will be replaced. It does not
// name the file: errors of a call can reach the model, and a host path is the
// operator's business (Path has it, for logs).
func (e *CorruptFileError) Error() string {
	return fmt.Sprintf("auth: the token file is corrupt and will be replaced by the next save (%v); sign in again if a credential is missing", e.Err)
}

// FileError reports that the token file could not be read or written. Its message
// says what failed and why, without the file's path (errors of a call can reach the
// model; Path has it, for the operator's logs).
type FileError struct {
	Op   string // "read", "write" or "replace"
	Path string // the token file
	Err  error
}

// Error returns "auth: <op> the token file: <why>", with no path in it.
func (e *FileError) Error() string {
	return fmt.Sprintf("auth: %s the token file: %s", e.Op, withoutPath(e.Err))
}

// Unwrap returns the underlying error, so errors.Is(err, fs.ErrPermission) works.
func (e *FileError) Unwrap() error { return e.Err }

// withoutPath returns the message of err without the paths os errors quote.
func withoutPath(err error) string {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Op + ": " + pe.Err.Error()
	}
	if le, ok := errors.AsType[*os.LinkError](err); ok {
		return le.Op + ": " + le.Err.Error()
	}
	return err.Error()
}

// Unwrap returns the underlying decoding error.
func (e *CorruptFileError) Unwrap() error { return e.Err }

// FileStore is a [TokenStore] in a JSON file, for credentials that must outlive the
// process:
//
//	{"version": 1, "entries": {"<key>": {"value": "...", "expiry": "<RFC 3339>"}}}
//
// The file is created with mode 0600 and is never modified in place: every Save and
// Delete writes a temporary file in the same directory, syncs it to disk and renames
// it over the old one, so a reader (in this or another process) sees either the old
// or the new file, never a half-written one.
//
// Load reads the file on every call. A corrupt file is reported: Load returns
// ok == false and a *[CorruptFileError] until the next Save or Delete replaces the
// file with one that holds only the entries written since; nothing panics and no
// call is left without an answer.
//
// A FileStore is safe for concurrent use: its read-modify-write cycles are
// serialised within the process. Separate processes sharing one file never see a
// torn file, but concurrent writes from two processes may lose one of the updates
// (the last rename wins).
type FileStore struct {
	path string
	mu   sync.RWMutex
}

var _ TokenStore = (*FileStore)(nil)

// NewFileStore returns a store in the file at path. It creates the parent directory
// (mode 0700) when missing but not the file, which appears with the first Save. It
// fails when path is empty, names a directory, or the file exists and cannot be
// read; a file with corrupt content is not an error here (see [FileStore]).
func NewFileStore(path string) (*FileStore, error) {
	if path == "" {
		return nil, errors.New("auth: token file path is empty; give the path of a JSON file such as tokens.json")
	}
	path = filepath.Clean(path)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("auth: token file %s: create its directory: %w", path, err)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("auth: token file %s: %w", path, err)
	case fi.IsDir():
		return nil, fmt.Errorf("auth: token file %s is a directory; give the path of a file inside it", path)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("auth: token file %s is not a regular file; give the path of a regular file", path)
	default:
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("auth: token file %s: %w", path, err)
		}
		f.Close()
	}
	return &FileStore{path: path}, nil
}

// Path returns the path of the token file.
func (s *FileStore) Path() string { return s.path }

// Load returns the entry under key, expired or not. A missing file is an empty
// store. A file that cannot be read gives its error; a corrupt one a
// *CorruptFileError.
func (s *FileStore) Load(key string) (string, time.Time, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	entries, err := s.read()
	if err != nil {
		return "", time.Time{}, false, err
	}
	e, ok := entries[key]
	return e.Value, e.Expiry, ok, nil
}

// Save stores value under key with expiry and writes the file atomically. When the
// file is corrupt, it is replaced by one that holds this entry only. On error the
// previous file is left as it was.
func (s *FileStore) Save(key, value string, expiry time.Time) error {
	return s.update(func(m map[string]storeEntry) bool {
		m[key] = storeEntry{Value: value, Expiry: expiry}
		return true
	})
}

// Delete removes key and writes the file atomically. Deleting a key that is not
// there changes nothing, except that a corrupt file is replaced by an empty one.
func (s *FileStore) Delete(key string) error {
	return s.update(func(m map[string]storeEntry) bool {
		_, ok := m[key]
		delete(m, key)
		return ok
	})
}

// update applies f to the entries under the write lock and writes them when f
// reports a change or the file was corrupt.
func (s *FileStore) update(f func(map[string]storeEntry) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, err := s.read()
	corrupt := false
	if err != nil {
		if _, ok := errors.AsType[*CorruptFileError](err); !ok {
			return err
		}
		corrupt = true
	}
	if entries == nil {
		entries = make(map[string]storeEntry)
	}
	if !f(entries) && !corrupt {
		return nil
	}
	return s.write(entries)
}

// read returns the entries in the file; nil and no error when it does not exist.
func (s *FileStore) read() (map[string]storeEntry, error) {
	f, err := os.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &FileError{Op: "read", Path: s.path, Err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStoreFile+1))
	if err != nil {
		return nil, &FileError{Op: "read", Path: s.path, Err: err}
	}
	if len(data) > maxStoreFile {
		return nil, &CorruptFileError{Path: s.path, Err: fmt.Errorf("larger than %d bytes", maxStoreFile)}
	}
	var sf storeFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&sf); err != nil {
		return nil, &CorruptFileError{Path: s.path, Err: decodeError(err)}
	}
	if dec.More() {
		return nil, &CorruptFileError{Path: s.path, Err: errors.New("data after the JSON object")}
	}
	if sf.Version != fileStoreVersion {
		return nil, &CorruptFileError{Path: s.path, Err: fmt.Errorf("format version %d, want %d", sf.Version, fileStoreVersion)}
	}
	return sf.Entries, nil
}

// decodeError says why a token file cannot be decoded without quoting any of its
// content (the errors of encoding/json and time may quote the offending value).
func decodeError(err error) error {
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Errorf("not valid JSON (syntax error at byte %d)", se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("not valid JSON (the file ends too early)")
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
		return fmt.Errorf("field %s holds a value of the wrong type", te.Field)
	}
	return errors.New("the content does not match the token file format")
}

// write replaces the file with entries: temporary file, fsync, rename, then a
// best-effort sync of the directory.
func (s *FileStore) write(entries map[string]storeEntry) (err error) {
	data, err := json.MarshalIndent(storeFile{Version: fileStoreVersion, Entries: entries}, "", "  ")
	if err != nil {
		return fmt.Errorf("auth: encode token file: %w", err)
	}
	data = append(data, '\n')
	dir, base := filepath.Split(s.path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return &FileError{Op: "write", Path: s.path, Err: err}
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o600); err != nil {
		return &FileError{Op: "write", Path: s.path, Err: err}
	}
	if _, err = tmp.Write(data); err != nil {
		return &FileError{Op: "write", Path: s.path, Err: err}
	}
	if err = tmp.Sync(); err != nil {
		return &FileError{Op: "write", Path: s.path, Err: err}
	}
	if err = tmp.Close(); err != nil {
		return &FileError{Op: "write", Path: s.path, Err: err}
	}
	if err = os.Rename(tmp.Name(), s.path); err != nil {
		return &FileError{Op: "replace", Path: s.path, Err: err}
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync() // best effort: makes the rename durable where the platform supports it
		d.Close()
	}
	return nil
}
