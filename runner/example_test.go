package runner_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/runner"
	"github.com/mcs-go/mcs/runner/openai"
)

// The loop in the text protocol: the tools are in the system message, the model
// writes a call in its text, the user sees the text around it but never the
// call, and the history goes on to the next turn.
func Example() {
	srv := replay.Start(replay.MustSSE("openai/testdata/text_call.sse"), replay.MustSSE("openai/testdata/answer_rome.sse"),
		replay.MustSSE("openai/testdata/text_only.sse"))
	defer srv.Close()
	model, err := openai.New(openai.Config{Model: "llama3.2", BaseURL: srv.URL + "/v1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	show := func(text string) { fmt.Print(text) }
	r := runner.New((&replay.Weather{}).Driver(), model, runner.WithStream(show), runner.WithMaxRounds(4))

	res, err := r.Run(context.Background(), nil, "Weather in Rome?")
	if errors.Is(err, runner.ErrMaxRounds) {
		fmt.Println("the model kept calling tools")
	} else if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println()
	res, err = r.Run(context.Background(), res.History, "Thanks!")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("\n%d messages in the history\n", len(res.History))
	// Output:
	// Checking. It is sunny in Rome.
	// Hello there.
	// 6 messages in the history
}
