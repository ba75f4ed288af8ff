package rest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/textcut"
)

// Version is the version of the REST driver reported in its Meta.
const Version = "0.1.0"

// driverID is the Meta ID of the REST driver.
const driverID = "mcs-go/rest"

// ToolDriver publishes the operations of an OpenAPI 3.0/3.1 or Swagger 2.0
// document as tools and executes them over HTTP. It is the technical half of
// the REST driver; [New] adds the LLM-facing half.
//
// Construction does no I/O. The document is loaded on first use (ListTools,
// HasTool, ExecuteTool); a failed load is returned to that caller and tried
// again on the next call, and a successful one is kept for the driver's life.
//
// A ToolDriver is safe for concurrent use.
type ToolDriver struct {
	cfg     Config
	src     source
	base    *url.URL     // Config.BaseURL, parsed; nil when unset
	client  *http.Client // a copy of Config.HTTPClient with the redirect policy
	secrets []string     // configured header values that look like credentials
	// authScheme is Config.AuthScheme as a security scheme; nil when unset.
	authScheme *openapi3.SecurityScheme

	// loadLock is a mutex that a waiting caller can leave when its context
	// ends: a one-slot channel, held while the document loads.
	loadLock chan struct{}
	spec     atomic.Pointer[spec]
	cache    *toolCache // nil: no tool-table cache
	// version counts the changes of the listing after the first load (a
	// cached listing the document contradicted).
	version atomic.Uint64
}

// Driver is the complete REST driver: the [ToolDriver] with the LLM-facing
// half of [mcs.BaseDriver] (prompts, response processing, middleware) and a
// healthcheck. The BaseDriver forwards the listing protocol (HasTool,
// ToolDefinition, ToolsVersion, SettleTools) to the ToolDriver. It is safe for
// concurrent use.
type Driver struct {
	*mcs.BaseDriver
	td *ToolDriver
}

var (
	_ mcs.ToolDriver          = (*ToolDriver)(nil)
	_ mcs.ToolLookup          = (*ToolDriver)(nil)
	_ mcs.ToolDefiner         = (*ToolDriver)(nil)
	_ mcs.VersionedTools      = (*ToolDriver)(nil)
	_ mcs.ToolSettler         = (*ToolDriver)(nil)
	_ mcs.SupportsHealthcheck = (*ToolDriver)(nil)

	_ mcs.Driver                 = (*Driver)(nil)
	_ mcs.ToolDriver             = (*Driver)(nil)
	_ mcs.SupportsHealthcheck    = (*Driver)(nil)
	_ mcs.SupportsToolMiddleware = (*Driver)(nil)
	_ mcs.SupportsNativeTools    = (*Driver)(nil)
	_ mcs.SupportsStreaming      = (*Driver)(nil)
	_ mcs.VersionedTools         = (*Driver)(nil)
	_ mcs.ToolSettler            = (*Driver)(nil)
)

// NewToolDriver validates cfg and returns a ToolDriver. It does no I/O: the
// document is read on first use. The error wraps [ErrInvalidConfig] and says
// what to change.
func NewToolDriver(cfg Config) (*ToolDriver, error) {
	c, src, base, err := normalize(cfg)
	if err != nil {
		return nil, err
	}
	secrets := headerSecrets(c.Headers)
	secrets = append(secrets, baseQuerySecrets(base)...)
	// User info in BaseURL, and in an http(s) SpecURL that relative server URLs
	// resolve against, is sent as basic authentication.
	secrets = append(secrets, userInfoSecrets(base)...)
	secrets = append(secrets, userInfoSecrets(src.url)...)
	var forms []string
	for _, sec := range secrets {
		forms = append(forms, secretForms(sec)...)
	}
	secrets = forms
	scheme, _ := parseAuthScheme(c.AuthScheme) // checked by normalize
	return &ToolDriver{
		authScheme: scheme,
		cfg:        c,
		src:        src,
		base:       base,
		client:     newClient(c.HTTPClient),
		secrets:    secrets,
		loadLock:   make(chan struct{}, 1),
		cache:      newToolCache(c),
	}, nil
}

// New returns the complete REST driver over cfg, with opts (middleware, prompt
// strategy, ...) applied to its BaseDriver. It does no I/O. The error wraps
// [ErrInvalidConfig].
func New(cfg Config, opts ...mcs.Option) (*Driver, error) {
	td, err := NewToolDriver(cfg)
	if err != nil {
		return nil, err
	}
	return &Driver{BaseDriver: mcs.NewBaseDriver(td, opts...), td: td}, nil
}

// Meta returns the driver's data sheet: the BaseDriver's capabilities plus
// healthcheck.
func (d *Driver) Meta() mcs.Meta { return mcs.DeriveCapabilities(d.BaseDriver.Meta(), d) }

// Healthcheck reports whether the API is reachable; see [ToolDriver.Healthcheck].
func (d *Driver) Healthcheck(ctx context.Context) mcs.HealthResult { return d.td.Healthcheck(ctx) }

// Meta returns the data sheet of the REST tool driver: ID mcs-go/rest, binding
// rest/http/OpenAPI, capabilities orchestratable and healthcheck.
func (d *ToolDriver) Meta() mcs.Meta {
	return mcs.DeriveCapabilities(mcs.Meta{
		ID:       driverID,
		Name:     "REST (OpenAPI)",
		Version:  Version,
		Bindings: []mcs.Binding{{Capability: "rest", Adapter: "http", SpecFormat: "OpenAPI"}},
	}, d)
}

// load returns the loaded document, loading it when no earlier call has. The
// spec may come from the tool-table cache and then holds the listing only;
// loadOps returns one that can execute.
func (d *ToolDriver) load(ctx context.Context) (*spec, error) {
	if s := d.spec.Load(); s != nil {
		return s, nil
	}
	return d.loadLocked(ctx, func(s *spec) bool { return s != nil })
}

// loadOps returns the loaded document with its operations, decoding the
// document when the listing came from the cache.
func (d *ToolDriver) loadOps(ctx context.Context) (*spec, error) {
	if s := d.spec.Load(); s != nil && s.cached == nil {
		return s, nil
	}
	return d.loadLocked(ctx, func(s *spec) bool { return s != nil && s.cached == nil })
}

// loadLocked loads under loadLock unless done accepts what another caller
// loaded meanwhile.
func (d *ToolDriver) loadLocked(ctx context.Context, done func(*spec) bool) (*spec, error) {
	select {
	case d.loadLock <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("load OpenAPI document %s: %w", d.src, context.Cause(ctx))
	}
	defer func() { <-d.loadLock }()
	prev := d.spec.Load()
	if done(prev) {
		return prev, nil
	}
	var data []byte
	var entry cacheEntry
	if prev != nil {
		data, entry = prev.cached.data, prev.cached.entry
	} else {
		var err error
		if data, err = d.fetch(ctx); err != nil {
			return nil, fmt.Errorf("load OpenAPI document %s: %w", d.src, err)
		}
		if d.cache != nil {
			entry = d.cache.entry(data, d.cfg)
			if tools, secured, ok := d.cache.read(entry); ok {
				s := cachedSpec(tools, secured, data, entry)
				if err := d.checkSecured(s); err != nil {
					return nil, fmt.Errorf("load OpenAPI document %s: %w", d.src, err)
				}
				d.spec.Store(s)
				return s, nil
			}
		}
	}
	scheme := ""
	if d.src.url != nil {
		scheme = strings.ToLower(d.src.url.Scheme)
	}
	doc, ol, err := parse(ctx, data, scheme)
	if err == nil {
		err = checkPaths(doc.Paths.Keys())
	}
	if err != nil {
		return nil, fmt.Errorf("load OpenAPI document %s: %w", d.src, err)
	}
	b := builder{doc: doc, cfg: d.cfg, specURL: d.src.url, base: d.base}
	s, err := b.build(ctx, ol)
	if err == nil {
		err = d.checkSecured(s)
	}
	if err != nil {
		return nil, fmt.Errorf("load OpenAPI document %s: %w", d.src, err)
	}
	if d.cache != nil {
		switch {
		case prev == nil:
			d.cache.write(entry, s.tools, s.secured)
		case !sameTools(prev.tools, s.tools) || prev.secured != s.secured:
			// The cache listed what the document does not: drop the entry
			// and publish the document's listing.
			d.cache.remove(entry)
			d.version.Add(1)
		}
	}
	d.spec.Store(s)
	return s, nil
}

// checkSecured refuses a listing whose credentials would go nowhere: with
// Config.Credentials set and Config.AuthScheme empty, some listed operation
// must have a security requirement of the document's.
func (d *ToolDriver) checkSecured(s *spec) error {
	if d.cfg.Credentials == nil || d.authScheme != nil || s.secured || len(s.tools) == 0 {
		return nil
	}
	return errNoSecurityScheme()
}

// ToolsVersion changes when the listing changes after the first load: when a
// listing from the tool-table cache turned out to differ from the document's
// (see Config.CacheDir). An orchestrator holding the driver then lists again.
func (d *ToolDriver) ToolsVersion() uint64 { return d.version.Load() }

// ListTools returns one tool per operation, in document order (paths, then
// methods as written), filtered by IncludeTags and IncludePaths. The first call
// loads the document; a load error is returned and the load is tried again on
// the next call. The returned slice and its schemas belong to the caller.
func (d *ToolDriver) ListTools(ctx context.Context) ([]mcs.Tool, error) {
	s, err := d.load(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]mcs.Tool, len(s.tools))
	for i, t := range s.tools {
		out[i] = t.Clone()
	}
	return out, nil
}

// HasTool reports whether the document defines a tool called name (after the
// filters), loading the document when needed; a load error is returned as by
// ListTools.
func (d *ToolDriver) HasTool(ctx context.Context, name string) (bool, error) {
	s, err := d.load(ctx)
	if err != nil {
		return false, err
	}
	_, ok := s.ops[name]
	return ok, nil
}

// ExecuteTool sends the request of the named operation and returns the
// response body as a string. A load error is returned as by ListTools; a name
// the document does not define fails with an error wrapping [mcs.ErrUnknownTool].
//
// Arguments go where the document says (path, query, header, cookie, body).
// An unknown argument name, a missing required argument or a value that is
// not allowed where it goes (an empty, "." or ".." path value; a header value
// with a line break) fails with an *[mcs.ArgumentsError] and nothing is sent. The
// host comes from the configuration or the document, never from arguments.
//
// Credentials come from Config.Credentials, asked with the security scheme's
// name; a *auth.Challenge it returns is returned unchanged. Credentials never
// appear in results or errors.
//
// A 2xx response returns its body (cut at MaxResponseBytes with a marker). Any
// other status fails with a [*StatusError]. The call is bounded by
// Config.Timeout and ctx.
func (d *ToolDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	s, err := d.loadOps(ctx)
	if err != nil {
		return nil, err
	}
	op := s.ops[name]
	if op == nil {
		return nil, fmt.Errorf("%w %q: the document has no such operation; list the tools for the valid names", mcs.ErrUnknownTool, calledName(ctx, name))
	}
	req, err := op.prepare(args)
	if err != nil {
		if ae, ok := err.(*mcs.ArgumentsError); ok {
			ae.Tool = calledName(ctx, name)
		}
		return nil, err
	}
	// Config.Timeout bounds the whole call, obtaining the credential included.
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	creds, err := d.credentials(ctx, op, req.url)
	if err != nil {
		return nil, err
	}
	text, err := d.send(ctx, op, req, creds)
	if err != nil {
		return nil, err
	}
	return text, nil
}

// calledName is the name the model called the tool by: the name in the call's
// mcs.CallInfo when a driver other than a REST driver's own BaseDriver put it
// there (an orchestrator exposing the tool as github__issues_get), else name.
func calledName(ctx context.Context, name string) string {
	if info, ok := mcs.CallInfoFromContext(ctx); ok && info.Tool.Name != "" && info.Driver.ID != driverID {
		return info.Tool.Name
	}
	return name
}

// send performs the request and reads the response.
func (d *ToolDriver) send(ctx context.Context, op *operation, r *request, creds credentials) (string, error) {
	red := newRedactor(creds.secrets, d.secrets)
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()

	u := *r.url
	if len(creds.query) > 0 {
		q := u.Query()
		for _, kv := range creds.query {
			q.Set(kv[0], kv[1])
		}
		u.RawQuery = q.Encode()
	}
	var body io.Reader
	if r.hasBody {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, op.method, u.String(), body)
	if err != nil {
		return "", fmt.Errorf("%s %s: %v", op.method, redactURL(&u), red.apply(err.Error()))
	}
	// Arguments first, then configured headers, then credentials: each may
	// override the one before.
	for k, v := range r.header {
		req.Header[k] = v
	}
	for _, k := range sortedKeys(d.cfg.Headers) {
		req.Header.Set(k, d.cfg.Headers[k])
	}
	for k, v := range creds.header {
		req.Header[k] = v
	}
	cookies := slices.Concat(r.cookies, creds.cookies)
	if len(cookies) > 0 {
		if c := req.Header.Get("Cookie"); c != "" {
			cookies = append([]string{c}, cookies...)
		}
		req.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	if r.hasBody {
		req.Header.Set("Content-Type", r.media)
	}

	resp, err := d.client.Do(req)
	if err != nil {
		err = redactClientError(err)
		return "", &redactedError{msg: red.apply(err.Error()), err: err}
	}
	defer resp.Body.Close()
	return readResponse(resp, op.method+" "+redactURL(&u), d.cfg.MaxResponseBytes, red, op.htmlOK)
}

// readResponse turns the response to call (such as "GET <url>", for errors)
// into the result: the body of a 2xx response, redacted and cut at limit with
// a marker, or a *StatusError that quotes the first maxErrorBody bytes of any
// other response.
//
// An HTML page reaches the model as a one-line summary with the status
// (summarizeHTML), on success only when htmlOK is false (the operation does not
// document an HTML response). A JSON error body is quoted compacted and its
// message is kept in StatusError.Message.
func readResponse(resp *http.Response, call string, limit int64, red redactor, htmlOK bool) (string, error) {
	// Read past what is shown by the longest credential, so that one the
	// server echoes across the cut is found and removed whole.
	slack := int64(max(red.longest, 1))
	data, err := io.ReadAll(io.LimitReader(resp.Body, min(max(limit, maxErrorBody), math.MaxInt64-slack)+slack))
	if err != nil {
		return "", &redactedError{msg: red.apply(fmt.Sprintf("%s: read the response: %v", call, err)), err: err}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, msg := errorBody(resp, data, int64(len(data)) > max(limit, maxErrorBody))
		if len(body) > maxErrorBody {
			body = body[:red.cut(body, maxErrorBody)]
		}
		return "", &StatusError{
			StatusCode: resp.StatusCode,
			Reason:     red.apply(reason(resp)),
			Body:       strings.ToValidUTF8(textcut.TrimIncomplete(textcut.Prefix(red.apply(body), maxErrorBody)), "\uFFFD"),
			Message:    strings.ToValidUTF8(red.apply(msg), "\uFFFD"),
		}
	}
	if len(data) == 0 {
		return red.apply(statusLine(resp) + " (empty body)"), nil
	}
	truncated := int64(len(data)) > limit
	if !htmlOK && isHTML(resp.Header.Get("Content-Type"), data) {
		return red.apply(statusLine(resp) + ": " + summarizeHTML(data[:min(int64(len(data)), limit)], int(min(int64(len(data)), limit)), truncated)), nil
	}
	head := data
	if truncated {
		head = data[:limit]
	}
	if ct := resp.Header.Get("Content-Type"); !utf8.ValidString(textcut.TrimIncomplete(string(head))) && !textual(ct) {
		size := fmt.Sprintf("%d bytes", len(data))
		if truncated {
			size = fmt.Sprintf("more than %d bytes", limit)
		}
		return red.apply(fmt.Sprintf("%s: binary response of %s (%s), not shown", statusLine(resp), size, ct)), nil
	}
	if !truncated {
		return strings.ToValidUTF8(red.apply(string(data)), "\uFFFD"), nil
	}
	text := string(data)
	text = red.apply(text[:red.cut(text, int(limit))])
	text = strings.ToValidUTF8(textcut.TrimIncomplete(text[:min(int64(len(text)), limit)]), "\uFFFD")
	return text + fmt.Sprintf("\n[response truncated: the body is longer than %d bytes; only the first %d bytes are shown]", limit, limit), nil
}

// textual reports whether a Content-Type is text a model can read.
func textual(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"),
		mt == "application/json", mt == "application/xml", mt == "application/yaml",
		mt == "application/javascript", mt == "application/x-www-form-urlencoded":
		return true
	}
	return false
}

// Healthcheck reports whether the API answers: it sends a GET to the spec URL
// when the document comes from an http(s) URL, else to the base URL (loading
// the document when BaseURL is not set). 2xx and 3xx are OK, 4xx a WARNING,
// 5xx and no answer an ERROR; Detail gives the reason. It honours ctx and
// Config.Timeout and does not follow redirects.
func (d *ToolDriver) Healthcheck(ctx context.Context) mcs.HealthResult {
	target := d.src.url
	if target == nil {
		target = d.base
	}
	if target == nil {
		s, err := d.loadOps(ctx)
		if err != nil {
			return mcs.HealthResult{Status: mcs.HealthError, Detail: err.Error()}
		}
		if s.base == nil {
			return mcs.HealthResult{Status: mcs.HealthError, Detail: fmt.Sprintf("the document gives no usable server URL: %v", s.baseErr)}
		}
		target = s.base
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	red := newRedactor(d.secrets)
	shown := redactURL(target)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		return mcs.HealthResult{Status: mcs.HealthError, Detail: red.apply(fmt.Sprintf("GET %s: %v", shown, err))}
	}
	client := *d.client
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		return mcs.HealthResult{Status: mcs.HealthError, Detail: red.apply(fmt.Sprintf("unreachable: %v", redactClientError(err)))}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	detail := red.apply(fmt.Sprintf("GET %s: %s", shown, statusLine(resp)))
	switch {
	case resp.StatusCode < 400:
		return mcs.HealthResult{Status: mcs.HealthOK, Detail: detail}
	case resp.StatusCode < 500:
		return mcs.HealthResult{Status: mcs.HealthWarning, Detail: detail}
	default:
		return mcs.HealthResult{Status: mcs.HealthError, Detail: detail}
	}
}
