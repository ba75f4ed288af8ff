package stack

import (
	"fmt"

	"github.com/mcs-go/mcs/middleware/auth"
)

// credentialAdvice tells the operator where a credential goes instead of the
// stack file.
const credentialAdvice = `set credentials = "env" on the driver and put the token in the environment variable ` +
	auth.EnvPrefix + `<SCHEME> (the security scheme's name in upper case, such as ` + auth.EnvPrefix + `API_KEY)`

// Credential modes of a REST driver's credentials key.
const (
	credentialsNone = "none" // send no credentials (the default)
	credentialsEnv  = "env"  // tokens from the environment: MCS_TOKEN_<SCOPE>
)

// credentialProvider returns the credential provider of a REST driver labelled
// label whose credentials key is mode, or an error for an unknown mode. This is
// the one place where the stack file's credentials setting becomes a provider:
// the scope the driver asks for is decided by the driver (today the security
// scheme's name).
func credentialProvider(mode, label string) (auth.CredentialProvider, error) {
	_ = label // the scope will default to the label once the driver maps schemes to scopes
	switch mode {
	case "", credentialsNone:
		return nil, nil
	case credentialsEnv:
		return auth.NewStaticProvider(nil), nil
	}
	return nil, fmt.Errorf("%q is not a credential source; use %q (tokens from the environment, %s<SCHEME>) or %q", mode, credentialsEnv, auth.EnvPrefix, credentialsNone)
}
