package stack

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// secretKeys are fragments of key names that only ever hold a credential.
var secretKeys = []string{"token", "secret", "password", "passwd", "api_key", "apikey", "authorization", "private_key", "bearer", "cookie"}

// tokenPrefixes start well-known credential formats.
var tokenPrefixes = []string{
	"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "xoxa-", "xapp-",
	"sk-", "sk_live_", "sk_test_", "rk_live_", "pk_live_", "AKIA", "ASIA", "AIza", "ya29.", "npm_", "pypi-", "hf_",
}

var (
	jwtPattern    = regexp.MustCompile(`^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*$`)
	schemePattern = regexp.MustCompile(`(?i)^(bearer|basic|token)\s+\S{8,}$`)
	opaquePattern = regexp.MustCompile(`^[A-Za-z0-9_+=-]{32,}$`)
)

// checkSecrets refuses every string in the document that looks like a
// credential, and every non-empty value of a key named like one.
func checkSecrets(root *Table, path string, v any) error {
	var errs []error
	walkStrings(path, "", v, func(p, key, s string) {
		if bindsScheme(p) {
			// The keys of a REST driver's scopes table are the names of the
			// document's security schemes (api_key, token...), not credentials;
			// the values are still checked.
			key = ""
		}
		why := secretReason(key, s)
		if why == "" {
			return
		}
		errs = append(errs, &Error{
			File:  root.file,
			Line:  root.pos.line(p),
			Table: tableName(root, p),
			Key:   keyInTable(p),
			Err:   fmt.Errorf("%s; secrets never go in the stack file: remove the value and %s", why, adviceFor(root, p)),
		})
	})
	return errors.Join(errs...)
}

func walkStrings(path, key string, v any, f func(path, key, s string)) {
	switch v := v.(type) {
	case string:
		f(path, key, v)
	case []any:
		walkList(path, key, v, f)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkStrings(join(path, k), k, v[k], f)
		}
	}
}

func walkList(path, key string, list []any, f func(path, key, s string)) {
	for i, e := range list {
		if _, ok := e.(map[string]any); ok {
			walkStrings(path+"["+strconv.Itoa(i)+"]", key, e, f)
			continue
		}
		walkStrings(path, key, e, f)
	}
}

// secretReason says why s, the value of key, looks like a credential, or "".
func secretReason(key, s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	k := strings.ToLower(strings.NewReplacer("-", "_", " ", "_").Replace(key))
	if !locatorKey(k) {
		for _, f := range secretKeys {
			if strings.Contains(k, f) {
				return "the key is named like a credential and holds a value"
			}
		}
	}
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(s, p) && len(s) >= len(p)+16 && !strings.ContainsAny(s, " /") {
			return "the value looks like an access token (it starts with " + strconv.Quote(p) + ")"
		}
	}
	switch {
	case strings.Contains(s, "PRIVATE KEY-----"):
		return "the value holds a private key"
	case jwtPattern.MatchString(s):
		return "the value looks like a JSON Web Token"
	case schemePattern.MatchString(s):
		return "the value looks like an Authorization header value"
	}
	if u, err := url.Parse(s); err == nil && u.Scheme != "" {
		if u.User != nil {
			if _, has := u.User.Password(); has {
				return "the URL carries a password"
			}
		}
		for name, values := range u.Query() {
			for _, v := range values {
				if v != "" && secretReason(name, v) != "" {
					return "the URL carries a credential in its query (" + strconv.Quote(name) + ")"
				}
			}
		}
	}
	if opaquePattern.MatchString(s) && looksRandom(s) {
		return "the value looks like a literal token (a long random string)"
	}
	return ""
}

// looksRandom reports whether s mixes letters and digits with the entropy of a
// generated token rather than a word or a name.
func looksRandom(s string) bool {
	var letters, digits int
	counts := map[rune]int{}
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			letters++
		}
		counts[r]++
	}
	if letters == 0 || digits == 0 {
		return false
	}
	var h float64
	n := float64(len(s))
	for _, c := range counts {
		p := float64(c) / n
		h -= p * math.Log2(p)
	}
	return h >= 3.5
}

// tableName names the table that holds path for messages.
func tableName(root *Table, path string) string {
	if i, ok := driverIndex(path); ok {
		if l := driverLabel(root, i); l != "" {
			return fmt.Sprintf("[[driver]] %q", l)
		}
		return "[[driver]] #" + strconv.Itoa(i+1)
	}
	if i := strings.LastIndexByte(path, '.'); i > 0 {
		return "[" + path[:i] + "]"
	}
	return ""
}

// keyInTable is path without the path of its table: "headers.X-Key" for
// "driver[0].headers.X-Key", "audit_log" for "middleware.hooks.audit_log".
func keyInTable(path string) string {
	if strings.HasPrefix(path, "driver[") {
		if i := strings.Index(path, "]."); i > 0 {
			return path[i+2:]
		}
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// locatorKey reports whether a key names where a credential is found or sent
// (token_url, token_store, ...), not the credential itself; its value is still
// checked for looking like one.
func locatorKey(k string) bool {
	for _, suffix := range []string{"_url", "_uri", "_endpoint", "_store", "_file", "_path"} {
		if strings.HasSuffix(k, suffix) {
			return true
		}
	}
	return false
}

// driverIndex returns the index of the [[driver]] table path lies in.
func driverIndex(path string) (int, bool) {
	if !strings.HasPrefix(path, "driver[") {
		return 0, false
	}
	end := strings.IndexByte(path, ']')
	if end < 0 {
		return 0, false
	}
	i, err := strconv.Atoi(path[len("driver["):end])
	return i, err == nil && i >= 0
}

// driverLabel returns the label of the i-th [[driver]] table; "" when it has
// none.
func driverLabel(root *Table, i int) string {
	if list, ok := root.values["driver"].([]any); ok && i < len(list) {
		if m, ok := list[i].(map[string]any); ok {
			if l, ok := m["label"].(string); ok {
				return l
			}
		}
	}
	return ""
}

// bindsScheme reports whether path is an entry of a driver's scopes table.
func bindsScheme(path string) bool {
	_, inDriver := driverIndex(path)
	k := keyInTable(path)
	return inDriver && strings.HasPrefix(k, "scopes.") && !strings.Contains(k[len("scopes."):], ".")
}
