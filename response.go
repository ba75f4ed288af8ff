package mcs

// CallRecord describes one owned tool call a driver executed.
type CallRecord struct {
	// ID is the provider's call id for native calls; "" for calls parsed from text.
	ID string
	// Name is the tool name as the model wrote it.
	Name string
	// Arguments are the arguments as extracted, before any middleware rewrite.
	Arguments map[string]any
	// Result is the value the chain returned; nil when Err is set.
	Result any
	// Err is nil on success.
	Err error
}

// Response is the self-contained outcome of processing one model output.
// The zero Response means "no call of this driver was there".
type Response struct {
	// CallExecuted reports that at least one owned call succeeded.
	CallExecuted bool
	// CallFailed reports that at least one owned call failed.
	CallFailed bool
	// CallPending reports, while streaming, that a call is still forming.
	CallPending bool
	// RetryPrompt is a driver-written hint for the model after a failure.
	RetryPrompt string
	// Messages are the history entries to append, shaped for the format the model
	// used; nil when no owned call ran.
	Messages []map[string]any
	// Calls has one record per executed call, in order; nil when no owned call ran.
	Calls []CallRecord
	// Unavailable is set when the reply holds calls but the driver could not tell
	// which of them are its own, because its tool listing failed (a specification
	// that does not load, a server that is down): no call ran, the other fields are
	// zero, and the error says why. A client that offers a reply to several drivers
	// shows it or logs it instead of taking the reply for a final answer; the driver's
	// Healthcheck, if any, reports the same failure as ERROR.
	Unavailable error
}
