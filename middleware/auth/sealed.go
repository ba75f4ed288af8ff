package auth

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// EnvTokenKey is the environment variable the stack reads the token store's
// encryption key from (see [ParseKey] and [WithEncryptionKey]).
const EnvTokenKey = "MCS_TOKEN_KEY"

// sealedPrefix starts every value a sealed store writes.
const sealedPrefix = "mcs-sealed:v1:"

// KeyError reports a sealed token store read with the wrong key, without a
// key, or an unsealed entry read with a key. It is never answered with a new
// sign-in: the tokens are still there for the right key.
type KeyError struct {
	Reason string
}

// Error returns "auth: <reason>".
func (e *KeyError) Error() string { return "auth: " + e.Reason }

// ParseKey reads an encryption key as written in [EnvTokenKey]: 32 bytes
// (AES-256) in standard or URL-safe base64, or in hex (64 digits). Make one
// with "openssl rand -base64 32". The error never quotes the value.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 64 {
		if k, err := hex.DecodeString(s); err == nil {
			return k, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == 32 {
			return k, nil
		}
	}
	return nil, errors.New("auth: the token key is not 32 bytes in base64 or hex; make one with: openssl rand -base64 32")
}

// StoreOption configures a store opened by [OpenStore].
type StoreOption func(*storeConfig)

type storeConfig struct {
	key []byte
}

// WithEncryptionKey seals every value the store keeps with AES-256-GCM under key
// (32 bytes, see [ParseKey]); the entry's key is bound into each seal, so a
// value copied under another key does not open. Reading an entry sealed with
// another key, or an entry that is not sealed, fails with a *[KeyError]; the
// providers report it and do not start a new sign-in. A key of another length
// makes OpenStore fail.
func WithEncryptionKey(key []byte) StoreOption {
	return func(c *storeConfig) { c.key = append([]byte(nil), key...) }
}

// Seal returns a store that keeps the values of inner sealed with key (see
// [WithEncryptionKey]). It is a [TokenLocker] when inner is one, and closes
// inner when inner has a Close method.
func Seal(inner TokenStore, key []byte) (TokenStore, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("auth: the token key has %d bytes, want 32 (AES-256); make one with: openssl rand -base64 32", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("auth: token key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("auth: token key: %w", err)
	}
	s := &sealedStore{inner: inner, aead: aead}
	if l, ok := inner.(TokenLocker); ok {
		return &sealedLocker{sealedStore: s, locker: l}, nil
	}
	return s, nil
}

type sealedStore struct {
	inner TokenStore
	aead  cipher.AEAD
}

type sealedLocker struct {
	*sealedStore
	locker TokenLocker
}

func (s *sealedLocker) Lock(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	return s.locker.Lock(ctx, key, ttl)
}

var (
	_ TokenStore  = (*sealedStore)(nil)
	_ TokenLocker = (*sealedLocker)(nil)
)

func (s *sealedStore) Load(key string) (string, time.Time, bool, error) {
	v, exp, ok, err := s.inner.Load(key)
	if err != nil || !ok {
		return "", exp, ok, err
	}
	if !strings.HasPrefix(v, sealedPrefix) {
		return "", exp, false, &KeyError{Reason: "the token store holds an entry that is not encrypted, but a key is set; sign out (mcs auth logout LABEL) to remove it, or unset " + EnvTokenKey}
	}
	b, err := base64.RawURLEncoding.DecodeString(v[len(sealedPrefix):])
	n := s.aead.NonceSize()
	if err != nil || len(b) < n {
		return "", exp, false, &KeyError{Reason: "a sealed entry of the token store is damaged; sign out and in again"}
	}
	plain, err := s.aead.Open(nil, b[:n], b[n:], []byte(key))
	if err != nil {
		return "", exp, false, &KeyError{Reason: "the token store's entries were sealed with another key; set " + EnvTokenKey + " to the key that sealed them, or sign out (mcs auth logout LABEL) and in again"}
	}
	return string(plain), exp, true, nil
}

func (s *sealedStore) Save(key, value string, expiry time.Time) error {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(value)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	sealed := s.aead.Seal(nonce, nonce, []byte(value), []byte(key))
	return s.inner.Save(key, sealedPrefix+base64.RawURLEncoding.EncodeToString(sealed), expiry)
}

func (s *sealedStore) Delete(key string) error { return s.inner.Delete(key) }

// Close closes the inner store when it has a Close method.
func (s *sealedStore) Close() error {
	if c, ok := s.inner.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}
