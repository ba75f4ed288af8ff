package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/runner"
)

// chatSession is the one conversation of the Chat page.
type chatSession struct {
	mu      sync.Mutex // one question at a time
	history []map[string]any
}

type chatRequest struct {
	Message string `json:"message"`
}

type chatCall struct {
	Name    string `json:"name"`
	Args    string `json:"arguments"`
	Outcome string `json:"outcome"`
}

type chatAnswer struct {
	Text  string     `json:"text"`
	Calls []chatCall `json:"calls"`
	Error string     `json:"error,omitempty"`
}

// apiChat asks the model one question with the session's history, through the
// runner, as mcs chat does: the stack's consent questions wait in the browser
// and, with ask = "queue", the calls approved since the last question run
// before the model's next request.
func (s *Server) apiChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if !readJSON(w, r, &req) {
		return
	}
	st, d, err := s.state()
	s.mu.Lock()
	c, store := s.chat, s.store
	s.mu.Unlock()
	switch {
	case err != nil:
		writeJSON(w, chatAnswer{Calls: []chatCall{}, Error: s.red.Text(err.Error(), nil)})
		return
	case c == nil:
		writeJSON(w, chatAnswer{Calls: []chatCall{}, Error: "no model is configured: start mcs ui with --model (and --provider, --base-url as for mcs chat)"})
		return
	case strings.TrimSpace(req.Message) == "":
		writeJSON(w, chatAnswer{Calls: []chatCall{}, Error: "the message is empty"})
		return
	}
	out := chatAnswer{Calls: []chatCall{}}
	var callsMu sync.Mutex
	opts := []runner.Option{
		runner.WithNativeTools(s.cfg.Native),
		runner.WithOnCall(func(rec mcs.CallRecord) {
			red, known := s.red.Args(rec.Arguments)
			args, _ := json.Marshal(red)
			kind := string(mcs.CodeOf(rec.Result, rec.Err))
			if rec.Err != nil {
				kind = "error: " + s.red.Text(rec.Err.Error(), known)
			}
			if mcs.CodeOf(rec.Result, nil) == mcs.CodeChallenge {
				s.noteChallenge(rec.Result)
			} else if ch, ok := errors.AsType[*auth.Challenge](rec.Err); ok {
				s.noteChallenge(ch.Result())
			}
			callsMu.Lock()
			out.Calls = append(out.Calls, chatCall{Name: rec.Name, Args: string(args), Outcome: kind})
			callsMu.Unlock()
		}),
	}
	if st != nil && st.Approvals != nil && st.Approvals.Queue && store != nil {
		opts = append(opts, runner.WithApprovals(store))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	res, err := runner.New(d, s.cfg.Model, opts...).Run(r.Context(), c.history, req.Message)
	if err != nil {
		if errors.Is(err, runner.ErrMaxRounds) && res != nil {
			c.history = res.History
		}
		msg := err.Error()
		if errors.Is(err, runner.ErrUnreachable) {
			endpoint := ""
			if e, ok := s.cfg.Model.(interface{ Endpoint() string }); ok {
				endpoint = e.Endpoint()
			}
			hint := s.cfg.ModelHint
			if hint == "" {
				hint = "--base-url URL"
			}
			msg += "; the model could not be reached at " + endpoint + ": start the server there, or restart mcs ui with " + hint
		}
		out.Error = s.red.Text(msg, nil)
		writeJSON(w, out)
		return
	}
	c.history = res.History
	out.Text = s.red.Text(res.Text, nil)
	writeJSON(w, out)
}

func (s *Server) apiChatReset(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	c := s.chat
	s.mu.Unlock()
	if c != nil {
		c.mu.Lock()
		c.history = nil
		c.mu.Unlock()
	}
	writeJSON(w, map[string]string{"ok": "reset"})
}
