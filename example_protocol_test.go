package mcs_test

import (
	"fmt"
	"strings"

	"github.com/mcs-go/mcs"
)

// A streaming driver of its own holds display while its call forms and claims the
// call once it is complete, through the buffer's protocol alone. Here the driver's
// calls are written [[upper TEXT]].
func ExampleStreamBuffer_Claim() {
	buf := mcs.NewStreamBuffer()
	for _, chunk := range []string{"Hi [[up", "per x]] there"} {
		buf.Add(chunk)
		v := buf.View()
		start, end := strings.Index(v.Text, "[["), strings.Index(v.Text, "]]")
		switch {
		case start >= 0 && end < 0:
			buf.Hold(v.Round) // forming: nothing of it may show
		case start >= 0:
			claimed, history := buf.Claim([]mcs.ToolCall{{Name: "upper", Start: start, End: end + 2}})
			fmt.Printf("run %s; history %q\n", claimed[0].Name, history)
		}
		fmt.Printf("show %q\n", buf.Text())
	}
	// Output:
	// show ""
	// run upper; history "Hi [[upper x]]"
	// show "Hi  there"
}
