package chat_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/mcs-go/mcs/internal/chat"
	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/runner/openai"
)

// A chat session with piped input: one question, the tool listing, then the end
// of input.
func ExampleRun() {
	srv := replay.Start(replay.MustSSE("../../runner/openai/testdata/one_call.sse"), replay.MustSSE("../../runner/openai/testdata/answer_rome.sse"))
	defer srv.Close()
	model, err := openai.New(openai.Config{Model: "gpt-test", BaseURL: srv.URL + "/v1", APIKey: "sk-test"})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = chat.Run(context.Background(), chat.Config{
		Driver: (&replay.Weather{}).Driver(),
		Model:  model,
		In:     strings.NewReader("Weather in Rome?\n/tools\n"),
		Out:    os.Stdout,
		Native: true,
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// mcs chat with gpt-test (commands: /tools lists the tools, /reset starts a new conversation, /quit (or Ctrl-D) ends the chat)
	// > → get_weather {"city":"Rome"}
	// ← 13 bytes
	// It is sunny in Rome.
	// >   get_weather  Current weather of a city.
	//   get_time  Current time in a zone.
	// >
}
