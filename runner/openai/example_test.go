package openai_test

import (
	"context"
	"fmt"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/runner"
	"github.com/mcs-go/mcs/runner/openai"
)

// A model on an OpenAI-compatible server (here a local server replaying a
// recorded stream) drives a driver's tools natively; the answer is streamed.
func ExampleNew() {
	srv := replay.Start(replay.MustSSE("testdata/one_call.sse"), replay.MustSSE("testdata/answer_rome.sse"))
	defer srv.Close()

	model, err := openai.New(openai.Config{Model: "gpt-test", BaseURL: srv.URL + "/v1", APIKey: "sk-test"})
	if err != nil {
		fmt.Println(err)
		return
	}
	driver := (&replay.Weather{}).Driver() // any mcs.Driver
	r := runner.New(driver, model,
		runner.WithNativeTools(true),
		runner.WithStream(func(text string) { fmt.Printf("show %q\n", text) }),
		runner.WithOnCall(func(c mcs.CallRecord) { fmt.Printf("call %s %v -> %v\n", c.Name, c.Arguments, c.Result) }))
	res, err := r.Run(context.Background(), nil, "What is the weather in Rome?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d rounds, %d messages in the history, %+v\n", res.Rounds, len(res.History), res.Usage)
	// Output:
	// call get_weather map[city:Rome] -> sunny in Rome
	// show "It is sunny"
	// show " in Rome."
	// 2 rounds, 4 messages in the history, {InputTokens:50 OutputTokens:13}
}
