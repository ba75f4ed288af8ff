// Package redact copies call arguments and results for audit records and
// telemetry (the hooks audit, tracing content) with secrets removed and long
// strings cut:
//
//   - a key whose normalised form (lower case, "ſ" as "s", without "_", "-", "."
//     and spaces) contains a sensitive fragment (password, token, api_key, auth,
//     cookie, ...) has its value replaced by [Redacted], at any depth;
//   - so has the value of a name/value pair whose name is sensitive
//     ([{"name": "Authorization", "value": "x"}], ["token", "x"]);
//   - inside strings, "name: value" and "name=value" pairs with a sensitive name
//     ("Authorization: Bearer x", "?token=x", "API_KEY=x", "\"password\":\"x\"")
//     and credentials after "Bearer " or "Basic " are replaced; a quoted name in
//     the prose of an error followed by a colon and an ordinary word
//     (`security scheme "api_key": auth: no credential`) is not a pair;
//   - [Redactor.Text] also removes the redacted values of a call's arguments from
//     other text, such as an upstream error that echoes the request.
package redact

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/mcs-go/mcs/internal/clone"
	"github.com/mcs-go/mcs/internal/textcut"
)

// Redacted replaces the value of a sensitive key.
const Redacted = "[REDACTED]"

// DefaultMaxValueLen is the length in bytes beyond which strings are cut.
const DefaultMaxValueLen = 256

// DefaultKeys returns the sensitive key fragments of the hooks audit: password,
// passwd, pwd, pass, secret, token, api_key, apikey, api.key, access_key, auth,
// bearer, jwt, cookie, session_id, sessionid, credential, private_key and
// signature. The slice is a new copy on every call.
func DefaultKeys() []string {
	return []string{
		"password", "passwd", "pwd", "pass", "secret", "token", "api_key", "apikey", "api.key",
		"access_key", "auth", "bearer", "jwt", "cookie", "session_id", "sessionid",
		"credential", "private_key", "signature",
	}
}

// Redactor copies values with secrets redacted and long strings cut. It is
// immutable and safe for concurrent use.
type Redactor struct {
	keys   []string // normalised fragments
	maxLen int
}

// New returns a Redactor for the key fragments keys (nil: [DefaultKeys]; empty
// fragments are ignored) that cuts strings longer than maxValueLen bytes
// (<= 0: strings are kept whole).
func New(keys []string, maxValueLen int) *Redactor {
	if keys == nil {
		keys = DefaultKeys()
	}
	r := &Redactor{maxLen: maxValueLen}
	for _, k := range keys {
		if k = Normalise(k); k != "" {
			r.keys = append(r.keys, k)
		}
	}
	return r
}

// keyReplacer drops the separators and folds "ſ" (long s) to "s": the pair
// expression matches names case-insensitively, where "ſ" is an "s" (and the
// Kelvin sign a "k", which strings.ToLower already makes one).
var keyReplacer = strings.NewReplacer("-", "", "_", "", " ", "", ".", "", "ſ", "s")

// Normalise returns key in lower case, "ſ" as "s", without "-", "_", "." and
// spaces.
func Normalise(key string) string {
	return keyReplacer.Replace(strings.ToLower(strings.TrimSpace(key)))
}

// noPrefilter makes scrub run the regular expressions on every text, so that a
// test can compare the prefilter with them.
var noPrefilter = false

// anyFragment reports whether norm, a normalised text, holds a sensitive fragment.
func (r *Redactor) anyFragment(norm string) bool {
	for _, f := range r.keys {
		if strings.Contains(norm, f) {
			return true
		}
	}
	return false
}

// Sensitive reports whether the value of key is redacted.
func (r *Redactor) Sensitive(key string) bool {
	k := Normalise(key)
	for _, f := range r.keys {
		if strings.Contains(k, f) {
			return true
		}
	}
	return false
}

// Value returns a copy of v with secrets redacted and long strings cut. Maps with
// string keys become map[string]any and slices []any; raw JSON is decoded first;
// other byte slices are replaced by their length ("[12 bytes]"). Nesting deeper
// than clone.MaxDepth becomes "[too deep]".
func (r *Redactor) Value(v any) any { return r.value(v, 0, nil) }

// Args returns Value(args) and the string values it redacted, for [Redactor.Text].
func (r *Redactor) Args(args map[string]any) (map[string]any, []string) {
	var known []string
	out, _ := r.value(args, 0, &known).(map[string]any)
	return out, known
}

func (r *Redactor) value(v any, depth int, known *[]string) any {
	if depth > clone.MaxDepth {
		return "[too deep]"
	}
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return r.Text(x, nil)
	case map[string]any:
		if x == nil {
			return nil
		}
		pair, isPair := pairName(x)
		isPair = isPair && r.Sensitive(pair)
		out := make(map[string]any, len(x))
		for k, e := range x {
			if r.Sensitive(k) || (isPair && slices.Contains(pairValueKeys, k)) {
				out[k] = Redacted
				remember(e, known)
			} else {
				out[k] = r.value(e, depth+1, known)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		if len(x) == 2 { // ["Authorization", "Bearer x"]
			if name, ok := x[0].(string); ok && r.Sensitive(name) {
				out[0] = r.Cut(name)
				out[1] = Redacted
				remember(x[1], known)
				return out
			}
		}
		for i, e := range x {
			out[i] = r.value(e, depth+1, known)
		}
		return out
	case json.RawMessage:
		var decoded any
		if json.Unmarshal(x, &decoded) != nil {
			return r.Text(string(x), nil)
		}
		return r.value(decoded, depth, known)
	case []byte:
		return fmt.Sprintf("[%d bytes]", len(x))
	case json.Number, bool, float64, int:
		return v
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String || rv.IsNil() {
			return v
		}
		m := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			m[it.Key().String()] = it.Value().Interface()
		}
		return r.value(m, depth, known)
	case reflect.Slice, reflect.Array:
		if rv.Type().Elem().Kind() == reflect.Uint8 { // named byte slices and arrays
			return fmt.Sprintf("[%d bytes]", rv.Len())
		}
		s := make([]any, rv.Len())
		for i := range rv.Len() {
			s[i] = rv.Index(i).Interface()
		}
		return r.value(s, depth, known)
	case reflect.String: // a named string type
		return r.value(rv.String(), depth, known)
	}
	return v
}

// remember appends the strings of a redacted value to known.
func remember(v any, known *[]string) {
	if known == nil {
		return
	}
	switch x := v.(type) {
	case string:
		*known = append(*known, x)
		if _, after, ok := strings.Cut(x, " "); ok { // "Bearer xyz": xyz alone too
			*known = append(*known, after)
		}
	case []any:
		for _, e := range x {
			remember(e, known)
		}
	case map[string]any:
		for _, e := range x {
			remember(e, known)
		}
	}
}

// scrubSlack is how far past the cut Text looks for secrets, so that one that
// straddles the cut is removed whole.
const scrubSlack = 1024

// Text removes the secrets in s (sensitive name/value pairs, credentials after an
// authentication scheme word, and every string of known) and cuts it. Only the
// part that can be shown, and scrubSlack bytes after it, is searched, so a long
// value costs no more than a short one.
func (r *Redactor) Text(s string, known []string) string {
	if r.maxLen <= 0 || len(s) <= r.maxLen+scrubSlack {
		return r.Cut(r.scrub(s, known))
	}
	head := r.scrub(textcut.Prefix(s, r.maxLen+scrubSlack), known)
	p := textcut.Prefix(head, r.maxLen)
	return fmt.Sprintf("%s…(%d more bytes)", p, len(s)-r.maxLen)
}

// Cut shortens s to at most the Redactor's length on a rune boundary and says how
// many bytes were left out.
func (r *Redactor) Cut(s string) string {
	if r.maxLen <= 0 || len(s) <= r.maxLen {
		return s
	}
	p := textcut.Prefix(s, r.maxLen)
	return fmt.Sprintf("%s…(%d more bytes)", p, len(s)-len(p))
}

// secretPair finds "name: value" and "name=value" pairs inside text, in the
// spellings of headers (Authorization: Bearer x), query strings (?token=x&...),
// shell and environment lines (API_KEY=x) and JSON ("password":"x"). The value
// may start with an authentication scheme word, which is kept. Groups: 1 the quote
// before the name (may be empty), 2 the name, 3 the quote after it, 4 the
// separator, 5 the quote before the value, 6 the scheme word with its space (may
// be empty), 7 the value.
var secretPair = regexp.MustCompile(`(?i)(["']?)([a-z0-9][a-z0-9_.\-]{0,63})(["']?)\s*([:=])\s*(["']?)((?:bearer|basic|token|digest|apikey|negotiate)\s+)?([^\s"'&;,<>?\\]+)`)

// maxProseWord is the length in bytes of the longest value taken for a word of
// prose by quotedNameInProse; a longer run of letters may be a key.
const maxProseWord = 24

// quotedNameInProse reports whether a match of secretPair is a quoted name in
// the prose of an error rather than a pair: `security scheme "api_key": auth: no
// credential`, as Go's "%q: %w" writes it. That is a name in quotes, a colon, and
// an unquoted value that is an ordinary word (letters only, at most maxProseWord
// bytes, perhaps followed by ':', '.', ')' or '!'). A quoted value
// ("api_key": "sk-1"), a value with a digit or a symbol ("api_key": sk-1), a
// scheme word ("Authorization": Bearer x), '=' and an unquoted name
// (api_key: x) are still pairs.
func quotedNameInProse(m []string) bool {
	if m[1] == "" || m[3] == "" || m[4] != ":" || m[5] != "" || m[6] != "" {
		return false
	}
	return proseWord(m[7])
}

// proseWord reports whether a value is an ordinary word: letters only, at most
// maxProseWord bytes, perhaps followed by ':', '.', ')' or '!'.
func proseWord(v string) bool {
	word := strings.TrimRight(v, ":.)!")
	if word == "" || len(word) > maxProseWord {
		return false
	}
	for _, c := range word {
		if !unicode.IsLetter(c) {
			return false
		}
	}
	return true
}

// chainedProse reports whether a match that starts where the value of a
// "word: " before it starts is the next link of an error chain ("rest:
// credential: authentication required"): a colon and an ordinary word, with no
// quotes and no scheme word. "error: token=abc" and "sent: Authorization: Basic
// x" are still pairs.
func chainedProse(m []string) bool {
	return m[4] == ":" && m[5] == "" && m[6] == "" && proseWord(m[7])
}

// bearerWord finds credentials after an authentication scheme word wherever it
// stands ("... -H Bearer eyJ..."). Group 1 is the scheme and its space, 2 the token.
var bearerWord = regexp.MustCompile(`(?i)\b(bearer\s+|basic\s+)([A-Za-z0-9\-._~+/]{8,}=*)`)

// scrub removes the secrets text carries inside it: the values of name/value
// pairs whose name is sensitive, credentials after "Bearer " or "Basic ", and every
// known secret (the values of sensitive arguments of the same call).
func (r *Redactor) scrub(s string, known []string) string {
	for _, k := range known {
		if len(k) >= minKnownLen {
			s = strings.ReplaceAll(s, k, Redacted)
		}
	}
	if !mayHoldSecret(s) {
		return s
	}
	// The name of a pair is part of s, so its normalised form is part of s's: when
	// no sensitive fragment occurs in the normalised s, no pair can be sensitive,
	// and the regular expressions need not run.
	norm := Normalise(s)
	if strings.ContainsAny(s, ":=") && (noPrefilter || r.anyFragment(norm)) {
		s = r.scrubPairs(s)
	}
	if !noPrefilter && !strings.Contains(norm, "bearer") && !strings.Contains(norm, "basic") {
		return s
	}
	return replaceGroups(s, bearerWord, func(m []string) (string, bool) {
		if strings.HasPrefix(m[2], Redacted) {
			return "", false
		}
		return m[1] + Redacted, true
	}, 1)
}

// scrubPairs replaces the values of the secretPair matches of s whose name is
// sensitive. A match whose name is not sensitive may hold a pair in its value
// ("error: token=abc", "pkg: password=x"): the search goes on from the start of
// that value, not from the end of the match. After a quoted name in prose it goes
// on after the match, as the words there are prose.
func (r *Redactor) scrubPairs(s string) string {
	var b strings.Builder
	last := 0
	chain := -1 // where the value of a "word:" match starts, when the search goes on there
	for pos := 0; pos < len(s); {
		loc := secretPair.FindStringSubmatchIndex(s[pos:])
		if loc == nil {
			break
		}
		m := submatches(s[pos:], loc)
		if quotedNameInProse(m) {
			pos += loc[1] // the words after a quoted name in prose are prose too
			chain = -1
			continue
		}
		if !r.Sensitive(m[2]) || (pos+loc[0] == chain && chainedProse(m)) {
			pos += loc[2*5] // the value's opening quote, or the value
			chain = -1
			if m[4] == ":" {
				chain = pos
			}
			continue
		}
		chain = -1
		start := loc[2*6] // the scheme word, else the value
		if start < 0 {
			start = loc[2*7]
		}
		b.WriteString(s[last : pos+start])
		b.WriteString(m[6] + Redacted)
		last = pos + loc[1]
		pos = last
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// minKnownLen is the shortest argument value searched for in other text; shorter
// values would match ordinary words.
const minKnownLen = 4

// mayHoldSecret is a cheap test that lets most values skip the regular
// expressions: a pair needs ':' or '=', a scheme word needs a space.
func mayHoldSecret(s string) bool {
	return strings.ContainsAny(s, ":= ")
}

// replaceGroups replaces, in every match of re in s, the text from the start of
// group from to the end of the match with what f returns, when f says so.
func replaceGroups(s string, re *regexp.Regexp, f func(m []string) (string, bool), from int) string {
	idx := re.FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, loc := range idx {
		repl, ok := f(submatches(s, loc))
		if !ok {
			continue
		}
		start := loc[2*from]
		if start < 0 { // the group did not take part: replace from the next one
			start = loc[2*(from+1)]
		}
		b.WriteString(s[last:start])
		b.WriteString(repl)
		last = loc[1]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// submatches returns the groups of s that loc, a submatch index, locates; "" for
// a group that did not take part.
func submatches(s string, loc []int) []string {
	m := make([]string, len(loc)/2)
	for i := range m {
		if loc[2*i] >= 0 {
			m[i] = s[loc[2*i]:loc[2*i+1]]
		}
	}
	return m
}

// pairNameKeys and pairValueKeys are the keys of the objects of a name/value pair
// list ([{"name": "Authorization", "value": "Bearer x"}], as HAR files, HTTP
// header lists and key/value stores write them).
var (
	pairNameKeys  = []string{"name", "key", "header", "field", "param", "parameter", "variable", "var"}
	pairValueKeys = []string{"value", "val", "content", "data", "secret"}
)

// pairName returns the name of a pair object: the string under one of
// pairNameKeys, when the object also has one of pairValueKeys.
func pairName(m map[string]any) (string, bool) {
	hasValue := false
	for _, k := range pairValueKeys {
		if _, ok := m[k]; ok {
			hasValue = true
			break
		}
	}
	if !hasValue {
		return "", false
	}
	for _, k := range pairNameKeys {
		if s, ok := m[k].(string); ok {
			return s, true
		}
	}
	return "", false
}
