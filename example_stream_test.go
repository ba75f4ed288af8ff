package mcs_test

import (
	"context"
	"fmt"

	"github.com/mcs-go/mcs"
)

// A streaming client loop: after each chunk, ask the driver, then show what may be
// shown. The raw JSON of the call never reaches the user; the call runs as soon as
// its closing brace arrives.
func ExampleBaseDriver_ProcessStream() {
	ctx := context.Background()
	d := mcs.NewBaseDriver(weather{})
	chunks := []string{"Let me look", " that up. {\"to", "ol\": \"get_weather\", ", "\"arguments\": {\"city\": \"Rome\"}}", " Back soon."}

	buf := d.NewStreamBuffer()
	round := func() {
		r := d.ProcessStream(ctx, buf)
		if r.CallExecuted {
			fmt.Printf("[tool result: %v]\n", r.Calls[0].Result)
		}
		if text := buf.Text(); text != "" {
			fmt.Printf("show %q\n", text)
		}
	}
	for _, chunk := range chunks {
		buf.AddString(chunk) // text deltas held as strings; Add takes a chunk of any shape
		round()
	}
	buf.Finish() // plain text has no end signal of its own
	round()
	// Output:
	// show "Let me look"
	//   exec get_weather Rome
	// [tool result: sunny in Rome]
	// show " that up. "
	// show " Back soon."
}
