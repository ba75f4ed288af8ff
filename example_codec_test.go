package mcs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcs-go/mcs"
)

// xmlCodec is a prompt dialect the kernel does not know: <call name="tool">{json
// arguments}</call>. It proves that another codec needs no fork, in both the whole
// and the streaming path.
type xmlCodec struct{}

var _ mcs.PromptStrategy = xmlCodec{}

func (xmlCodec) EncodeTools(tools []mcs.Tool) (string, error) {
	var b strings.Builder
	for _, t := range tools {
		fmt.Fprintf(&b, "<tool name=%q>%s</tool>\n", t.Name, t.Summary())
	}
	return b.String(), nil
}
func (xmlCodec) SystemMessage(fd string) string {
	return "Tools:\n" + fd + `Call: <call name="tool">{}</call>`
}
func (xmlCodec) NativeSystemMessage() string { return "Use the tools." }
func (xmlCodec) RetryPrompt(tool, err string) string {
	return "<error tool=\"" + tool + "\">" + err + "</error>"
}
func (xmlCodec) ResultMessage(call mcs.ToolCall, text string, failed bool) mcs.Message {
	return mcs.Message{"role": "user", "content": "<result tool=\"" + call.Name + "\">" + text + "</result>"}
}
func (xmlCodec) NewDecoder() mcs.TextDecoder { return &xmlDecoder{} }

const xmlOpen, xmlClose = `<call name="`, `</call>`

// xmlDecoder scans from the end of the last complete call; a region that starts
// like an open tag is pending.
type xmlDecoder struct {
	pos     int
	pending int // start of a forming call, -1 for none
	name    string
}

func (d *xmlDecoder) Scan(text string) []mcs.ToolCall {
	var out []mcs.ToolCall
	d.pending, d.name = -1, ""
	for {
		rest := text[d.pos:]
		i := strings.Index(rest, xmlOpen)
		if i < 0 {
			// a tail that may still grow into an open tag
			if j := strings.LastIndexByte(rest, '<'); j >= 0 && strings.HasPrefix(xmlOpen, rest[j:]) {
				d.pending = d.pos + j
			}
			return out
		}
		start := d.pos + i
		body := text[start+len(xmlOpen):]
		q := strings.IndexByte(body, '"')
		e := strings.Index(body, xmlClose)
		if q < 0 || e < 0 {
			d.pending = start
			if q >= 0 {
				d.name = body[:q]
			}
			return out
		}
		var args map[string]any
		err := json.Unmarshal([]byte(body[q+2:e]), &args)
		c := mcs.ToolCall{Name: body[:q], Arguments: args, Start: start, End: start + len(xmlOpen) + e + len(xmlClose)}
		if err != nil {
			c.Err = fmt.Errorf("%w: %v", mcs.ErrMalformedCall, err)
		}
		out = append(out, c)
		d.pos = c.End
	}
}

func (d *xmlDecoder) Finish(text string) []mcs.ToolCall { return d.Scan(text) }
func (d *xmlDecoder) Pending() (int, string, bool)      { return d.pending, d.name, d.pending >= 0 }
func (d *xmlDecoder) Malformed() []mcs.ToolCall         { return nil }

// A prompt dialect the kernel does not know needs no fork: implement
// PromptStrategy (with its TextDecoder) and give it to the driver with
// WithPromptStrategy. It writes the system message, finds the calls in the text,
// whole or streamed, and frames each result.
func ExamplePromptStrategy() {
	d := mcs.NewBaseDriver(weather{}, mcs.WithPromptStrategy(xmlCodec{}))
	ctx := context.Background()
	sys, _ := d.SystemMessage(ctx, "any-model")
	fmt.Println(sys)
	resp := d.ProcessLLMResponse(ctx, `Let me look. <call name="get_weather">{"city":"Rome"}</call>`)
	fmt.Println(resp.Format, resp.Calls[0].Name, resp.Calls[0].Arguments)
	fmt.Println(resp.Messages[1]["content"])
	// Output:
	// Tools:
	// <tool name="get_weather">Current weather for a city.</tool>
	// Call: <call name="tool">{}</call>
	//   exec get_weather Rome
	// text get_weather map[city:Rome]
	// <result tool="get_weather">sunny in Rome</result>
}
