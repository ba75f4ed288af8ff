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
//     ("Authorization: Bearer x", "?token=x", "API_KEY=x", "\"password\":\"x\"",
//     and JSON quoted again by Go's %q, {\"password\":\"x\"}) and credentials
//     after "Bearer " or "Basic " are replaced; a quoted name in the prose of an
//     error followed by a colon and an ordinary word (`security scheme
//     "api_key": auth: no credential`) is not a pair;
//   - so are the password of a URL's user info (postgres://admin:x@db, and a
//     user that is a token alone) and the body of a PEM block (keys and
//     certificates; the BEGIN and END lines stay);
//   - [Redactor.Text] also removes the redacted values of a call's arguments from
//     other text, such as an upstream error that echoes the request, in the
//     spellings servers echo them in: upper and lower case, base64 (standard and
//     URL-safe, also inside the encoding of a longer text) and JSON escapes
//     (\u0073k-..., \/).
package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcs-go/mcs/internal/clone"
	"github.com/mcs-go/mcs/internal/textcut"
)

// Redacted replaces the value of a sensitive key.
const Redacted = "[REDACTED]"

// DefaultMaxValueLen is the length in bytes beyond which strings are cut.
const DefaultMaxValueLen = 256

// DefaultKeys returns the sensitive key fragments of the hooks audit: password,
// passwd, pwd, pass, secret, token, api_key, apikey, api.key, access_key, auth,
// bearer, jwt, cookie, session_id, sessionid, credential, private_key,
// signature, subscription_key (Azure's Ocp-Apim-Subscription-Key) and ^key$ (a
// name that is "key" alone, as Google's ?key=). The slice is a new copy on every
// call.
func DefaultKeys() []string {
	return []string{
		"password", "passwd", "pwd", "pass", "secret", "token", "api_key", "apikey", "api.key",
		"access_key", "auth", "bearer", "jwt", "cookie", "session_id", "sessionid",
		"credential", "private_key", "signature", "subscription_key", "^key$",
	}
}

// Redactor copies values with secrets redacted and long strings cut. It is
// immutable and safe for concurrent use.
type Redactor struct {
	keys   []fragment
	maxLen int
}

// fragment is a normalised key fragment; start and end anchor it at the start
// or the end of a name ("^key$" is the name "key" alone).
type fragment struct {
	s          string
	start, end bool
}

// in reports whether the normalised name k holds f.
func (f fragment) in(k string) bool {
	switch {
	case f.start && f.end:
		return k == f.s
	case f.start:
		return strings.HasPrefix(k, f.s)
	case f.end:
		return strings.HasSuffix(k, f.s)
	}
	return strings.Contains(k, f.s)
}

// New returns a Redactor for the key fragments keys (nil: [DefaultKeys]; empty
// fragments are ignored) that cuts strings longer than maxValueLen bytes
// (<= 0: strings are kept whole). A fragment matches anywhere in a normalised
// name; one that starts with "^" only at its start, one that ends with "$" only
// at its end ("^key$": the name "key" alone).
func New(keys []string, maxValueLen int) *Redactor {
	if keys == nil {
		keys = DefaultKeys()
	}
	r := &Redactor{maxLen: maxValueLen}
	for _, k := range keys {
		k = Normalise(k)
		var f fragment
		f.s, f.start = strings.CutPrefix(k, "^")
		f.s, f.end = strings.CutSuffix(f.s, "$")
		if f.s != "" {
			r.keys = append(r.keys, f)
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

// anyFragment reports whether norm, a normalised text, holds a sensitive
// fragment anywhere (anchored or not: a name in the text is a part of it).
func (r *Redactor) anyFragment(norm string) bool {
	for _, f := range r.keys {
		if strings.Contains(norm, f.s) {
			return true
		}
	}
	return false
}

// Sensitive reports whether the value of key is redacted.
func (r *Redactor) Sensitive(key string) bool {
	k := Normalise(key)
	for _, f := range r.keys {
		if f.in(k) {
			return true
		}
	}
	return false
}

// Value returns a copy of v with secrets redacted and long strings cut. Maps with
// string keys become map[string]any and slices []any; raw JSON, and the JSON of a
// json.Marshaler, is decoded first; other byte slices are replaced by their length ("[12 bytes]"). Nesting deeper
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
		nameKey, pair, isPair := pairName(x)
		sensitivePair := isPair && r.Sensitive(pair)
		out := make(map[string]any, len(x))
		for k, e := range x {
			// The name of a pair is a name, also under "key".
			if (r.Sensitive(k) && (!isPair || k != nameKey)) || (sensitivePair && slices.Contains(pairValueKeys, k)) {
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
	case json.Marshaler: // such as an mcs.Signal: redacted as the JSON it is read as
		b, err := json.Marshal(x) // a nil pointer is null, not a panic
		if err != nil {
			return v
		}
		return r.value(json.RawMessage(b), depth, known)
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
// shell and environment lines (API_KEY=x), JSON ("password":"x") and JSON
// quoted again, as Go's %q writes it ({\"password\":\"x\"}). The value may start
// with an authentication scheme word, which is kept, and holds JSON's \uXXXX
// and \/ escapes. Groups: 1 the quote before the name (may be empty), 2 the name,
// 3 the quote after it, with the backslashes before it, 4 the separator, 5 the
// quote before the value, likewise, 6 the scheme word with its space (may be
// empty), 7 the value.
var secretPair = regexp.MustCompile(`(?i)(["']?)([a-z0-9][a-z0-9_.\-]{0,63})(\\*["']|)\s*([:=])\s*(\\*["']|)((?:bearer|basic|token|digest|apikey|negotiate)\s+)?((?:[^\s"'&;,<>?\\]|\\u[0-9a-fA-F]{4}|\\/)+)`)

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
	s = scrubKnown(s, known)
	if !mayHoldSecret(s) {
		return s
	}
	s = scrubPEM(s)
	s = scrubUserInfo(s)
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

// minEncodedLen is the shortest part of a longer base64 text that is taken for
// a known secret's encoding; shorter runs would match by chance.
const minEncodedLen = 8

// scrubKnown replaces in s every known secret (of at least minKnownLen bytes)
// and the spellings a server echoes it in: upper and lower case, base64
// (standard and URL-safe, padded or not, and the characters that encode only
// the secret inside the encoding of a longer text such as "user:secret"), and
// JSON with any of its characters written as \uXXXX or "/" as "\/".
func scrubKnown(s string, known []string) string {
	// All forms are written into one buffer, made one string and sliced.
	size, n := 0, 0
	for _, k := range known {
		if len(k) >= minKnownLen {
			size += 3*len(k) + 10*(len(k)/3+2)*4 // k, its cases, ten base64 forms at most
			n++
		}
	}
	if n == 0 {
		return s
	}
	buf, scratch := make([]byte, 0, size), []byte(nil)
	ends := make([]int, 0, 13*n)
	for _, k := range known {
		if len(k) >= minKnownLen {
			buf, ends, scratch = knownForms(buf, ends, scratch, k)
		}
	}
	if len(ends) == 0 {
		return s
	}
	all := string(buf)
	forms := make([]string, len(ends))
	for i, end := range ends {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		forms[i] = all[start:end]
	}
	// Longest first, so that a form holding another goes whole.
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	for i, f := range forms {
		if (i == 0 || f != forms[i-1]) && len(f) > 0 && !strings.Contains(Redacted, f) {
			s = strings.ReplaceAll(s, f, Redacted)
		}
	}
	if strings.Contains(s, `\`) {
		s = scrubEscaped(s, known)
	}
	return s
}

// base64s are the encodings known secrets are searched for in.
var base64s = []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding}

// knownForms appends k and the spellings of it that scrubKnown replaces,
// except JSON escapes, to buf, and the end of each in buf to ends; scratch is
// reused between calls.
func knownForms(buf []byte, ends []int, scratch []byte, k string) ([]byte, []int, []byte) {
	mark := func() { ends = append(ends, len(buf)) }
	buf = append(buf, k...)
	mark()
	for _, upper := range []bool{true, false} {
		if !isASCII(k) { // rare: the general case
			if upper {
				buf = append(buf, strings.ToUpper(k)...)
			} else {
				buf = append(buf, strings.ToLower(k)...)
			}
			mark()
			continue
		}
		for i := 0; i < len(k); i++ {
			c := k[i]
			switch {
			case upper && 'a' <= c && c <= 'z':
				c -= 'a' - 'A'
			case !upper && 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			}
			buf = append(buf, c)
		}
		mark()
	}
	for _, enc := range base64s {
		buf = enc.AppendEncode(buf, []byte(k))
		mark()
	}
	// Inside a longer text k starts at offset 0, 1 or 2 of a 3-byte group;
	// the characters that encode only bytes of k are the same wherever the
	// text is.
	for off := range 3 {
		scratch = append(append(scratch[:0], "\x00\x00"[:off]...), k...)
		lead := (off*8 + 5) / 6       // characters that mix in bytes before k
		whole := len(scratch) / 3 * 4 // characters of whole groups: the last, partial one mixes in what follows
		if whole-lead < minEncodedLen {
			continue
		}
		for _, enc := range base64s[2:] {
			start := len(buf)
			buf = enc.AppendEncode(buf, scratch)
			buf = append(buf[:start], buf[start+lead:start+whole]...)
			mark()
		}
	}
	return buf, ends, scratch
}

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// ReplaceEscaped replaces with [Redacted] every secret of secrets (of at least
// minKnownLen bytes) that s holds in JSON escapes of a server's choosing (every
// character as \uXXXX, some of them, upper- or lower-case hex digits, "/" as
// "\/"), as a JSON body that echoes a credential writes it. Plain occurrences
// are the caller's to replace. It is linear in len(s) times the number of
// secrets, and returns s itself when s has no escape.
func ReplaceEscaped(s string, secrets []string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	return scrubEscaped(s, secrets)
}

// scrubEscaped replaces the known secrets that s holds in JSON escapes
// (\u0073k-..., sk\u002d..., a\/b): it decodes the escapes, finds each secret
// in the decoded text and replaces the part of s it came from.
func scrubEscaped(s string, known []string) string {
	dec, marks := unescapeJSON(s)
	if marks == nil {
		return s
	}
	type span struct{ from, to int }
	var spans []span
	for _, k := range known {
		if len(k) < minKnownLen {
			continue
		}
		for i := 0; ; {
			j := strings.Index(dec[i:], k)
			if j < 0 {
				break
			}
			spans = append(spans, span{srcOffset(marks, i+j), srcOffset(marks, i+j+len(k))})
			i += j + len(k)
		}
	}
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		if sp.from < last { // overlaps the one before: extend it
			last = max(last, sp.to)
			continue
		}
		b.WriteString(s[last:sp.from])
		b.WriteString(Redacted)
		last = sp.to
	}
	b.WriteString(s[last:])
	return b.String()
}

// escapeMark is where an escape ends: the offset in the decoded text and in
// the source. Between two marks, bytes are the same in both.
type escapeMark struct{ dec, src int }

// srcOffset returns the offset in the source of the decoded offset d.
func srcOffset(marks []escapeMark, d int) int {
	i := sort.Search(len(marks), func(i int) bool { return marks[i].dec > d }) - 1
	if i < 0 {
		return d
	}
	return marks[i].src + d - marks[i].dec
}

// unescapeJSON decodes the JSON escapes of s (\uXXXX, surrogate pairs, \",
// \\, \/; other backslashes stay) and returns the decoded text and where each
// escape ends; nil marks when s has no such escape.
func unescapeJSON(s string) (string, []escapeMark) {
	var b strings.Builder
	var marks []escapeMark
	last := 0
	for i := strings.IndexByte(s, '\\'); i >= 0 && i+1 < len(s); {
		n := 0
		var r rune
		switch c := s[i+1]; c {
		case '"', '\\', '/':
			r, n = rune(c), 2
		case 'u':
			r, n = decodeU(s[i:])
		}
		if n == 0 {
			i++
		} else {
			if marks == nil {
				b.Grow(len(s))
			}
			b.WriteString(s[last:i])
			b.WriteRune(r)
			last = i + n
			marks = append(marks, escapeMark{dec: b.Len(), src: last})
			i = last
		}
		j := strings.IndexByte(s[i:], '\\')
		if j < 0 {
			break
		}
		i += j
	}
	if marks == nil {
		return "", nil
	}
	b.WriteString(s[last:])
	return b.String(), marks
}

// decodeU decodes the \uXXXX escape at the start of s, and the low half that
// follows a high surrogate, and returns the rune and the bytes it took (0: not
// an escape).
func decodeU(s string) (rune, int) {
	hex4 := func(s string) (rune, bool) {
		if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(s[2:6], 16, 16)
		return rune(v), err == nil
	}
	r, ok := hex4(s)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r) {
		if lo, ok := hex4(s[6:]); ok {
			if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
				return d, 12
			}
		}
		return utf8.RuneError, 6
	}
	return r, 6
}

// pemBegin starts the armour of a PEM block.
const pemBegin = "-----BEGIN "

// maxPEMLabel bounds the label of a PEM block ("RSA PRIVATE KEY").
const maxPEMLabel = 64

// scrubPEM replaces the body of every PEM block in s (a key, a certificate)
// between its BEGIN and END lines, which stay; line ends may be written as
// "\n". A block without its END line (a cut text) loses the rest of its body:
// the characters of base64, of line ends and of the headers of an encrypted
// key.
func scrubPEM(s string) string {
	if !strings.Contains(s, pemBegin) {
		return s
	}
	var b strings.Builder
	last := 0
	for pos := 0; pos < len(s); {
		i := strings.Index(s[pos:], pemBegin)
		if i < 0 {
			break
		}
		start := pos + i + len(pemBegin)
		j := strings.Index(s[start:min(len(s), start+maxPEMLabel+5)], "-----")
		if j <= 0 || strings.ContainsFunc(s[start:start+j], func(r rune) bool { return !(r == ' ' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') }) {
			pos = start
			continue
		}
		body := start + j + 5
		end := strings.Index(s[body:], "-----END ")
		if end < 0 {
			end = body
			for end < len(s) && strings.IndexByte(pemBodyBytes, s[end]) >= 0 {
				end++
			}
		} else {
			end += body
		}
		if end > body {
			b.WriteString(s[last:body])
			b.WriteString(Redacted)
			last = end
		}
		pos = max(end, body)
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// pemBodyBytes are the bytes of a PEM body: base64, white space, "\n" written
// out, and the headers of an encrypted key (Proc-Type: 4,ENCRYPTED).
const pemBodyBytes = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\\ \t\r\n:,-"

// userInfo finds the user info of URLs: group 1 the scheme and "://", 2 the
// user, 3 ":" and the password (may be empty).
var userInfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.\-]{0,31}://)([^\s/?#@:"'<>\\]*)(:[^\s/?#@"'<>\\]*)?@`)

// minTokenUser is the length from which the user of a URL without a password
// that has letters and digits is taken for a token
// (https://ghp_...@github.com); a name such as git stays.
const minTokenUser = 16

// scrubUserInfo replaces the password of every URL's user info in s
// (postgres://admin:x@db), and the user when it is a token alone.
func scrubUserInfo(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return replaceGroups(s, userInfo, func(m []string) (string, bool) {
		switch {
		case len(m[3]) > 1 && m[3] != ":"+Redacted:
			return m[2] + ":" + Redacted + "@", true
		case m[3] == "" && len(m[2]) >= minTokenUser && tokenLike(m[2]):
			return Redacted + "@", true
		}
		return "", false
	}, 2)
}

// tokenLike reports whether s has both letters and digits.
func tokenLike(s string) bool {
	return strings.ContainsFunc(s, unicode.IsLetter) && strings.ContainsFunc(s, unicode.IsDigit)
}

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

// pairName returns the key and the name of a pair object: the string under one
// of pairNameKeys, when the object also has one of pairValueKeys.
func pairName(m map[string]any) (key, name string, ok bool) {
	hasValue := false
	for _, k := range pairValueKeys {
		if _, ok := m[k]; ok {
			hasValue = true
			break
		}
	}
	if !hasValue {
		return "", "", false
	}
	for _, k := range pairNameKeys {
		if s, ok := m[k].(string); ok {
			return k, s, true
		}
	}
	return "", "", false
}
