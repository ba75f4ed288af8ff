package stack

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/oauth2"

	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/middleware/auth"
)

// credentialAdvice tells the operator where a credential goes instead of the
// stack file, for a value outside any driver table.
const credentialAdvice = `set credentials = "env" on the driver and put the token in the environment variable ` +
	auth.EnvPrefix + `<LABEL> (the driver's label in upper case, such as ` + auth.EnvPrefix + `GITHUB for label = "github")`

// adviceFor is credentialAdvice for a value at path in the document: inside a
// [[driver]] table with a label it names that driver's variable.
func adviceFor(root *Table, path string) string {
	if strings.HasPrefix(path, "approvals.") {
		return "put the password in the environment variable PGPASSWORD (or in ~/.pgpass), where the PostgreSQL client reads it"
	}
	if path == "auth.store" || strings.HasSuffix(path, ".token_store") {
		return "put the password in the environment: PGPASSWORD (or ~/.pgpass) for PostgreSQL, REDISCLI_AUTH for Redis"
	}
	i, ok := driverIndex(path)
	if !ok {
		return credentialAdvice
	}
	label := driverLabel(root, i)
	if strings.HasPrefix(keyInTable(path), "env.") {
		// The environment of an MCP server's child.
		return `list the variable in env_pass = ["NAME"] and set it in the environment of this program`
	}
	if label == "" {
		return credentialAdvice
	}
	return fmt.Sprintf(`set credentials = "env" on the driver and put the token in the environment variable %s (the driver's label in upper case)`, auth.EnvVarName(label))
}

// Credential sources of a REST driver's credentials key.
const (
	credentialsNone   = "none"   // send no credentials (the default)
	credentialsEnv    = "env"    // tokens from the environment: MCS_TOKEN_<SCOPE>, the scope being the label unless scopes maps it
	credentialsDevice = "device" // the OAuth 2.0 device flow of the [driver.oauth] table
	credentialsOAuth  = "oauth"  // the OAuth 2.0 authorization code flow with PKCE of the [driver.oauth] table
)

// credentialSpec is the credential setting of one REST driver: the credentials
// key, the scopes binding and, for "device", its [driver.oauth] table.
type credentialSpec struct {
	mode     string
	label    string
	scopes   map[string]string // security scheme name -> provider scope; nil: every scheme asks for label
	oauth    oauth2.Config
	store    string // token store URL of token_store, resolved; "": the [auth] table's or the default
	resource string // RFC 8707 resource indicator
	mcpURL   string // an MCP server's URL: its endpoints are discovered (drivers/mcp)
}

// decodeCredentials reads the credentials and scopes keys of a REST driver
// labelled label and, for credentials = "oauth" or "device", its oauth table:
//
//	credentials = "oauth"
//	[driver.oauth]
//	client_id = "Iv1.0123abcd"       # a public client id, not a secret
//	authorize_url = "https://github.com/login/oauth/authorize"
//	token_url = "https://github.com/login/oauth/access_token"
//	scopes = ["repo"]                # the OAuth scopes requested
//	token_store = "sqlite:tokens.db" # optional; default: the [auth] table's store, else sqlite:mcs-tokens.db
//
// or
//
//	credentials = "device"
//	scopes = {api_key = "petstore"}  # optional: scheme -> provider scope
//	[driver.oauth]
//	client_id = "Iv1.0123abcd"       # a public client id, not a secret
//	device_auth_url = "https://github.com/login/device/code"
//	token_url = "https://github.com/login/oauth/access_token"
//	scopes = ["repo"]                # the OAuth scopes requested
//	token_store = "tokens.json"      # a store URL or a file path, relative to the stack file; default: the [auth] table's store, else in memory
//
// The operator binds credentials, never the API's document: every security
// scheme of the document asks the provider for the scope label (with
// credentials = "env", the variable MCS_TOKEN_<LABEL in upper case>), except
// the schemes the scopes table maps to a scope of their own. This and
// [credentialSpec.provider] are the one place where the stack file's credential
// settings become a provider; [credentialSpec.bind] sets the binding in the
// driver's configuration.
func decodeCredentials(t *Table, label string) credentialSpec {
	c := credentialSpec{mode: t.String("credentials"), label: label}
	if t.Has("scopes") {
		c.scopes = t.StringMap("scopes")
		for _, scheme := range slices.Sorted(maps.Keys(c.scopes)) {
			if strings.TrimSpace(c.scopes[scheme]) == "" {
				t.Errorf("scopes", "security scheme %q is bound to an empty scope; name the credential scope, such as %s = %q, or remove the entry (then it asks for %q)", scheme, scheme, label, label)
			}
		}
		if c.mode == "" || c.mode == credentialsNone {
			t.Errorf("scopes", "binds security schemes to credentials, but the driver sends none; set credentials = %q, %q or %q, or remove scopes", credentialsEnv, credentialsOAuth, credentialsDevice)
		}
	}
	switch c.mode {
	case "", credentialsNone, credentialsEnv:
		if t.Has("oauth") {
			t.Errorf("oauth", "is only used with credentials = %q or %q; set one or remove the table", credentialsOAuth, credentialsDevice)
		}
	case credentialsDevice, credentialsOAuth:
		c.decodeOAuth(t)
	default:
		t.Errorf("credentials", "%q is not a credential source; use %q (tokens from the environment, %s), %q (sign in in the browser, the [driver.oauth] table), %q (the OAuth device flow of a [driver.oauth] table) or %q",
			c.mode, credentialsEnv, auth.EnvVarName(label), credentialsOAuth, credentialsDevice, credentialsNone)
	}
	return c
}

// decodeOAuth reads the [driver.oauth] table of credentials = "oauth" or
// "device".
func (c *credentialSpec) decodeOAuth(t *Table) {
	o := t.Sub("oauth", fmt.Sprintf("[driver.oauth] of %q", c.label))
	c.oauth.ClientID = o.String("client_id")
	endpoint := struct{ key, v string }{"device_auth_url", ""}
	if c.mode == credentialsOAuth {
		c.oauth.Endpoint.AuthURL = o.String("authorize_url")
		endpoint = struct{ key, v string }{"authorize_url", c.oauth.Endpoint.AuthURL}
	} else {
		c.oauth.Endpoint.DeviceAuthURL = o.String("device_auth_url")
		endpoint.v = c.oauth.Endpoint.DeviceAuthURL
	}
	c.oauth.Endpoint.TokenURL = o.String("token_url")
	c.oauth.Scopes = o.Strings("scopes")
	if v := o.String("token_store"); v != "" {
		u, err := tokenStoreURL(v, o.Dir())
		if err != nil {
			o.Errorf("token_store", "%v", err)
		}
		c.store = u
	}
	for _, r := range []struct{ key, v string }{
		{"client_id", c.oauth.ClientID},
		endpoint,
		{"token_url", c.oauth.Endpoint.TokenURL},
	} {
		if r.v == "" && !o.Has(r.key) {
			o.Errorf(r.key, "is required for credentials = %q", c.mode)
		}
	}
}

// sends reports whether the driver sends credentials.
func (c credentialSpec) sends() bool {
	return c.mode == credentialsEnv || c.mode == credentialsDevice || c.mode == credentialsOAuth
}

// bind sets the credential binding of cfg: the driver's own scope is its label,
// and the scopes table binds the schemes it names.
func (c credentialSpec) bind(cfg *rest.Config) {
	cfg.Name = c.label
	cfg.Scopes = maps.Clone(c.scopes)
}

// provider builds the credential provider; nil for none. The sign-in
// providers are the stack's, shared by every Build (see
// [Stack.CredentialProvider]).
func (c *credentialSpec) provider(ctx context.Context, b *Builder) (auth.CredentialProvider, error) {
	switch c.mode {
	case credentialsEnv:
		return auth.NewStaticProvider(nil), nil
	case credentialsDevice, credentialsOAuth:
		return b.stack.provider(ctx, c)
	}
	return nil, nil
}
