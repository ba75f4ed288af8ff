// Package redis is the Redis token store of package auth, shared by processes
// on many machines, through go-redis. Importing it registers the URL schemes
// "redis://" and "rediss://" (TLS) with [auth.OpenStore]; [Open] opens a server
// by URL.
package redis

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcs-go/mcs/middleware/auth"
)

func init() {
	auth.RegisterStoreScheme("redis", openURL)
	auth.RegisterStoreScheme("rediss", openURL)
}

func openURL(ctx context.Context, u string) (auth.TokenStore, error) { return Open(ctx, u) }

// opTimeout bounds one operation of the store (the TokenStore methods take no
// context).
const opTimeout = 15 * time.Second

const (
	tokenPrefix = "mcs:token:" // a hash: v (the value), e (expiry, Unix microseconds; 0: none)
	leasePrefix = "mcs:lease:" // a string: the holder, with the lease's time to live
)

// unlockScript deletes a lease only when the caller still holds it.
var unlockScript = goredis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// Store is the Redis [auth.TokenStore]. Its entries are hashes under
// "mcs:token:<key>". It is an [auth.TokenLocker]: a lease is a key
// "mcs:lease:<key>" set only when absent (SET NX) with the lease's time to
// live, which the server expires; it is given back by a script that deletes it
// only for its holder. Safe for concurrent use.
type Store struct {
	c     *goredis.Client
	where string // address and database, for errors
}

var (
	_ auth.TokenStore  = (*Store)(nil)
	_ auth.TokenLocker = (*Store)(nil)
)

// Open connects to the Redis server url names
// ("redis://[user:password@]host:port/db", "rediss://..." for TLS) and checks
// the connection. A URL without a password takes the one in the environment
// variable REDISCLI_AUTH, as redis-cli does. Errors name the address and database, never the password.
// Close the store when done.
func Open(ctx context.Context, url string) (*Store, error) {
	opt, err := goredis.ParseURL(url)
	if err != nil {
		return nil, errors.New("auth: open redis: the URL does not parse (want redis://host:port/db or rediss://...)")
	}
	if opt.Password == "" {
		opt.Password = os.Getenv("REDISCLI_AUTH") // as redis-cli: the password stays out of the URL
	}
	where := opt.Addr + "/" + strconv.Itoa(opt.DB)
	c := goredis.NewClient(opt)
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("auth: open redis %s: cannot connect (is the server running, and are the address and password right?): %w", where, err)
	}
	return &Store{c: c, where: where}, nil
}

func (s *Store) wrap(op string, err error) error {
	return fmt.Errorf("auth: redis %s: %s: %w", s.where, op, err)
}

// Load returns the entry under key, expired or not.
func (s *Store) Load(key string) (string, time.Time, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	vals, err := s.c.HMGet(ctx, tokenPrefix+key, "v", "e").Result()
	if err != nil {
		return "", time.Time{}, false, s.wrap("load a token", err)
	}
	v, ok := vals[0].(string)
	if !ok {
		return "", time.Time{}, false, nil
	}
	e, _ := vals[1].(string)
	us, err := strconv.ParseInt(e, 10, 64)
	if err != nil {
		return "", time.Time{}, false, s.wrap("load a token", errors.New("the entry's expiry is not a number"))
	}
	if us == 0 {
		return v, time.Time{}, true, nil
	}
	return v, time.UnixMicro(us), true, nil
}

// Save stores value under key with expiry in one command.
func (s *Store) Save(key, value string, expiry time.Time) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var us int64
	if !expiry.IsZero() {
		us = expiry.UnixMicro()
	}
	if err := s.c.HSet(ctx, tokenPrefix+key, "v", value, "e", strconv.FormatInt(us, 10)).Err(); err != nil {
		return s.wrap("save a token", err)
	}
	return nil
}

// Delete removes key.
func (s *Store) Delete(key string) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := s.c.Del(ctx, tokenPrefix+key).Err(); err != nil {
		return s.wrap("delete a token", err)
	}
	return nil
}

// Lock takes the lease on key for ttl (SET NX with the time to live) and polls
// (from 2 ms, doubling to 50 ms) while another holder has it, bounded by ctx.
func (s *Store) Lock(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	holder := rand.Text()
	wait := 2 * time.Millisecond
	for {
		err := s.c.SetArgs(ctx, leasePrefix+key, holder, goredis.SetArgs{Mode: "NX", TTL: ttl}).Err()
		if err == nil {
			return func() {
				ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
				defer cancel()
				unlockScript.Run(ctx, s.c, []string{leasePrefix + key}, holder)
			}, nil
		}
		if !errors.Is(err, goredis.Nil) {
			return nil, s.wrap("take the refresh lease", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		}
		wait = min(wait*2, 50*time.Millisecond)
	}
}

// Close closes the connections.
func (s *Store) Close() error { return s.c.Close() }
