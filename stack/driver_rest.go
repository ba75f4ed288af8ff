package stack

import (
	"context"
	"errors"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/middleware/auth"
)

func init() {
	RegisterDriverType(DriverType{
		Name:    "rest",
		Summary: "an OpenAPI 3.x or Swagger 2.0 API over HTTP (spec, base_url, include_tags, include_paths, headers, credentials, auth_scheme, scopes, oauth, timeout, max_response_bytes, max_name_length, cache_dir, no_cache)",
		Decode:  decodeREST,
	})
}

var _ DriverConfig = (*restDriver)(nil)

type restDriver struct {
	cfg   rest.Config
	creds credentialSpec
}

// decodeREST reads a [[driver]] table of type "rest":
//
//	spec = "https://.../openapi.json"   # or a file path, relative to the stack file
//	base_url = "https://api.example.com/v1"
//	include_tags = ["pet"]
//	include_paths = ["/pets/{petId}"]
//	headers = {X-Team = "core"}
//	credentials = "env"                 # MCS_TOKEN_<LABEL>; or "oauth", "device" (see decodeCredentials), "none" (the default)
//	auth_scheme = "bearer"              # for a document that declares no security scheme: "bearer", "basic", "header:NAME" or "query:NAME"
//	scopes = {api_key = "petstore"}     # optional: bind a security scheme to another scope
//	timeout = "30s"
//	max_response_bytes = 1048576
//	max_name_length = 56                # longest tool name published, 16 to 64 (default 64)
//	cache_dir = "./.mcs-cache"          # the tool-table cache, relative to the stack file
//	no_cache = true                     # do not read or write the tool-table cache
func decodeREST(t *Table, label string) DriverConfig {
	d := &restDriver{}
	d.cfg.SpecURL = t.Path("spec")
	if d.cfg.SpecURL == "" && !t.Has("spec") {
		t.Errorf("", "has no spec; add spec = \"openapi.json\" (a file path or an http(s) URL)")
	}
	d.cfg.BaseURL = t.String("base_url")
	d.cfg.IncludeTags = t.Strings("include_tags")
	d.cfg.IncludePaths = t.Strings("include_paths")
	d.cfg.Headers = t.StringMap("headers")
	d.cfg.Timeout = t.Duration("timeout")
	d.cfg.MaxResponseBytes = t.Int("max_response_bytes", 0, rest.MaxSpecBytes)
	d.cfg.MaxNameLength = int(t.Int("max_name_length", 16, 64))
	d.cfg.CacheDir = t.Path("cache_dir")
	d.cfg.NoCache = t.Bool("no_cache")
	if d.cfg.NoCache && d.cfg.CacheDir != "" {
		t.Errorf("cache_dir", "no_cache = true turns the cache off; remove one of cache_dir and no_cache")
	}
	d.creds = decodeCredentials(t, label)
	d.cfg.AuthScheme = t.String("auth_scheme")
	if d.cfg.AuthScheme != "" || t.Has("auth_scheme") {
		if d.cfg.AuthScheme == "" {
			t.Errorf("auth_scheme", "is empty; use \"bearer\", \"basic\" (the token is \"user:password\"), \"header:NAME\" or \"query:NAME\", or remove it")
		} else if err := rest.CheckAuthScheme(d.cfg.AuthScheme); err != nil {
			t.Errorf("auth_scheme", "%v", err)
		} else if !d.creds.sends() {
			t.Errorf("auth_scheme", "says how to send a credential, but the driver sends none; set credentials = %q (the token from %s) or %q, or remove auth_scheme", credentialsEnv, auth.EnvVarName(label), credentialsDevice)
		}
	}
	return d
}

func (d *restDriver) signIn() *credentialSpec { return &d.creds }

func (d *restDriver) config(ctx context.Context, b *Builder) (rest.Config, error) {
	cfg := d.cfg
	cfg.HTTPClient = b.Host().HTTPClient
	d.creds.bind(&cfg)
	p, err := d.creds.provider(ctx, b)
	if err != nil {
		return cfg, err
	}
	cfg.Credentials = p
	return cfg, nil
}

// ToolDriver builds the driver for an orchestrator. When the orchestrator
// prefixes names with the label and max_name_length is not set, the driver's
// names are kept within 64 characters with the prefix: the driver then
// shortens an overlong name itself and its description keeps the full
// operationId, which the orchestrator's shortening would lose.
func (d *restDriver) ToolDriver(ctx context.Context, b *Builder) (mcs.ToolDriver, error) {
	cfg, err := d.config(ctx, b)
	if err != nil {
		return nil, err
	}
	if cfg.MaxNameLength == 0 {
		cfg.MaxNameLength = b.nameBudget(d.creds.label)
	}
	return rest.NewToolDriver(cfg)
}

// Driver builds the driver alone. A driver that sends credentials loads its
// document now, so that credentials with nowhere to go (a document without
// security schemes and no auth_scheme) fail the build, as they do when an
// orchestrator lists the driver; any other load error is left to the first
// use, which tries again.
func (d *restDriver) Driver(ctx context.Context, b *Builder, opts ...mcs.Option) (mcs.Driver, error) {
	cfg, err := d.config(ctx, b)
	if err != nil {
		return nil, err
	}
	drv, err := rest.New(cfg, opts...)
	if err != nil {
		return nil, err
	}
	if cfg.Credentials != nil && cfg.AuthScheme == "" {
		if _, err := drv.ListTools(ctx); errors.Is(err, rest.ErrNoSecurityScheme) {
			return nil, err
		}
	}
	return drv, nil
}
