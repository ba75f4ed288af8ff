package permission_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs/middleware/permission"
)

const questionTail = "Allow it? y (yes), n (no), a (always allow this tool): "
const reAsk = "Please answer y (yes), n (no) or a (always allow this tool): "

func TestPromptAnswers(t *testing.T) {
	question := "Tool \"write_file\" wants to run with these arguments:\n{\n  \"path\": \"a.txt\"\n}\n" + questionTail
	tests := []struct {
		name    string
		input   string
		want    bool
		wantErr error
		wantOut string
	}{
		{"y", "y\n", true, nil, question},
		{"yes with spaces and CRLF", "  Yes \r\n", true, nil, question},
		{"n", "n\n", false, nil, question},
		{"no", "NO\n", false, nil, question},
		{"a", "a\n", true, nil, question},
		{"always", "always\n", true, nil, question},
		{"other input asks again", "maybe\n\nsure\ny\n", true, nil, question + reAsk + reAsk + reAsk},
		{"a line that is too long asks again", strings.Repeat("y", 100) + "\nn\n", false, nil, question + reAsk},
		{"last line without newline", "y", true, nil, question},
		{"EOF fails", "", false, permission.ErrInputClosed, question},
		{"EOF after junk fails", "what\n", false, permission.ErrInputClosed, question + reAsk},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			ask := permission.Prompt(strings.NewReader(tt.input), &out)
			got, err := ask(context.Background(), "write_file", map[string]any{"path": "a.txt"})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("answer = %v, want %v", got, tt.want)
			}
			if diff := cmp.Diff(tt.wantOut, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPromptAlways(t *testing.T) {
	var out bytes.Buffer
	ask := permission.Prompt(strings.NewReader("a\n"), &out)
	ctx := context.Background()
	for i := range 3 {
		if ok, err := ask(ctx, "read_file", nil); !ok || err != nil {
			t.Fatalf("call %d for the always-allowed tool = %v, %v; want true, nil", i, ok, err)
		}
	}
	if n := strings.Count(out.String(), questionTail); n != 1 {
		t.Errorf("asked %d times, want once", n)
	}
	// Another tool is asked; the input is exhausted, so it fails, and stays failed.
	for range 2 {
		if ok, err := ask(ctx, "write_file", nil); ok || !errors.Is(err, permission.ErrInputClosed) || !errors.Is(err, io.EOF) {
			t.Errorf("other tool = %v, %v; want false and ErrInputClosed wrapping io.EOF", ok, err)
		}
	}
	// A new handler does not inherit the answer.
	ask2 := permission.Prompt(strings.NewReader(""), io.Discard)
	if ok, _ := ask2(ctx, "read_file", nil); ok {
		t.Error("always-allow leaked into another handler")
	}
}

func TestPromptShowsArgumentsSafely(t *testing.T) {
	items := make([]any, 25)
	for i := range items {
		items[i] = float64(i)
	}
	var out bytes.Buffer
	ask := permission.Prompt(strings.NewReader("m\nn\n"), &out)
	ask(context.Background(), "evil\x1b[2Jtool", map[string]any{
		"content": strings.Repeat("x", 250),
		"list":    items,
		"escape":  "\x1b[2J\u009b31m\u202egnp.exe<b>",
		"nested":  map[string]any{"long": strings.Repeat("é", 150)},
		// Go values of other types are shown as JSON and cut the same way.
		"headers": map[string]string{"X-Long": strings.Repeat("h", 250)},
		"names":   []string{strings.Repeat("n", 250)},
		"big":     int64(9007199254740993),
		"nan":     math.NaN(),
		"ch":      make(chan int),
	})
	got := out.String()
	for _, want := range []string{
		`Tool "evil\x1b[2Jtool" wants to run`,
		`"content": "` + strings.Repeat("x", 250) + `"`,
		"    23,\n    24\n  ]",
		`"escape": "\u001b[2J\u009b31m\u202egnp.exe<b>"`,
		"  \"list\": [\n    0,\n    1,",
		`"X-Long": "` + strings.Repeat("h", 250) + `"`,
		`"names": [` + "\n" + `    "` + strings.Repeat("n", 250) + `"`,
		`"long": "` + strings.Repeat("é", 150) + `"`,
		`"big": 9007199254740993,`,
		`"nan": "NaN"`,
		`"ch": "0x`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output does not contain %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"\x1b", "\u009b", "\u202e"} {
		if strings.Contains(got, bad) {
			t.Errorf("output contains the raw control character %q", bad)
		}
	}
}

func TestPromptWithoutArguments(t *testing.T) {
	var out bytes.Buffer
	permission.Prompt(strings.NewReader("y\n"), &out)(context.Background(), "ping", nil)
	if want := "Tool \"ping\" wants to run without arguments.\n" + questionTail; out.String() != want {
		t.Errorf("output = %q, want %q", out.String(), want)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("terminal gone") }

func TestPromptWriteError(t *testing.T) {
	ok, err := permission.Prompt(strings.NewReader("y\n"), failingWriter{})(context.Background(), "t", nil)
	if ok || err == nil || !strings.Contains(err.Error(), "terminal gone") {
		t.Errorf("= %v, %v; want false and the write error", ok, err)
	}
}

// writes is a writer that hands every write to a channel.
type writes chan string

func (w writes) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

func TestPromptSerialisesQuestions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, answer := io.Pipe()
		out := make(writes, 10)
		ask := permission.Prompt(in, out)
		type result struct {
			tool string
			ok   bool
		}
		results := make(chan result, 2)
		for _, tool := range []string{"first", "second"} {
			go func() {
				ok, err := ask(context.Background(), tool, nil)
				if err != nil {
					t.Errorf("%s: %v", tool, err)
				}
				results <- result{tool, ok}
			}()
		}
		synctest.Wait()
		if len(out) != 1 {
			t.Fatalf("%d questions shown at once, want 1", len(out))
		}
		q1 := <-out
		io.WriteString(answer, "y\n")
		synctest.Wait()
		if len(out) != 1 {
			t.Fatalf("after the first answer %d questions shown, want 1", len(out))
		}
		q2 := <-out
		io.WriteString(answer, "n\n")
		r1, r2 := <-results, <-results
		if r1.tool == r2.tool {
			t.Fatalf("both results are for %q", r1.tool)
		}
		got := map[string]bool{r1.tool: r1.ok, r2.tool: r2.ok}
		firstAsked := "first"
		if strings.Contains(q1, `"second"`) {
			firstAsked = "second"
		}
		if !got[firstAsked] || len(got) != 2 {
			t.Errorf("results %v: the first question (%q) should have got yes", got, firstAsked)
		}
		if strings.Contains(q2, `"`+firstAsked+`"`) {
			t.Errorf("the same tool was asked twice: %q then %q", q1, q2)
		}
		answer.Close()
	})
}

func TestPromptAlwaysAnswersWaitingCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, answer := io.Pipe()
		out := make(writes, 10)
		ask := permission.Prompt(in, out)
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				if ok, err := ask(context.Background(), "read_file", nil); !ok || err != nil {
					t.Errorf("= %v, %v; want true, nil", ok, err)
				}
			})
		}
		synctest.Wait()
		io.WriteString(answer, "a\n")
		wg.Wait()
		if len(out) != 1 {
			t.Errorf("%d questions shown, want 1", len(out))
		}
		answer.Close()
	})
}

// blockingReader blocks until it is given a line; closing lines is EOF. It
// serves one reader at a time.
type blockingReader struct {
	lines chan string
	rest  string
}

func (r *blockingReader) Read(p []byte) (int, error) {
	if r.rest == "" {
		line, ok := <-r.lines
		if !ok {
			return 0, io.EOF
		}
		r.rest = line
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

func TestPromptTimeoutThroughMiddleware(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := &blockingReader{lines: make(chan string)}
		var out safeBuffer
		m := permission.New(permission.Prompt(in, &out), permission.WithTimeout(time.Minute))

		_, err, executed := run(context.Background(), m, "delete_file", map[string]any{"path": "a.txt"})
		var ce *permission.ConsentError
		if !errors.As(err, &ce) || ce.Reason != permission.ReasonTimeout || executed {
			t.Fatalf("err = %v, executed = %v; want a timeout and no execution", err, executed)
		}
		synctest.Wait()
		if !strings.HasSuffix(out.String(), questionTail+"\n(no answer; the tool was not run)\n") {
			t.Errorf("output does not end with the notice:\n%q", out.String())
		}

		// The read of the abandoned question is still blocked; its line goes to the
		// next question, which is the one on the screen when the user answers.
		done := make(chan bool)
		go func() {
			_, err, executed := run(context.Background(), m, "read_file", nil)
			if err != nil {
				t.Errorf("second call: %v", err)
			}
			done <- executed
		}()
		synctest.Wait()
		if n := strings.Count(out.String(), questionTail); n != 2 {
			t.Fatalf("%d questions shown, want 2", n)
		}
		in.lines <- "y\n"
		if !<-done {
			t.Error("second call not executed after yes")
		}
		close(in.lines)
	})
}

func TestPromptDropsAnswerWithoutQuestion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := &blockingReader{lines: make(chan string, 1)}
		ask := permission.Prompt(in, io.Discard)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() {
			_, err := ask(ctx, "t", nil)
			errc <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		in.lines <- "y\n" // arrives while no question waits: dropped
		synctest.Wait()
		go func() {
			ok, err := ask(context.Background(), "t", nil)
			if ok || err != nil {
				t.Errorf("= %v, %v; want a fresh answer (no)", ok, err)
			}
			errc <- err
		}()
		synctest.Wait()
		in.lines <- "n\n"
		<-errc
		close(in.lines)
	})
}

func TestPromptWaitingForTurnHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := &blockingReader{lines: make(chan string)}
		ask := permission.Prompt(in, io.Discard)
		go ask(context.Background(), "holder", nil) // holds the turn
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := ask(ctx, "waiter", nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want DeadlineExceeded", err)
		}
		close(in.lines)
	})
}

// safeBuffer is a bytes.Buffer safe for concurrent use.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
