package auth

import (
	"context"
	"fmt"
	"maps"
	"os"
)

// EnvPrefix is the prefix of the environment variables a [StaticProvider] reads.
const EnvPrefix = "MCS_TOKEN_"

// EnvVarName returns the environment variable a [StaticProvider] reads for scope:
// EnvPrefix followed by the scope in upper case, with '-', '.' and every other
// character that is not an ASCII letter, digit or '_' replaced by '_'. For example
// "github" gives MCS_TOKEN_GITHUB and "my-api.v2" gives MCS_TOKEN_MY_API_V2.
func EnvVarName(scope string) string {
	b := make([]byte, len(EnvPrefix), len(EnvPrefix)+len(scope))
	copy(b, EnvPrefix)
	for _, r := range scope {
		switch {
		case r >= 'a' && r <= 'z':
			b = append(b, byte(r-'a'+'A'))
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b = append(b, byte(r))
		default:
			b = append(b, '_')
		}
	}
	return string(b)
}

// StaticProvider is a [CredentialProvider] for tokens the operator gives up front.
// Token looks a scope up in the map given to [NewStaticProvider] first, then in the
// environment variable named by [EnvVarName] (read on every call, so a rotated
// variable takes effect at once). An empty value counts as missing.
//
// The zero value reads the environment only. StaticProvider is immutable after
// construction and safe for concurrent use.
type StaticProvider struct {
	tokens map[string]string
}

var _ CredentialProvider = (*StaticProvider)(nil)

// NewStaticProvider returns a provider over a copy of tokens (scope -> token); later
// changes to tokens do not affect it. tokens may be nil.
func NewStaticProvider(tokens map[string]string) *StaticProvider {
	return &StaticProvider{tokens: maps.Clone(tokens)}
}

// Token returns the token for scope from the map, else from the environment. When
// neither has one it returns an error wrapping [ErrNoCredential] that names the
// scope and the environment variable to set. An empty scope is an error wrapping
// ErrNoCredential. ctx is not used.
func (p *StaticProvider) Token(_ context.Context, scope string) (string, error) {
	if scope == "" {
		return "", errEmptyScope
	}
	if tok := p.tokens[scope]; tok != "" {
		return tok, nil
	}
	env := EnvVarName(scope)
	if tok := os.Getenv(env); tok != "" {
		return tok, nil
	}
	return "", fmt.Errorf("auth: %w for scope %q: add it to the static provider's map or set the environment variable %s", ErrNoCredential, scope, env)
}

var errEmptyScope = fmt.Errorf("auth: %w: the scope is empty; configure the driver with a scope name such as \"github\"", ErrNoCredential)
