package auth

import "errors"

// IsChallenge reports whether v is an authentication challenge, in either of the
// forms it takes on its way up a middleware chain: the in-band result the
// [Middleware] makes of it (a map[string]any with "auth_required": true, as
// [Challenge.Result] builds it), or an error that holds a *[Challenge] (what a
// middleware placed inside the auth middleware sees). Observers such as tracing
// and audit trails use it to count challenges without reading text.
func IsChallenge(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return x["auth_required"] == true
	case *Challenge:
		return true
	case error:
		_, ok := errors.AsType[*Challenge](x)
		return ok
	}
	return false
}
