package main

import (
	"github.com/mcs-go/mcs/internal/replay"
)

// Example_chat chats with a model over the embedded demo. The model here is a
// server on loopback that replays two recorded answers: a call of
// pets__findPetsByStatus, then the final answer.
func Example_chat() {
	llm := replay.Start(replay.MustSSE("testdata/chat/find_sold.sse"), replay.MustSSE("testdata/chat/answer_bella.sse"))
	defer llm.Close()
	runExample("Which pets are sold?\n", "chat", "--model", "gpt-test", "--base-url", llm.URL+"/v1", "--native")
	// Output:
	// mcs chat with gpt-test (commands: /tools lists the tools, /reset starts a new conversation, /quit (or Ctrl-D) ends the chat)
	// > Let me look.
	// → pets__findPetsByStatus {"status":"sold"}
	// ← 58 bytes
	// One pet is sold: Bella.
	// >
}
