package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/internal/chat"
	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/middleware/auth"
)

// A call that needs a sign-in shows the link on the terminal, whatever the
// model makes of it.
func TestChatShowsSignInLink(t *testing.T) {
	pets, queries := petStore(t)
	llm := replay.New(t, replay.SSE(t, "testdata/find_sold.sse"), replay.SSE(t, "testdata/answer_sold.sse"))
	link := "https://as.example/authorize?client_id=c&state=s"
	creds := auth.CredentialProviderFunc(func(_ context.Context, scope string) (string, error) {
		return "", &auth.Challenge{Message: "sign in", URL: link, Scope: scope}
	})
	spec := strings.Replace(petSpec, "paths:", "components: {securitySchemes: {bearer: {type: http, scheme: bearer}}}\nsecurity: [{bearer: []}]\npaths:", 1)
	d, err := rest.New(rest.Config{Spec: []byte(spec), BaseURL: pets.URL, Credentials: creds, Name: "pets"},
		mcs.WithMiddleware(auth.New()), mcs.WithNativeTools(func(string) bool { return true }))
	if err != nil {
		t.Fatal(err)
	}
	in := strings.NewReader("Which pets are sold?\n")
	var out strings.Builder
	if err := chat.Run(context.Background(), chat.Config{Driver: d, Model: model(t, llm.URL), In: in, Out: &out, Native: true}); err != nil {
		t.Fatal(err)
	}
	if want := "← sign-in needed: open " + link + ", then ask again\n"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	if q := queries(); len(q) != 0 {
		t.Errorf("the API was called without a credential: %v", q)
	}
}
