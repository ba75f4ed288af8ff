package stack

import (
	"context"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/rest"
)

func init() {
	RegisterDriverType(DriverType{
		Name:    "rest",
		Summary: "an OpenAPI 3.x or Swagger 2.0 API over HTTP (spec, base_url, include_tags, include_paths, headers, credentials, scopes, oauth, timeout, max_response_bytes)",
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
//	credentials = "env"                 # MCS_TOKEN_<LABEL>; or "device" (see decodeCredentials), "none" (the default)
//	scopes = {api_key = "petstore"}     # optional: bind a security scheme to another scope
//	timeout = "30s"
//	max_response_bytes = 1048576
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
	d.creds = decodeCredentials(t, label)
	return d
}

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

func (d *restDriver) ToolDriver(ctx context.Context, b *Builder) (mcs.ToolDriver, error) {
	cfg, err := d.config(ctx, b)
	if err != nil {
		return nil, err
	}
	return rest.NewToolDriver(cfg)
}

func (d *restDriver) Driver(ctx context.Context, b *Builder, opts ...mcs.Option) (mcs.Driver, error) {
	cfg, err := d.config(ctx, b)
	if err != nil {
		return nil, err
	}
	return rest.New(cfg, opts...)
}
