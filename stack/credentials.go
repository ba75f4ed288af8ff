package stack

import (
	"context"
	"fmt"

	"golang.org/x/oauth2"

	"github.com/mcs-go/mcs/middleware/auth"
)

// credentialAdvice tells the operator where a credential goes instead of the
// stack file.
const credentialAdvice = `set credentials = "env" on the driver and put the token in the environment variable ` +
	auth.EnvPrefix + `<SCHEME> (the security scheme's name in upper case, such as ` + auth.EnvPrefix + `API_KEY)`

// Credential sources of a REST driver's credentials key.
const (
	credentialsNone   = "none"   // send no credentials (the default)
	credentialsEnv    = "env"    // tokens from the environment: MCS_TOKEN_<SCOPE>
	credentialsDevice = "device" // the OAuth 2.0 device flow of the [driver.oauth] table
)

// credentialSpec is the credential setting of one REST driver: the credentials
// key and, for "device", its [driver.oauth] table.
type credentialSpec struct {
	mode  string
	label string
	oauth oauth2.Config
	store string // token file; "" keeps the tokens in memory
}

// decodeCredentials reads the credentials key of a REST driver labelled label
// and, for credentials = "device", its oauth table:
//
//	credentials = "device"
//	[driver.oauth]
//	client_id = "Iv1.0123abcd"       # a public client id, not a secret
//	device_auth_url = "https://github.com/login/device/code"
//	token_url = "https://github.com/login/oauth/access_token"
//	scopes = ["repo"]
//	token_store = "tokens.json"      # relative to the stack file; default: in memory
//
// This and [credentialSpec.provider] are the one place where the stack file's
// credential settings become a provider; the scope the driver asks the
// provider for is the driver's choice (today the security scheme's name).
func decodeCredentials(t *Table, label string) credentialSpec {
	c := credentialSpec{mode: t.String("credentials"), label: label}
	switch c.mode {
	case "", credentialsNone, credentialsEnv:
		if t.Has("oauth") {
			t.Errorf("oauth", "is only used with credentials = %q; set that or remove the table", credentialsDevice)
		}
	case credentialsDevice:
		o := t.Sub("oauth", fmt.Sprintf("[driver.oauth] of %q", label))
		c.oauth.ClientID = o.String("client_id")
		c.oauth.Endpoint.DeviceAuthURL = o.String("device_auth_url")
		c.oauth.Endpoint.TokenURL = o.String("token_url")
		c.oauth.Scopes = o.Strings("scopes")
		c.store = o.Path("token_store")
		for key, v := range map[string]string{"client_id": c.oauth.ClientID, "device_auth_url": c.oauth.Endpoint.DeviceAuthURL, "token_url": c.oauth.Endpoint.TokenURL} {
			if v == "" && !o.Has(key) {
				o.Errorf(key, "is required for credentials = %q", credentialsDevice)
			}
		}
	default:
		t.Errorf("credentials", "%q is not a credential source; use %q (tokens from the environment, %s<SCHEME>), %q (the OAuth device flow of a [driver.oauth] table) or %q",
			c.mode, credentialsEnv, auth.EnvPrefix, credentialsDevice, credentialsNone)
	}
	return c
}

// provider builds the credential provider; nil for none.
func (c credentialSpec) provider(_ context.Context, b *Builder) (auth.CredentialProvider, error) {
	switch c.mode {
	case credentialsEnv:
		return auth.NewStaticProvider(nil), nil
	case credentialsDevice:
		cfg := auth.DeviceFlowConfig{OAuth2: c.oauth, HTTPClient: b.Host().HTTPClient}
		if c.store != "" {
			store, err := auth.NewFileStore(c.store)
			if err != nil {
				return nil, err
			}
			cfg.Store = store
		}
		return auth.NewDeviceFlowProvider(cfg), nil
	}
	return nil, nil
}
