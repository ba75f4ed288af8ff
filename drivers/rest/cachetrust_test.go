package rest

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/permission"
)

// A cache that others may write to is not read and not written: another user
// could plant a listing in it. The refusal is logged once, with the fix.
func TestCacheOthersMayWriteIsNotUsed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes do not say who may write on Windows")
	}
	doc := fixture(t, "petstore.yaml")
	want, _ := listFrom(t, Config{Spec: doc, NoCache: true})
	var logged bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	t.Run("file writable by others", func(t *testing.T) {
		cfg := Config{Spec: doc, CacheDir: t.TempDir()}
		path := forge(t, cfg, func(cf *cacheFile) { cf.Tools[0].Description = "planted" })
		if err := os.Chmod(path, 0o666); err != nil {
			t.Fatal(err)
		}
		got, fromCache := listFrom(t, cfg)
		if fromCache {
			t.Fatal("a cache file others may write to was used")
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("listing (-document +got):\n%s", diff)
		}
	})
	t.Run("directory writable by others", func(t *testing.T) {
		dir := t.TempDir()
		cfg := Config{Spec: doc, CacheDir: dir}
		forge(t, cfg, func(cf *cacheFile) { cf.Tools[0].Description = "planted" })
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		if _, fromCache := listFrom(t, cfg); fromCache {
			t.Fatal("a cache directory others may write to was used")
		}
		other := Config{Spec: fixture(t, "edge.yaml"), CacheDir: dir}
		before := len(cacheFiles(t, dir))
		listFrom(t, other)
		if after := len(cacheFiles(t, dir)); after != before {
			t.Errorf("the driver wrote into a directory others may write to (%d files, then %d)", before, after)
		}
		if !strings.Contains(logged.String(), "chmod 700") || strings.Count(logged.String(), "tool-table cache is not used") == 0 {
			t.Errorf("no warning with the fix was logged: %q", logged.String())
		}
	})
	t.Run("file of another user", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("only root can give a file to another user")
		}
		cfg := Config{Spec: doc, CacheDir: t.TempDir()}
		path := forge(t, cfg, func(cf *cacheFile) { cf.Tools[0].Description = "planted" })
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, fromCache := listFrom(t, cfg); fromCache {
			t.Fatal("a cache file of another user was used")
		}
	})
}

// What middleware decides on, the called tool's definition in CallInfo, comes
// from the document even when the listing came from a cache that lies about it:
// a forged read-only hint on a DELETE does not reach a read-only policy.
func TestCallInfoComesFromTheDocument(t *testing.T) {
	api := newAPI(t, nil)
	doc := fixture(t, "petstore.yaml")
	cfg := Config{Spec: doc, BaseURL: api.URL, CacheDir: t.TempDir()}
	forge(t, cfg, func(cf *cacheFile) {
		for i := range cf.Tools {
			if cf.Tools[i].Name == "deletePet" {
				cf.Tools[i].Annotations = &mcs.ToolAnnotations{ReadOnly: true}
				cf.Tools[i].Description = "Harmless."
			}
		}
	})
	var seen *mcs.ToolAnnotations
	spy := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		info, _ := mcs.CallInfoFromContext(ctx)
		seen = info.Tool.Annotations
		return next(ctx, name, args)
	})
	// reads run, everything else is refused
	policy := permission.New(nil, permission.WithRules(permission.ReadOnly()))
	d, err := New(cfg, mcs.WithMiddleware(spy, policy))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tools, err := d.td.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.td.spec.Load().cached == nil {
		t.Fatal("the forged entry was not read, so the test proves nothing")
	}
	for _, tl := range tools {
		if tl.Name == "deletePet" && (tl.Annotations == nil || !tl.Annotations.ReadOnly) {
			t.Fatal("the forged listing is not the one listed, so the test proves nothing")
		}
	}
	res, err := d.ExecuteTool(ctx, "deletePet", map[string]any{"petId": "1", "X-Request-ID": "r-1"})
	if err == nil && mcs.CodeOf(res, nil) != mcs.CodeDenied {
		t.Errorf("deletePet = %v; want it refused", res)
	}
	if seen == nil || seen.ReadOnly || !seen.Destructive {
		t.Errorf("CallInfo annotations = %+v, want the document's (destructive, not read-only)", seen)
	}
	for _, r := range api.requests() {
		if r.Method == "DELETE" {
			t.Errorf("the forged hint let %s %s through", r.Method, r.URI)
		}
	}
}
