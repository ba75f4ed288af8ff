package auth

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// signInPoll is how often SignIn asks a provider without a Wait method again.
const signInPoll = 5 * time.Second

// SignIn signs the user in for scope ahead of time, for programs that do so
// outside a conversation (mcs auth login): it calls p.Token until it returns a
// token, shows each new *[Challenge] with show, and in between waits for the
// user: with the provider's Wait method when it has one ([AuthCodeProvider]),
// else for 5 s ([DeviceFlowProvider], whose Token polls). It returns nil once
// signed in, the provider's error when the sign-in fails, and ctx's error when
// ctx ends first. The token itself is not returned.
func SignIn(ctx context.Context, p CredentialProvider, scope string, show func(*Challenge)) error {
	last := ""
	for {
		_, err := p.Token(ctx, scope)
		ch, ok := errors.AsType[*Challenge](err)
		if !ok {
			return err
		}
		if id := ch.URL + "\x00" + ch.Code; id != last {
			last = id
			show(ch)
		}
		if w, ok := p.(interface {
			Wait(context.Context, string) error
		}); ok {
			if err := w.Wait(ctx, scope); err != nil {
				return err
			}
			continue
		}
		t := time.NewTimer(signInPoll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("auth: scope %q: %w", scope, context.Cause(ctx))
		}
	}
}

// Status reports what the store holds for scope, without any secret.
func (p *DeviceFlowProvider) Status(_ context.Context, scope string) (TokenStatus, error) {
	return tokenStatus(p.store, p.storeKey(scope), scope, p.now())
}
