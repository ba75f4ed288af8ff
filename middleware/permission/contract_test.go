package permission_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/concerntest"
	"github.com/mcs-go/mcs/middleware/permission"
)

// consentDriver builds the consent concern in, without the middleware: it asks
// its handler before every call and fails closed without one.
type consentDriver struct {
	consent atomic.Pointer[permission.ConsentFunc]
	ran     atomic.Int32
}

func (d *consentDriver) Meta() mcs.Meta {
	return mcs.Meta{ID: "test/consent", Name: "Consent", Version: "1.0.0",
		Capabilities: []mcs.Capability{permission.Capability}}
}

func (d *consentDriver) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "delete_file", Description: "Delete a file."}}, nil
}

func (d *consentDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	f := d.consent.Load()
	if f == nil {
		return nil, errors.New("no consent handler")
	}
	ok, err := (*f)(ctx, name, args)
	if err != nil {
		return nil, err
	}
	if !ok {
		return permission.Denied(name, permission.DeniedMessage(name)), nil
	}
	d.ran.Add(1)
	return "deleted", nil
}

func (d *consentDriver) SetConsentHandler(f permission.ConsentFunc) {
	if f == nil {
		d.consent.Store(nil)
		return
	}
	d.consent.Store(&f)
}

func TestSupportsConsent(t *testing.T) {
	concerntest.Check[permission.SupportsConsent](t, permission.Capability, permission.New(nil), &consentDriver{})
}

// TestSupportsConsentBehaviour drives the middleware and a driver that builds the
// concern in through the contract alone: the handler set with SetConsentHandler
// decides, and without one the call fails closed.
func TestSupportsConsentBehaviour(t *testing.T) {
	type impl struct {
		name string
		new  func() (permission.SupportsConsent, mcs.ToolDriver, func() int32)
	}
	impls := []impl{
		{"middleware", func() (permission.SupportsConsent, mcs.ToolDriver, func() int32) {
			fd := &fakeDriver{}
			mw := permission.New(nil)
			return mw, mcs.NewBaseDriver(fd, mcs.WithMiddleware(mw)), func() int32 { return int32(len(fd.Calls())) }
		}},
		{"built in", func() (permission.SupportsConsent, mcs.ToolDriver, func() int32) {
			d := &consentDriver{}
			return d, d, d.ran.Load
		}},
	}
	tests := []struct {
		name    string
		handler permission.ConsentFunc
		want    any
		wantErr bool
		wantRan int32
	}{
		{"consent runs the tool", allowAll, nil, false, 1},
		{"refusal is the denial result", denyAll, permission.Denied("delete_file", permission.DeniedMessage("delete_file")), false, 0},
		{"no handler fails closed", nil, nil, true, 0},
	}
	for _, im := range impls {
		for _, tt := range tests {
			t.Run(im.name+"/"+tt.name, func(t *testing.T) {
				c, d, ran := im.new()
				c.SetConsentHandler(denyAll) // replaced below
				c.SetConsentHandler(tt.handler)
				res, err := d.ExecuteTool(t.Context(), "delete_file", map[string]any{"path": "a"})
				if (err != nil) != tt.wantErr {
					t.Fatalf("error = %v, want an error: %t", err, tt.wantErr)
				}
				if tt.want != nil {
					if diff := cmp.Diff(tt.want, res); diff != "" {
						t.Errorf("result (-want +got):\n%s", diff)
					}
				}
				if got := ran(); got != tt.wantRan {
					t.Errorf("the tool ran %d times, want %d", got, tt.wantRan)
				}
			})
		}
	}
}
