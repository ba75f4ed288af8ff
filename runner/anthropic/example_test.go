package anthropic_test

import (
	"context"
	"fmt"

	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/runner"
	"github.com/mcs-go/mcs/runner/anthropic"
)

// A Claude model (here a local server replaying a recorded Messages stream) calls
// two tools in parallel; the history keeps the Messages shape for the next turn.
func ExampleNew() {
	srv := replay.Start(replay.MustSSE("testdata/parallel.sse"), replay.MustSSE("testdata/answer_parallel.sse"))
	defer srv.Close()

	model, err := anthropic.New(anthropic.Config{Model: "claude-test", BaseURL: srv.URL, APIKey: "sk-ant-test"})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := runner.New((&replay.Weather{}).Driver(), model, runner.WithNativeTools(true), runner.WithStream(nil))
	res, err := r.Run(context.Background(), nil, "Weather and time in Paris?")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range res.Calls {
		fmt.Println(c.ID, c.Name, c.Result)
	}
	fmt.Println(res.Text)
	for _, h := range res.History {
		fmt.Print(h["role"], " ")
	}
	fmt.Println()
	// Output:
	// toolu_a get_weather sunny in Paris
	// toolu_b get_time 12:00 CET
	// Sunny in Paris, 12:00 CET.
	// user assistant user assistant
}
