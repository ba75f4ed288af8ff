package auth

import (
	"errors"

	"github.com/mcs-go/mcs"
)

// IsChallenge reports whether v is an authentication challenge, in either of the
// forms it takes on its way up a middleware chain: the in-band result the
// [Middleware] makes of it (an [mcs.Signal] of kind [mcs.CodeChallenge], as
// [Challenge.Result] builds it, or a map[string]any with "auth_required": true, as
// this package built it before), or an error that holds a *[Challenge] (what a
// middleware placed inside the auth middleware sees).
//
// Deprecated: use mcs.CodeOf(result, err) == mcs.CodeChallenge, which tells both
// forms from the call's result and error.
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
	return mcs.CodeOf(v, nil) == mcs.CodeChallenge
}
