package mcs

// CallRecord is one call and its outcome: the call as extracted (the embedded
// [ToolCall]: rec.ID, rec.Name, rec.Arguments, before any middleware rewrite) and
// what running it gave. Drivers report their calls with it, and wire formats shape
// the history from it.
type CallRecord struct {
	ToolCall
	// Result is the value the chain returned; nil when Err is set.
	Result any
	// Err is the outcome's error; nil on success. It shadows ToolCall.Err, which
	// says why a malformed call could not run (and is then Err too).
	Err error
}

// Response is the self-contained outcome of processing one model output.
//
// "No call of this driver was there" is: no Calls, not CallPending and Unavailable
// nil; Foreign and Format may still be set.
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
	Messages []Message
	// Calls has one record per owned call, run or failed, in order; nil when none
	// ran.
	Calls []CallRecord
	// Foreign are the calls of the output whose tool this driver does not publish,
	// in order; they never run. A client answers them (a provider rejects a request
	// in which a call id goes unanswered). While streaming, Foreign is set only in
	// the Response of the round in which the output finished, so that no client
	// answers a call that is still forming.
	Foreign []ToolCall
	// Format is the name of the wire format that recognised the output (see
	// [WireFormat.Format]); "" when none did. While streaming it is the format of
	// the calls this Response reports.
	Format string
	// Unavailable is set when the output holds calls but the driver could not tell
	// which of them are its own, because its tool listing failed (a specification
	// that does not load, a server that is down): the calls that could not be told
	// apart did not run, and the error says why. A client that offers an output to several
	// drivers shows it or logs it instead of taking the output for a final answer;
	// the driver's Healthcheck, if any, reports the same failure as ERROR.
	Unavailable error
}
