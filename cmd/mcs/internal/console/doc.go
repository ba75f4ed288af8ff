// Package console is the web console of mcs ui: pages to search and run the
// stack's tools, see the prompt and its budget, process a pasted model reply,
// decide the calls that wait for approval or consent (with the details their
// driver adds), follow the audit log, see and follow the sign-ins of the
// stack's drivers, sign in and out, and, with a model, chat. It is served by the mcs binary
// from files embedded in it (html/template pages, one small hand-written
// script and style sheet): no build step, nothing fetched at run time.
//
// # Security
//
// The console runs tools with the user's credentials, so it trusts nothing
// that reaches it over HTTP:
//
//   - every request must name an allowed Host (the address it is bound to,
//     and the localhost names of a loopback address), against DNS rebinding;
//   - the first visit carries the per-launch token of the printed URL, which
//     is exchanged for an HttpOnly, SameSite=Strict cookie, and the browser is
//     redirected to the same page without the token; without the cookie
//     nothing but the static files is served;
//   - every request that changes state is a POST of JSON with an Origin that
//     is the console's own and the session's CSRF token in a header;
//   - every page has a Content-Security-Policy that runs only the console's
//     script, with a nonce fresh for each response, and no inline script,
//     style or eval;
//   - every value shown (results, arguments, errors, descriptions, audit
//     records, approval details) is redacted as the audit log is
//     (internal/redact), inserted as text, never as markup, and no secret is
//     ever put in a page or an event: the Auth page shows what a token store
//     holds (signed in, expiry, scopes), never a token.
package console
