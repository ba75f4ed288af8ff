package openai_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/runner"
	"github.com/mcs-go/mcs/runner/openai"
)

// endlessServer answers every request with a body that never ends: server-sent
// events of text for a streaming request, one JSON message whose content never
// closes otherwise. gone is closed when the handler saw the client leave;
// attempts counts the requests.
func endlessServer(t *testing.T) (srv *httptest.Server, gone <-chan struct{}, attempts *atomic.Int32) {
	done := make(chan struct{})
	attempts = new(atomic.Int32)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		body, _ := io.ReadAll(r.Body)
		attempts.Add(1)
		stream := strings.Contains(string(body), `"stream":true`)
		piece := strings.Repeat("a", 4096)
		if stream {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"`)
		}
		for r.Context().Err() == nil {
			var err error
			if stream {
				_, err = fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", piece)
			} else {
				_, err = fmt.Fprint(w, piece)
			}
			if err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv, done, attempts
}

// A server that never stops answering is cut off at the reply limit, streamed
// or not: Run returns a *ModelError wrapping ErrReplyTooLarge and the
// connection is closed.
func TestAttackEndlessReply(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			srv, gone, attempts := endlessServer(t)
			m, err := openai.New(openai.Config{Model: "gpt-test", BaseURL: srv.URL + "/v1", APIKey: "sk-test", MaxRetries: 2})
			if err != nil {
				t.Fatal(err)
			}
			opts := []runner.Option{runner.WithMaxReplyBytes(64 << 10)}
			if stream {
				opts = append(opts, runner.WithStream(nil))
			}
			_, err = runner.New((&replay.Weather{}).Driver(), m, opts...).Run(context.Background(), nil, "go")
			var me *runner.ModelError
			if !errors.As(err, &me) || !errors.Is(err, runner.ErrReplyTooLarge) {
				t.Fatalf("err = %v, want a *ModelError wrapping ErrReplyTooLarge", err)
			}
			<-gone // the server saw the client leave
			if n := attempts.Load(); n != 1 {
				t.Errorf("%d requests, want 1: a reply past the limit is not asked for again", n)
			}
		})
	}
}
