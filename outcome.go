package mcs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
)

// Code says how a tool call ended, in one word that every reader of outcomes
// shares: the hooks audit, tracing, the MCP server, the command line and the
// runner. [CodeOf] tells it from a call's result and error. The set is closed in
// this module, but a type of another package may report any Code through
// [Coder].
type Code string

// The codes of a call's outcome. CodeOK, CodeDenied, CodeChallenge and CodePending
// are successes for the driver (the model reads the result); the others are
// failures.
const (
	// CodeOK: the tool ran and returned a result.
	CodeOK Code = "ok"
	// CodeError: the call failed, for a reason no other code names.
	CodeError Code = "error"
	// CodeUnknownTool: the driver does not publish the tool (ErrUnknownTool).
	CodeUnknownTool Code = "unknown_tool"
	// CodeInvalidArguments: the tool cannot take the arguments (*ArgumentsError,
	// ErrArgumentsTooLarge); the tool did not run.
	CodeInvalidArguments Code = "invalid_arguments"
	// CodeMalformedCall: the call could not be read as written (ErrMalformedCall).
	CodeMalformedCall Code = "malformed_call"
	// CodeTooManyCalls: the call was over the per-output limit (ErrTooManyCalls).
	CodeTooManyCalls Code = "too_many_calls"
	// CodePanic: the tool or a middleware panicked (*PanicError).
	CodePanic Code = "panic"
	// CodeCanceled: the call's context was canceled (context.Canceled).
	CodeCanceled Code = "canceled"
	// CodeTimeout: the call's deadline passed (context.DeadlineExceeded).
	CodeTimeout Code = "timeout"
	// CodeDenied: permission to run the tool was denied; the result is a [Signal]
	// the model reads, and the tool did not run.
	CodeDenied Code = "denied"
	// CodeChallenge: the user must authenticate first; the result is a [Signal]
	// the model reads (or, below the auth middleware, the error is a challenge).
	CodeChallenge Code = "challenge"
	// CodePending: the call waits for a person's approval; the result is a
	// [Signal] the model reads, and the tool has not run yet.
	CodePending Code = "pending"
)

// Coder is implemented by errors and results that know their outcome's [Code].
// [CodeOf] asks the first Coder in an error's tree, and a result that is one. A
// Code method must not depend on the error's text and may return "" to say
// nothing.
type Coder interface {
	Code() Code
}

// CodeOf returns the outcome code of a call that returned result and err. It
// decides from types only, never from text:
//
//   - with a non-nil err: the code of the first [Coder] in err's tree (see
//     [errors.As]; *ArgumentsError and *PanicError are Coders); else
//     CodeUnknownTool, CodeMalformedCall, CodeTooManyCalls or CodeInvalidArguments
//     when err wraps ErrUnknownTool, ErrMalformedCall, ErrTooManyCalls or
//     ErrArgumentsTooLarge; else CodeTimeout or CodeCanceled for
//     context.DeadlineExceeded and context.Canceled; else CodeError. result is not
//     looked at.
//   - with a nil err: the Kind of a [Signal] or non-nil *Signal result, or the code
//     of a result that is a Coder; else (and when that code is "") CodeOK.
//
// CodeOf is safe for concurrent use.
func CodeOf(result any, err error) Code {
	if err != nil {
		return errCode(err)
	}
	var c Code
	switch r := result.(type) {
	case nil:
		return CodeOK
	case Signal:
		c = r.Kind
	case *Signal:
		if r != nil {
			c = r.Kind
		}
	case Coder:
		c = r.Code()
	}
	if c == "" {
		return CodeOK
	}
	return c
}

// errCode is CodeOf for a non-nil err.
func errCode(err error) Code {
	// The kernel's own error types first, without the allocation of errors.As.
	switch e := err.(type) {
	case *ArgumentsError:
		return CodeInvalidArguments
	case *PanicError:
		return CodePanic
	case Coder:
		if c := e.Code(); c != "" {
			return c
		}
	}
	var c Coder
	if errors.As(err, &c) {
		if code := c.Code(); code != "" {
			return code
		}
	}
	switch {
	case errors.Is(err, ErrUnknownTool):
		return CodeUnknownTool
	case errors.Is(err, ErrMalformedCall):
		return CodeMalformedCall
	case errors.Is(err, ErrTooManyCalls):
		return CodeTooManyCalls
	case errors.Is(err, ErrArgumentsTooLarge):
		return CodeInvalidArguments
	case errors.Is(err, context.DeadlineExceeded):
		return CodeTimeout
	case errors.Is(err, context.Canceled):
		return CodeCanceled
	}
	return CodeError
}

// Code returns CodeInvalidArguments.
func (e *ArgumentsError) Code() Code { return CodeInvalidArguments }

// Code returns CodePanic.
func (e *PanicError) Code() Code { return CodePanic }

var (
	_ Coder = (*ArgumentsError)(nil)
	_ Coder = (*PanicError)(nil)
	_ Coder = Signal{}
)

// Signal is an in-band result: the tool did not run (or has not run yet), and the
// model reads why, as the call's result. A middleware returns it with a nil error,
// so that the call is a success for the driver: a permission denial
// (CodeDenied), an authentication challenge (CodeChallenge), a call waiting for
// approval (CodePending). [CodeOf] reports its Kind.
//
// Its JSON (see [Signal.MarshalJSON]) is the object the model reads, in every
// history format alike.
type Signal struct {
	// Kind is the outcome the signal reports.
	Kind Code
	// Tool is the tool the call named; "" to leave it out.
	Tool string
	// Message tells the model, and through it the user, what happened and what
	// can be done.
	Message string
	// Data holds further keys of the JSON object, such as an approval's "id" or a
	// challenge's "url"; the keys the kind writes itself take precedence. Data is
	// not modified.
	Data map[string]any
}

// Code returns s.Kind.
func (s Signal) Code() Code { return s.Kind }

// signalKey is the key that marks the JSON object of a signal of a kind as such,
// and whether its tool and message are written even when empty.
var signalKeys = map[Code]struct {
	key    string
	always bool
}{
	CodeDenied:    {"permission_denied", true},
	CodeChallenge: {"auth_required", false},
	CodePending:   {"approval_pending", true},
}

// MarshalJSON returns the JSON object the model reads: the keys of Data, then the
// mark of the kind, "tool" and "message", encoded as encoding/json encodes a map
// (keys sorted; HTML characters are escaped by json.Marshal around it, as they
// are in a map, and not by an encoder with SetEscapeHTML(false)). The mark is
//
//	CodeDenied     {"permission_denied": true, "tool": ..., "message": ...}
//	CodeChallenge  {"auth_required": true, "message": ...} (tool and message when set)
//	CodePending    {"approval_pending": true, "tool": ..., "message": ...}
//
// and for any other kind {"code": kind, "tool": ..., "message": ...}, tool and
// message when set. Denial and pending results always carry tool and message.
func (s Signal) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(s.Data)+3)
	for k, v := range s.Data {
		m[k] = v
	}
	shape, known := signalKeys[s.Kind]
	if known {
		m[shape.key] = true
	} else {
		m["code"] = string(s.Kind)
	}
	if s.Tool != "" || shape.always {
		m["tool"] = s.Tool
	}
	if s.Message != "" || shape.always {
		m["message"] = s.Message
	}
	// Without HTML escaping, as a map would be: json.Marshal escapes the result
	// again, and an encoder that does not escape leaves it so.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// String returns the JSON of s, the text the model reads; when s cannot be
// encoded (a value of Data that JSON cannot represent), its kind and message.
func (s Signal) String() string {
	b, err := s.MarshalJSON()
	if err != nil {
		return string(s.Kind) + ": " + s.Message
	}
	return string(b)
}
