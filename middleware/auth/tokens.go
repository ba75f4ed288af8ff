package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// TokenLocker is implemented by a [TokenStore] that several processes or
// machines may share. Lock takes the store's lease on key for at most ttl,
// waiting (bounded by ctx) while another holder has it, and returns the function
// that gives it back. The providers hold it while they refresh the token under
// key, so that an expiring token is refreshed once, not once per process: many
// authorization servers issue one-time refresh tokens. A lease whose holder
// died lapses after ttl. Implementations must be safe for concurrent use.
type TokenLocker interface {
	Lock(ctx context.Context, key string, ttl time.Duration) (unlock func(), err error)
}

// StoreError reports a token store that could not be read or written: a
// database that is down, a file that cannot be replaced. Its message says what
// failed, never a token.
type StoreError struct {
	Op  string // "read", "write", "delete" or "lock"
	Err error
}

// Error returns "auth: could not <op> the token store (is it reachable?): <why>".
func (e *StoreError) Error() string {
	return fmt.Sprintf("auth: could not %s the token store (is it reachable?): %v", e.Op, e.Err)
}

// Unwrap returns the store's error.
func (e *StoreError) Unwrap() error { return e.Err }

func storeErr(op string, err error) error {
	if _, ok := errors.AsType[*KeyError](err); ok {
		return err
	}
	if _, ok := errors.AsType[*StoreError](err); ok {
		return err
	}
	return &StoreError{Op: op, Err: err}
}

// TokenStatus is what a store holds for one scope, without any secret.
type TokenStatus struct {
	Scope       string    // the MCS scope
	SignedIn    bool      // a token is stored
	Scopes      []string  // the OAuth scopes granted (or requested, when the server named none)
	Expiry      time.Time // of the access token; zero: none given
	Expired     bool      // the access token has expired (a refresh may renew it)
	Refreshable bool      // a refresh token is stored
}

// tokenStatus reads the status of key.
func tokenStatus(store TokenStore, key, scope string, now time.Time) (TokenStatus, error) {
	s := TokenStatus{Scope: scope}
	raw, expiry, ok, err := store.Load(key)
	if err != nil {
		return s, storeErr("read", err)
	}
	if !ok {
		return s, nil
	}
	tok, err := decodeToken(raw, expiry)
	if err != nil {
		return s, err
	}
	s.SignedIn = true
	s.Expiry = expiry
	s.Expired = !expiry.IsZero() && !now.Before(expiry)
	s.Refreshable = tok.RefreshToken != ""
	if sc, _ := tok.Extra("scope").(string); sc != "" {
		s.Scopes = strings.Fields(sc)
	}
	return s, nil
}

// storedToken is the value a provider saves: a small JSON object.
type storedToken struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type,omitempty"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope,omitempty"` // granted, space separated
}

// encodeToken returns the stored form of tok; requested names the scopes asked
// for, kept when the server named none.
func encodeToken(tok *oauth2.Token, requested []string) (string, error) {
	s := storedToken{AccessToken: tok.AccessToken, TokenType: tok.TokenType, RefreshToken: tok.RefreshToken}
	if sc, _ := tok.Extra("scope").(string); sc != "" {
		s.Scope = sc
	} else {
		s.Scope = strings.Join(requested, " ")
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("auth: encode the token: %w", err)
	}
	return string(b), nil
}

// errUnreadableToken is the error of a stored entry that is not a token.
var errUnreadableToken = errors.New("auth: the stored token cannot be read (not a token this program wrote); sign out and in again")

// decodeToken reads a stored value. A sealed value (the store is encrypted but
// this program has no key) is a *KeyError.
func decodeToken(raw string, expiry time.Time) (*oauth2.Token, error) {
	if strings.HasPrefix(raw, sealedPrefix) {
		return nil, &KeyError{Reason: "the token store is encrypted, but no key is set; set " + EnvTokenKey + " to the key that sealed it"}
	}
	var s storedToken
	if err := json.Unmarshal([]byte(raw), &s); err != nil || (s.AccessToken == "" && s.RefreshToken == "") {
		return nil, errUnreadableToken
	}
	tok := &oauth2.Token{AccessToken: s.AccessToken, TokenType: s.TokenType, RefreshToken: s.RefreshToken, Expiry: expiry}
	if s.Scope != "" {
		tok = tok.WithExtra(map[string]any{"scope": s.Scope})
	}
	return tok, nil
}

// Lock takes the lease on key within this store: a MemoryStore is shared only
// within one process, by the providers given the same store. It waits while
// another holder has it, bounded by ctx; ttl is not needed in one process
// (a holder cannot die without the process) and is ignored.
func (s *MemoryStore) Lock(ctx context.Context, key string, _ time.Duration) (func(), error) {
	s.mu.Lock()
	if s.leases == nil {
		s.leases = make(map[string]chan struct{})
	}
	ch := s.leases[key]
	if ch == nil {
		ch = make(chan struct{}, 1)
		s.leases[key] = ch
	}
	s.mu.Unlock()
	select {
	case ch <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-ch }) }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

var _ TokenLocker = (*MemoryStore)(nil)
