// Package runner is the client loop of the Model Context Standard, written once:
// it sends the driver's system message and the conversation to a model, hands the
// model's reply to the driver, appends what the driver returns to the history and
// asks again while calls ran, until the model gives its final answer.
//
// The runner knows nothing of any provider; a Model adapter does (see
// runner/openai and runner/anthropic). It knows only the kernel: any mcs.Driver,
// a single driver or an orchestrator over several, drives the tools.
package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
)

// ErrNoNativeTools is wrapped by the error Run returns when WithNativeTools(true)
// was given but the driver cannot give native tools for the model (see
// WithNativeTools); no request is made.
var ErrNoNativeTools = errors.New("no native tools")

// ErrMaxRounds is wrapped by the error Run returns when the model still called
// tools after the round limit (WithMaxRounds); the Result then holds the history
// so far, so the conversation can go on.
var ErrMaxRounds = errors.New("round limit reached")

// DefaultMaxRounds is the round limit when WithMaxRounds is not given.
const DefaultMaxRounds = 10

// DefaultMaxReplyBytes is the reply limit when WithMaxReplyBytes is not given:
// 8 MiB of text, reasoning and call arguments.
const DefaultMaxReplyBytes = 8 << 20

// Result is the outcome of one Run.
type Result struct {
	// Text is the final answer: the text of the model's last reply.
	Text string
	// History is the history given to Run with this turn appended (the user
	// input, every assistant message, tool result and retry prompt, and the final
	// answer), in the model's wire shape, ready for the next Run.
	History []map[string]any
	// Calls are every call of this turn, in the order they ran. A call the driver
	// did not own is here too, failed with an error wrapping mcs.ErrUnknownTool.
	Calls []mcs.CallRecord
	// Rounds is the number of model requests made.
	Rounds int
	// Usage is the token usage the provider reported, summed over the rounds.
	Usage Usage
}

// RoundInfo describes one model request, for a RoundHook.
type RoundInfo struct {
	Model   string // the model's name
	Round   int    // 1 for the first request of a Run
	Request Request
	Stream  bool // the request streams
}

// RoundHook is called before each model request. The context it returns is the
// one the request and the driver's processing of the reply run with (a tracer
// starts a "chat {model}" span there); done, when not nil, is called once the
// round's reply has been processed, with the reply and the model's error. Hooks
// must be safe for concurrent use when the Runner is.
type RoundHook func(ctx context.Context, info RoundInfo) (context.Context, func(reply Reply, err error))

type options struct {
	maxRounds int
	stream    bool
	show      func(string)
	native    bool
	maxReply  int
	onCall    func(mcs.CallRecord)
	hooks     []RoundHook
	approvals approvals.Store // nil: no approvals are run
}

// Option configures a Runner.
type Option func(*options)

// WithMaxRounds sets the most model requests one Run makes (default 10; n < 1
// keeps the default). When the model still calls tools in the last one, Run
// returns an error wrapping ErrMaxRounds.
func WithMaxRounds(n int) Option {
	return func(o *options) {
		if n >= 1 {
			o.maxRounds = n
		}
	}
}

// WithMaxReplyBytes sets the most bytes one model reply may hold, streamed or
// not: its text, reasoning and call arguments (the string values of the reply
// but those of labels such as "type" and "role"; the whole text of a text
// stream), and, when streamed, 16 bytes for every chunk, so that an endless
// stream of empty chunks ends too. n < 0 removes the limit; 0 keeps the default
// (DefaultMaxReplyBytes).
//
// A stream that passes the limit is cancelled at once (its context ends): the
// chunk that passed it and any later one are not processed, calls that ran
// before stay in the history, and Run returns a *ModelError wrapping
// ErrReplyTooLarge. A non-streamed reply that passes it is not processed: no call
// of it runs. The limit also goes to the Model in Request.MaxReplyBytes, so that
// an adapter can stop reading first.
func WithMaxReplyBytes(n int) Option {
	return func(o *options) {
		switch {
		case n > 0:
			o.maxReply = n
		case n < 0:
			o.maxReply = -1
		}
	}
}

// WithStream makes the runner stream every request through the driver's
// StreamBuffer and ProcessStream: a call runs as soon as it is complete, and show
// (which may be nil) receives exactly what the buffer's Text releases, in order,
// so a user never sees a call's JSON. show is called from the goroutine running
// Run. A driver that does not implement mcs.SupportsStreaming gets non-streaming
// requests, and show then receives the final answer at once. Without WithStream
// the runner makes non-streaming requests.
func WithStream(show func(text string)) Option {
	return func(o *options) {
		o.stream = true
		o.show = show
	}
}

// WithNativeTools sends, with on, the tools as native tool objects, with the
// driver's native system message (mcs.SupportsNativeTools), instead of putting
// them in the system message (the text protocol, the default).
//
// A *mcs.BaseDriver, or a driver that embeds one (an orchestrator), built without
// mcs.WithNativeTools gets the system message and the tool objects it would give
// with that option accepting every model. Run fails with an error wrapping
// ErrNoNativeTools, before any request, when the driver's mcs.WithNativeTools
// predicate refuses the model, or when the driver is of another kind and gives no
// tools (or does not implement mcs.SupportsNativeTools): it never falls back to
// the text protocol unasked.
func WithNativeTools(on bool) Option { return func(o *options) { o.native = on } }

// WithOnCall calls f with every call's record as soon as the call has run, in
// order, from the goroutine running Run.
func WithOnCall(f func(mcs.CallRecord)) Option { return func(o *options) { o.onCall = f } }

// WithRoundHook adds h, called around every model request (see RoundHook); hooks
// run in the order given. It is the place for tracing of rounds.
func WithRoundHook(h RoundHook) Option {
	return func(o *options) {
		if h != nil {
			o.hooks = append(o.hooks, h)
		}
	}
}

// Runner runs conversations between one model and one driver. It keeps no
// conversation state (the history is the caller's) and is safe for concurrent use
// when its driver, model and callbacks are.
type Runner struct {
	d          mcs.Driver
	m          Model
	o          options
	ps         mcs.PromptStrategy
	formats    []mcs.WireFormat // the driver's, to answer the calls it did not own
	textFormat string           // the name of the text protocol's format
}

// New returns a Runner over the driver d and the model m. Several drivers go
// behind an orchestrator. It panics when d or m is nil, which is a programming
// error.
func New(d mcs.Driver, m Model, opts ...Option) *Runner {
	if d == nil || m == nil {
		panic("runner: New needs a driver and a model")
	}
	r := &Runner{d: d, m: m, o: options{maxRounds: DefaultMaxRounds, maxReply: DefaultMaxReplyBytes}}
	for _, opt := range opts {
		if opt != nil {
			opt(&r.o)
		}
	}
	r.ps = mcs.DefaultPromptStrategy()
	if p, ok := d.(interface{ PromptStrategy() mcs.PromptStrategy }); ok && p.PromptStrategy() != nil {
		r.ps = p.PromptStrategy()
	}
	r.formats = mcs.DefaultFormats(r.ps)
	if f, ok := d.(interface{ Formats() []mcs.WireFormat }); ok {
		if formats := f.Formats(); len(formats) > 0 {
			r.formats = formats
		}
	}
	r.textFormat = mcs.TextFormat(r.ps).Format()
	return r
}

// Run appends input (as a user message; "" appends nothing) to history and runs
// the loop: each round sends the system message and the history to the model,
// gives the reply to the driver and appends the driver's messages, the answers to
// calls the driver did not own, and the retry prompt after a failure; it asks
// again while a call ran or failed, and stops at a reply without calls, which is
// appended as the final answer. history is not modified.
//
// A call the driver does not own is answered, never dropped: a native call gets a
// tool result saying that the tool does not exist and naming the closest tools;
// a text call gets the driver's retry prompt with the same facts.
//
// With WithApprovals, Run first runs the calls approved since they were queued
// and puts what became of them before input (see WithApprovals).
//
// Errors: the approvals store (WithApprovals), the driver's system message, a model error (a *ModelError for the
// adapters of this module), the end of ctx (wrapped, so errors.Is(err,
// context.Canceled) holds) and the round limit (wrapping ErrMaxRounds). The
// Result is never nil: it holds the history, calls and usage up to the failure.
func (r *Runner) Run(ctx context.Context, history []map[string]any, input string) (*Result, error) {
	res := &Result{History: slices.Clip(slices.Clone(history))}
	notes, err := r.settleApprovals(ctx, res)
	if err != nil {
		return res, fmt.Errorf("runner: %w", err)
	}
	if input != "" {
		if notes != "" {
			input = notes + "\n\n" + input
		}
		res.History = append(res.History, map[string]any{"role": "user", "content": input})
	} else if notes != "" {
		res.History = append(res.History, map[string]any{"role": "user", "content": notes})
	}
	for {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("runner: %w", err)
		}
		if res.Rounds >= r.o.maxRounds {
			return res, fmt.Errorf("runner: %w: the model still called tools after %d requests", ErrMaxRounds, r.o.maxRounds)
		}
		round := res.Rounds + 1
		again, err := r.round(ctx, res)
		if err != nil {
			if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
				err = fmt.Errorf("%w (%w)", ctx.Err(), err)
			}
			return res, fmt.Errorf("runner: round %d: %w", round, err)
		}
		if !again {
			return res, nil
		}
	}
}

// request builds the round's request: the system message and the tools (native
// when asked for), and the history.
func (r *Runner) request(ctx context.Context, res *Result) (Request, error) {
	req := Request{Messages: res.History, MaxReplyBytes: r.o.maxReply}
	model := r.m.Name()
	if r.o.native {
		nc, err := r.nativeContext(ctx, model)
		if err != nil {
			return req, err
		}
		req.System, req.Tools = nc.SystemMessage, nc.Tools
		return req, nil
	}
	sys, err := r.d.SystemMessage(ctx, model)
	if err != nil {
		return req, fmt.Errorf("driver system message: %w", err)
	}
	req.System = sys
	return req, nil
}

// round makes one model request and settles its reply; again reports that the
// model must be asked again.
func (r *Runner) round(ctx context.Context, res *Result) (again bool, err error) {
	req, err := r.request(ctx, res)
	if err != nil {
		return false, err
	}
	res.Rounds++
	sd, streaming := r.d.(mcs.SupportsStreaming)
	streaming = streaming && r.o.stream
	var dones []func(Reply, error)
	for _, h := range r.o.hooks {
		var done func(Reply, error)
		ctx, done = h(ctx, RoundInfo{Model: r.m.Name(), Round: res.Rounds, Request: req, Stream: streaming})
		if done != nil {
			dones = append(dones, done)
		}
	}
	var reply Reply
	defer func() {
		for i := len(dones) - 1; i >= 0; i-- {
			dones[i](reply, err)
		}
	}()

	var resps []mcs.Response
	if streaming {
		reply, resps, err = r.stream(ctx, req, res, sd)
		if err != nil {
			r.appendResponses(res, resps)
			return false, err
		}
	} else {
		reply, err = r.m.Generate(ctx, req)
		if err != nil {
			return false, err
		}
		if r.o.maxReply > 0 && payloadBytes(reply.Message) > r.o.maxReply {
			return false, r.tooLarge(false)
		}
		r.take(res, &resps, r.d.ProcessLLMResponse(ctx, reply.Message))
	}
	res.Usage = res.Usage.Add(reply.Usage)
	again, err = r.settle(ctx, res, reply.Message, resps, streaming)
	if err == nil && !again && r.o.stream && !streaming && r.o.show != nil && res.Text != "" {
		r.o.show(res.Text)
	}
	return again, err
}

// stream makes the round's request streaming: every chunk goes into the driver's
// stream buffer and the driver decides on it at once, so a call runs as soon as
// it is complete. show gets the text the buffer releases, in order around the
// calls: the text before a call before its record reaches WithOnCall, the text
// after it afterwards. The Responses of text calls are returned as the whole
// reply's would be (see wholeText).
func (r *Runner) stream(ctx context.Context, req Request, res *Result, sd mcs.SupportsStreaming) (Reply, []mcs.Response, error) {
	buf := sd.NewStreamBuffer()
	var resps []mcs.Response
	echoed := 0 // bytes of the buffer's text that the text calls' messages hold
	step := func() {
		resp := sd.ProcessStream(ctx, buf)
		text, after := buf.Text(), ""
		if len(resp.Calls) > 0 && !r.nativeCalls(resp) {
			// The driver's messages hold the text up to the end of the last call
			// run now: what Text released past that comes after the calls.
			for _, m := range resp.Messages {
				if c, ok := m["content"].(string); ok && m["role"] == "assistant" {
					echoed += len(c)
				}
			}
			if all := buf.Content(); echoed <= len(all) && strings.HasSuffix(text, all[echoed:]) {
				text, after = text[:len(text)-(len(all)-echoed)], all[echoed:]
			}
		}
		r.show(text)
		r.take(res, &resps, resp)
		r.show(after)
	}
	// The stream's own context ends when the reply passes the limit.
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	meter := replyMeter{max: r.o.maxReply, textFormat: r.textFormat}
	var over error
	reply, err := r.m.Stream(sctx, req, func(chunk any) {
		if over != nil {
			return
		}
		buf.Add(chunk)
		if !meter.add(buf, chunk) {
			over = r.tooLarge(true)
			cancel(over)
			return
		}
		step()
	})
	if over != nil {
		// Nothing more of this reply is processed: its calls still forming never run.
		err = over
	} else {
		buf.Finish()
		step()
	}
	if reply.Message == nil {
		reply.Message = buf.Message()
	}
	if err != nil && len(resps) > 0 && !slices.ContainsFunc(resps, r.nativeCalls) {
		resps = wholeText(buf.Message(), resps)
	}
	return reply, resps, err
}

func (r *Runner) show(text string) {
	if text != "" && r.o.show != nil {
		r.o.show(text)
	}
}

// take keeps a Response that says something and records its calls.
func (r *Runner) take(res *Result, resps *[]mcs.Response, resp mcs.Response) {
	if resp.Calls == nil && resp.Messages == nil && resp.RetryPrompt == "" && resp.Foreign == nil && resp.Unavailable == nil {
		return
	}
	*resps = append(*resps, resp)
	for _, c := range resp.Calls {
		r.record(res, c)
	}
}

// wholeText returns the Responses of a streamed text reply as ProcessLLMResponse
// gives them for the whole reply, so that a streamed and an unstreamed
// conversation leave the same history: one assistant message with all of the
// reply's text (the text after the last call included) first, in place of the
// driver's echo of each part, then every result in order, and only the first
// retry prompt.
func wholeText(msg map[string]any, resps []mcs.Response) []mcs.Response {
	out := make([]mcs.Response, 0, len(resps)+1)
	out = append(out, mcs.Response{Messages: []map[string]any{{"role": "assistant", "content": mcs.NewOutput(msg).Text}}})
	retry := false
	for _, resp := range resps {
		if len(resp.Messages) > 0 && resp.Messages[0]["role"] == "assistant" {
			resp.Messages = resp.Messages[1:]
		}
		if retry {
			resp.RetryPrompt = ""
		}
		retry = retry || resp.RetryPrompt != ""
		out = append(out, resp)
	}
	return out
}

func (r *Runner) record(res *Result, c mcs.CallRecord) {
	res.Calls = append(res.Calls, c)
	if r.o.onCall != nil {
		r.o.onCall(c)
	}
}

// appendResponses appends the messages of resps and, after failures, one user
// message with their retry prompts.
func (r *Runner) appendResponses(res *Result, resps []mcs.Response) {
	var retry []string
	for _, resp := range resps {
		res.History = append(res.History, resp.Messages...)
		if resp.RetryPrompt != "" {
			retry = append(retry, resp.RetryPrompt)
		}
	}
	r.appendRetry(res, retry)
}

func (r *Runner) appendRetry(res *Result, retry []string) {
	if len(retry) > 0 {
		res.History = append(res.History, map[string]any{"role": "user", "content": strings.Join(retry, "\n\n")})
	}
}

// settle appends the round's outcome to the history: the driver's messages, the
// answers to every call it did not own (its Responses' Foreign), the retry
// prompts, or the final answer. The driver's records and the foreign calls are
// merged by their Index, so that a native message's calls are answered in the
// order the model made them, in the format the driver named.
func (r *Runner) settle(ctx context.Context, res *Result, msg map[string]any, resps []mcs.Response, streamed bool) (again bool, err error) {
	var foreign []mcs.ToolCall
	format := ""
	for _, resp := range resps {
		if resp.Unavailable != nil {
			// The calls it could not judge would go unanswered.
			return false, fmt.Errorf("driver tool listing: %w", resp.Unavailable)
		}
		foreign = append(foreign, resp.Foreign...)
		if resp.Format != "" {
			format = resp.Format
		}
	}
	if streamed && format == r.textFormat && len(resps) > 0 {
		resps = wholeText(msg, resps)
	}
	if len(foreign) == 0 {
		if len(resps) == 0 {
			return false, r.final(res, msg)
		}
		r.appendResponses(res, resps)
		return true, ctx.Err()
	}

	names, err := r.toolNames(ctx)
	if err != nil {
		return false, err
	}
	answers := make([]mcs.CallRecord, len(foreign))
	for i, c := range foreign {
		answers[i] = mcs.CallRecord{ToolCall: c}
		if slices.Contains(names, c.Name) {
			answers[i].Err = fmt.Errorf("the call to %q was not run: call it again", c.Name)
		} else {
			answers[i].Err = fmt.Errorf("%w: tool %q does not exist; %s", mcs.ErrUnknownTool, c.Name, closestText(c.Name, names))
		}
		r.record(res, answers[i])
	}
	if format != r.textFormat {
		return r.settleNative(ctx, res, msg, resps, format, answers)
	}
	return r.settleText(ctx, res, msg, resps, answers)
}

// settleText appends the driver's messages, which cover the text up to its last
// call, then the rest of the output (holding the foreign calls), then the retry
// prompts, the foreign calls' last.
func (r *Runner) settleText(ctx context.Context, res *Result, msg map[string]any, resps []mcs.Response, answers []mcs.CallRecord) (bool, error) {
	text := mcs.NewOutput(msg).Text
	end := 0
	var retry []string
	var ran bool
	var echoed strings.Builder // the output's text the driver's messages hold
	for _, resp := range resps {
		for _, c := range resp.Calls {
			if c.End > end && c.End <= len(text) {
				end = c.End
			}
		}
		res.History = append(res.History, resp.Messages...)
		for _, m := range resp.Messages {
			ran = true
			if c, ok := m["content"].(string); ok && m["role"] == "assistant" {
				echoed.WriteString(c)
			}
		}
		if resp.RetryPrompt != "" {
			retry = append(retry, resp.RetryPrompt)
		}
	}
	// The driver's messages hold all of the output (a streamed one's too, see
	// wholeText): append the rest only when a driver's echo left it out.
	rest := strings.TrimSpace(text[end:])
	if !ran {
		res.History = append(res.History, msg)
	} else if rest != "" && !strings.HasSuffix(strings.TrimSpace(echoed.String()), rest) {
		res.History = append(res.History, map[string]any{"role": "assistant", "content": text[end:]})
	}
	for _, a := range answers {
		retry = append(retry, r.ps.RetryPrompt(a.Name, a.Err.Error()))
	}
	r.appendRetry(res, retry)
	return true, ctx.Err()
}

// settleNative answers every call of a native message, in its order, in the
// message's format: the driver's outcome for the calls it ran, answers for the
// others. Text calls that ran before the native ones started keep their own
// messages.
func (r *Runner) settleNative(ctx context.Context, res *Result, msg map[string]any, resps []mcs.Response, format string, answers []mcs.CallRecord) (bool, error) {
	i := slices.IndexFunc(r.formats, func(f mcs.WireFormat) bool { return f.Format() == format })
	if i < 0 {
		return false, fmt.Errorf("the driver reported calls in the format %q, which is not among its formats: the runner cannot answer them", format)
	}
	all := answers
	var retry []string
	for _, resp := range resps {
		if resp.Format == format {
			all = append(all, resp.Calls...)
		} else {
			res.History = append(res.History, resp.Messages...)
		}
		if resp.RetryPrompt != "" {
			retry = append(retry, resp.RetryPrompt)
		}
	}
	slices.SortStableFunc(all, func(a, b mcs.CallRecord) int { return a.Index - b.Index })
	res.History = append(res.History, r.formats[i].History(mcs.NewOutput(msg), all)...)
	r.appendRetry(res, retry)
	return true, ctx.Err()
}

// nativeCalls reports whether resp ran calls of a native format, as its Format
// says (a Gemini call may have no id).
func (r *Runner) nativeCalls(resp mcs.Response) bool {
	return len(resp.Calls) > 0 && resp.Format != r.textFormat
}

// final appends the final answer, unless it is empty (a provider rejects an empty
// assistant turn inside the history).
func (r *Runner) final(res *Result, msg map[string]any) error {
	res.Text = mcs.NewOutput(msg).Text
	if msg != nil && res.Text != "" {
		res.History = append(res.History, msg)
	}
	return nil
}

// toolNames returns the names of the tools the driver publishes, for naming the
// closest ones to a foreign call.
func (r *Runner) toolNames(ctx context.Context) ([]string, error) {
	if td, ok := r.d.(mcs.ToolDriver); ok {
		tools, err := td.ListTools(ctx)
		if err != nil {
			return nil, fmt.Errorf("driver tool listing: %w", err)
		}
		names := make([]string, len(tools))
		for i, t := range tools {
			names[i] = t.Name
		}
		return names, nil
	}
	if nd, ok := r.d.(mcs.SupportsNativeTools); ok {
		nc, err := nd.NativeToolContext(ctx, r.m.Name())
		if err != nil {
			return nil, fmt.Errorf("driver native tool context: %w", err)
		}
		names := make([]string, len(nc.Tools))
		for i, t := range nc.Tools {
			names[i] = t.Name
		}
		return names, nil
	}
	return nil, nil
}
