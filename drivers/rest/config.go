package rest

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcs-go/mcs/middleware/auth"
)

// Defaults applied by [NewToolDriver] to the zero values of [Config].
const (
	// DefaultTimeout bounds one tool call: connecting, sending and reading the
	// response.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxResponseBytes is the largest response body returned to the model;
	// longer bodies are cut and marked.
	DefaultMaxResponseBytes int64 = 1 << 20
	// MaxSpecBytes is the largest spec document the driver reads: a larger
	// Config.Spec is refused by NewToolDriver, a larger file or download fails
	// to load.
	MaxSpecBytes int64 = 64 << 20
)

// Config is the plain-data configuration of a REST driver. Exactly one of
// SpecURL and Spec must be set; the zero values of the other fields select the
// defaults. The driver copies the Config at construction (Credentials and
// HTTPClient are kept by reference); changing it afterwards has no effect.
type Config struct {
	// SpecURL locates the OpenAPI 3.0/3.1 or Swagger 2.0 document: an http or
	// https URL, fetched with HTTPClient, or a file path. Relative server URLs,
	// and a Swagger 2.0 document without host, resolve against an http(s)
	// SpecURL.
	SpecURL string
	// Spec is the document itself, JSON or YAML.
	Spec []byte
	// BaseURL, when set, replaces the document's servers as the base of the
	// operations: an absolute http or https URL whose path (such as /v1) and
	// query are kept. It wins over every server the document names, including
	// those declared on a path or an operation, so the document cannot send
	// requests elsewhere. User info in BaseURL is sent as basic authentication
	// and removed from results and errors.
	BaseURL string
	// IncludeTags keeps only the operations with one of these tags (compared
	// case-insensitively). Empty keeps all.
	IncludeTags []string
	// IncludePaths keeps only the operations of these path templates (compared
	// exactly, such as "/pets/{petId}"). Empty keeps all. When both filters are
	// set an operation must match both.
	IncludePaths []string
	// Headers are sent with every tool call (not with the fetch of the spec or
	// the healthcheck). They are set after the arguments, so the model cannot
	// override them, and before credentials. Their values are removed from
	// results and errors like credentials (in every form a server may echo
	// them), except those of Accept, Accept-Encoding, Accept-Language,
	// Content-Type, User-Agent, Cache-Control and Pragma. The query values of
	// BaseURL are treated the same way, and no argument may change them.
	Headers map[string]string
	// Credentials supplies the tokens of the security schemes the document
	// declares. The operator binds schemes to the provider's scopes (Scopes,
	// Name); a document never picks the scope. Nil sends every request without
	// credentials.
	Credentials auth.CredentialProvider
	// Scopes maps the names of the document's security schemes to the scopes
	// asked of Credentials, such as {"bearerAuth": "github"}. A scheme not in
	// the map is asked for the scope Name, else for the label the driver is
	// registered under in an orchestrator; with none of them the call fails with
	// an error wrapping [ErrUnboundScheme] that says how to bind it. A scheme
	// mapped to "" gets no credential.
	Scopes map[string]string
	// AuthScheme says how the credential goes out on the operations for which
	// the document declares no security requirement (GitHub's description, for
	// one, declares none): "bearer" (Authorization: Bearer TOKEN), "basic"
	// (Authorization: Basic, the token being "user:password" or its base64),
	// "header:NAME" (the token as the value of header NAME) or "query:NAME"
	// (the token as query parameter NAME). The credential is asked of
	// Credentials for the scope Name, else for the driver's label in an
	// orchestrator; Scopes does not apply. Operations with a security
	// requirement of the document's keep it, and those the document declares
	// anonymous (security: []) get no credential.
	//
	// With Credentials set, AuthScheme empty and no listed operation with a
	// security requirement, Credentials would send nothing: loading the
	// document fails with an error wrapping [ErrNoSecurityScheme] that names
	// this field.
	AuthScheme string
	// Name is the driver's own credential scope (such as "github"), asked for
	// every security scheme that Scopes does not map.
	Name string
	// HTTPClient sends requests and fetches the spec; nil means
	// http.DefaultClient. The driver uses a copy whose redirect policy follows
	// redirects only within the origin (scheme, host and port) of the request
	// and at most 10 times (the client's own policy still applies on top), and
	// never modifies the client given.
	HTTPClient *http.Client
	// Timeout bounds one tool call, response body included, the fetch of an
	// http(s) SpecURL and the healthcheck; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxResponseBytes is the largest response body returned; longer bodies are
	// cut and marked. Zero means DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// MaxNameLength is the longest tool name the driver publishes, from 16 to
	// 64; zero means 64. A longer name keeps its start and ends in "_" and seven
	// hex digits of a hash of the full name, stable across runs; its
	// description then ends with the original operationId. Set it when the
	// names gain a prefix later: behind an orchestrator's namespacing under the
	// label "github", 64-len("github__") = 56 keeps every exposed name within
	// the 64 characters providers accept (the orchestrator shortens overlong
	// namespaced names itself, but a budget here keeps them readable).
	MaxNameLength int
	// CacheDir is the directory of the tool-table cache, which lets a later
	// start list the tools of the same document without decoding it. Empty
	// means $MCS_CACHE_DIR/rest-tools when MCS_CACHE_DIR is set, else
	// mcs/rest-tools under os.UserCacheDir (no default cache in test
	// binaries). The cache holds only the listing, keyed by the SHA-256 of the
	// document's bytes; calls are always planned from the document.
	CacheDir string
	// NoCache turns the tool-table cache off.
	NoCache bool
}

// ErrInvalidConfig is wrapped by every error [NewToolDriver] and [New] return;
// the message says which field to change.
var ErrInvalidConfig = errors.New("invalid rest config")

// source is where the spec comes from.
type source struct {
	url    *url.URL // http(s) spec URL; nil otherwise
	file   string   // file path; "" otherwise
	inline []byte   // inline document; nil otherwise
}

// String names the source for error messages without credentials in it.
func (s source) String() string {
	switch {
	case s.url != nil:
		return redactURL(s.url)
	case s.file != "":
		return s.file
	default:
		return "inline spec"
	}
}

// normalize validates cfg and returns a private copy with the defaults applied
// and the spec source parsed.
func normalize(cfg Config) (Config, source, *url.URL, error) {
	fail := func(format string, args ...any) (Config, source, *url.URL, error) {
		return Config{}, source{}, nil, fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	var src source
	switch {
	case cfg.SpecURL != "" && len(cfg.Spec) > 0:
		return fail("both SpecURL and Spec are set; set exactly one")
	case len(cfg.Spec) > 0:
		if int64(len(cfg.Spec)) > MaxSpecBytes {
			return fail("Spec is %d bytes, more than the limit of %d", len(cfg.Spec), MaxSpecBytes)
		}
		src.inline = slices.Clone(cfg.Spec)
	case cfg.SpecURL != "":
		u, isURL, err := parseSpecURL(cfg.SpecURL)
		if err != nil {
			return fail("%v", err)
		}
		if isURL {
			src.url = u
		} else {
			src.file = cfg.SpecURL
		}
	default:
		return fail("neither SpecURL nor Spec is set; set one of them")
	}

	var base *url.URL
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fail("BaseURL %q is not an absolute http or https URL", cfg.BaseURL)
		}
		if u.Fragment != "" {
			return fail("BaseURL %q has a fragment; remove it", cfg.BaseURL)
		}
		base = u
	}
	for name, value := range cfg.Headers {
		if !validHeaderName(name) {
			return fail("header name %q is not a valid HTTP header name", name)
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			return fail("header %q has a value with a line break or NUL; remove it", name)
		}
	}
	if cfg.Timeout < 0 {
		return fail("Timeout is negative (%v); use zero for the default", cfg.Timeout)
	}
	if cfg.MaxNameLength != 0 && (cfg.MaxNameLength < minNameLen || cfg.MaxNameLength > maxNameLen) {
		return fail("MaxNameLength is %d; give a length from %d to %d, or zero for %d", cfg.MaxNameLength, minNameLen, maxNameLen, maxNameLen)
	}
	if err := CheckAuthScheme(cfg.AuthScheme); err != nil {
		return fail("AuthScheme: %v", err)
	}
	if cfg.MaxResponseBytes < 0 {
		return fail("MaxResponseBytes is negative (%d); use zero for the default", cfg.MaxResponseBytes)
	}

	out := cfg
	out.Spec = src.inline
	out.IncludeTags = slices.Clone(cfg.IncludeTags)
	out.IncludePaths = slices.Clone(cfg.IncludePaths)
	out.Headers = maps.Clone(cfg.Headers)
	out.Scopes = maps.Clone(cfg.Scopes)
	if out.Timeout == 0 {
		out.Timeout = DefaultTimeout
	}
	if out.MaxResponseBytes == 0 {
		out.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return out, src, base, nil
}

// Forms of Config.AuthScheme.
const (
	authBearer = "bearer"
	authBasic  = "basic"
	authHeader = "header:"
	authQuery  = "query:"
)

// authStructural are headers an AuthScheme may not set: they frame the
// request rather than authenticate it.
var authStructural = []string{"host", "content-length", "content-type", "transfer-encoding", "connection", "upgrade", "te", "trailer", "cookie"}

// CheckAuthScheme reports whether s is a valid Config.AuthScheme: empty,
// "bearer", "basic", "header:NAME" with NAME an HTTP header name that does not
// frame the request (not Host, Content-Length, Content-Type, Cookie, ...), or
// "query:NAME" with a NAME without white space or control characters. The
// error says what is wrong and lists the valid forms.
func CheckAuthScheme(s string) error {
	_, err := parseAuthScheme(s)
	return err
}

// parseAuthScheme returns the scheme s stands for; nil for "".
func parseAuthScheme(s string) (*openapi3.SecurityScheme, error) {
	const forms = `use "bearer", "basic", "header:NAME" or "query:NAME"`
	lower := strings.ToLower(s)
	switch {
	case s == "":
		return nil, nil
	case lower == authBearer:
		return &openapi3.SecurityScheme{Type: "http", Scheme: "bearer"}, nil
	case lower == authBasic:
		return &openapi3.SecurityScheme{Type: "http", Scheme: "basic"}, nil
	case strings.HasPrefix(lower, authHeader):
		name := s[len(authHeader):]
		if !validHeaderName(name) {
			return nil, fmt.Errorf("%q does not name a valid HTTP header after %q; %s", s, s[:len(authHeader)], forms)
		}
		if slices.Contains(authStructural, strings.ToLower(name)) {
			return nil, fmt.Errorf("%q would put the credential in the %s header, which frames the request; name the header the API reads the credential from", s, name)
		}
		return &openapi3.SecurityScheme{Type: "apiKey", In: "header", Name: name}, nil
	case strings.HasPrefix(lower, authQuery):
		name := s[len(authQuery):]
		if name == "" || strings.IndexFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
			return nil, fmt.Errorf("%q does not name a query parameter after %q (empty, or with white space or control characters); %s", s, s[:len(authQuery)], forms)
		}
		return &openapi3.SecurityScheme{Type: "apiKey", In: "query", Name: name}, nil
	default:
		return nil, fmt.Errorf("%q is not an auth scheme; %s", s, forms)
	}
}

// parseSpecURL tells an http(s) URL from a file path. Another URL scheme is an
// error; a Windows drive letter ("C:\...") is a path.
func parseSpecURL(s string) (*url.URL, bool, error) {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok {
		return nil, false, nil
	}
	switch strings.ToLower(scheme) {
	case "http", "https":
		u, err := url.Parse(s)
		if err != nil {
			return nil, false, fmt.Errorf("SpecURL is not a valid URL: %v", err)
		}
		if u.Host == "" {
			return nil, false, fmt.Errorf("SpecURL %q has no host", redactURL(u))
		}
		return u, true, nil
	default:
		return nil, false, fmt.Errorf("SpecURL scheme %q is not supported; use an http(s) URL or a file path", scheme)
	}
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// redactURL renders u without user info, query and fragment, which may carry
// credentials.
func redactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.ForceQuery = false
	c.Fragment = ""
	c.RawFragment = ""
	return c.String()
}
