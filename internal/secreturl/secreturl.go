// Package secreturl hides the secrets of URLs that are echoed in messages. It
// imports only the standard library, so that light packages may use it.
package secreturl

import "strings"

// Redact hides the password of a URL's user information ("postgres://user:pw@host/db"
// becomes "postgres://user:xxxxx@host/db") for a URL echoed in a message. A URL
// without a password is returned as it is.
func Redact(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok || strings.Contains(userinfo, "/") {
		return u
	}
	if user, _, ok := strings.Cut(userinfo, ":"); ok {
		return scheme + "://" + user + ":xxxxx@" + host
	}
	return u
}
