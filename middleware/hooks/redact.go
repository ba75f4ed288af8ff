package hooks

import (
	"regexp"
	"strings"
)

// secretPair finds "name: value" and "name=value" pairs inside text, in the
// spellings of headers (Authorization: Bearer x), query strings (?token=x&...),
// shell and environment lines (API_KEY=x) and JSON ("password":"x"). The value
// may start with an authentication scheme word, which is kept. Groups: 1 the name,
// 2 the scheme word with its space (may be empty), 3 the value.
var secretPair = regexp.MustCompile(`(?i)([a-z0-9][a-z0-9_.\-]{0,63})["']?\s*[:=]\s*["']?((?:bearer|basic|token|digest|apikey|negotiate)\s+)?([^\s"'&;,<>?\\]+)`)

// bearerWord finds credentials after an authentication scheme word wherever it
// stands ("... -H Bearer eyJ..."). Group 1 is the scheme and its space, 2 the token.
var bearerWord = regexp.MustCompile(`(?i)\b(bearer\s+|basic\s+)([A-Za-z0-9\-._~+/]{8,}=*)`)

// scrub removes the secrets text carries inside it: the values of name/value
// pairs whose name is sensitive, credentials after "Bearer " or "Basic ", and every
// known secret (the values of sensitive arguments of the same call).
func (c *auditConfig) scrub(s string, known []string) string {
	for _, k := range known {
		if len(k) >= minKnownLen {
			s = strings.ReplaceAll(s, k, Redacted)
		}
	}
	if !mayHoldSecret(s) {
		return s
	}
	if strings.ContainsAny(s, ":=") {
		s = replaceGroups(s, secretPair, func(m []string) (string, bool) {
			if !c.sensitive(m[1]) {
				return "", false
			}
			return m[2] + Redacted, true
		}, 2)
	}
	return replaceGroups(s, bearerWord, func(m []string) (string, bool) {
		if strings.HasPrefix(m[2], Redacted) {
			return "", false
		}
		return m[1] + Redacted, true
	}, 1)
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
		m := make([]string, len(loc)/2)
		for i := range m {
			if loc[2*i] >= 0 {
				m[i] = s[loc[2*i]:loc[2*i+1]]
			}
		}
		repl, ok := f(m)
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
