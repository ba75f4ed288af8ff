package mail

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/drivertest"
)

func seeded(t *testing.T, caps imap.CapSet) (*imapFixture, *ToolDriver, []uint32) {
	t.Helper()
	im := startIMAP(t, caps, nil)
	uids := []uint32{
		im.add(t, "INBOX", plainMsg, imap.FlagSeen),
		im.add(t, "INBOX", htmlMsg, imap.FlagFlagged),
		im.add(t, "INBOX", replyMsg),
	}
	return im, newTestDriver(t, im, nil, nil), uids
}

func TestToolsPublished(t *testing.T) {
	im := startIMAP(t, nil, nil)
	sm := startSMTP(t, nil)
	d := newTestDriver(t, im, sm, nil)
	list, _ := d.ListTools(context.Background())
	var names []string
	ann := map[string]mcs.ToolAnnotations{}
	for _, tl := range list {
		names = append(names, tl.Name)
		ann[tl.Name] = *tl.Annotations
	}
	want := []string{"list_folders", "list_messages", "search_messages", "fetch_message", "move_message", "set_flags", "create_draft", "send_draft", "discard_draft"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	for _, n := range []string{"list_folders", "list_messages", "search_messages", "fetch_message"} {
		if !ann[n].ReadOnly {
			t.Errorf("%s is not annotated read-only", n)
		}
	}
	if a := ann["send_draft"]; !a.Destructive || a.ReadOnly {
		t.Errorf("send_draft annotations = %+v, want destructive", a)
	}
	for _, n := range []string{"move_message", "set_flags", "create_draft"} {
		if ann[n].ReadOnly {
			t.Errorf("%s is annotated read-only", n)
		}
	}
}

func TestListFoldersAndMessages(t *testing.T) {
	_, d, uids := seeded(t, nil)
	folders := call(t, d, "list_folders", nil)
	var names []string
	for _, f := range folders["folders"].([]any) {
		names = append(names, f.(map[string]any)["name"].(string))
	}
	if diff := cmp.Diff([]string{"Archive", "INBOX", "Trash"}, names); diff != "" {
		t.Errorf("folders (-want +got):\n%s", diff)
	}

	page := call(t, d, "list_messages", map[string]any{"limit": 2})
	if got := uidsOf(page); !slices.Equal(got, []uint32{uids[2], uids[1]}) {
		t.Errorf("first page = %v, want the newest two %v", got, []uint32{uids[2], uids[1]})
	}
	if page["total"] != 3.0 || page["next_before_uid"] != float64(uids[1]) {
		t.Errorf("page = %v, want total 3 and next_before_uid %d", page, uids[1])
	}
	next := call(t, d, "list_messages", map[string]any{"limit": 2, "before_uid": page["next_before_uid"]})
	if got := uidsOf(next); !slices.Equal(got, []uint32{uids[0]}) {
		t.Errorf("second page = %v, want %v", got, uids[:1])
	}
	if _, more := next["next_before_uid"]; more {
		t.Errorf("last page has next_before_uid: %v", next)
	}
	first := page["messages"].([]any)[1].(map[string]any)
	if first["subject"] != "Café offers" || first["from"].([]any)[0] != "News <news@shop.example>" {
		t.Errorf("summary = %v", first)
	}
	if got := call(t, d, "list_messages", map[string]any{"limit": 1000}); got["count"] != 3.0 {
		t.Errorf("limit above the cap: %v", got["count"])
	}
}

func uidsOf(res map[string]any) []uint32 {
	var out []uint32
	for _, m := range res["messages"].([]any) {
		out = append(out, uint32(m.(map[string]any)["uid"].(float64)))
	}
	return out
}

func TestSearchMessages(t *testing.T) {
	_, d, uids := seeded(t, nil)
	for _, tc := range []struct {
		name string
		args map[string]any
		want []uint32
	}{
		{"from", map[string]any{"from": "bob@partner.org"}, []uint32{uids[2], uids[0]}},
		{"subject", map[string]any{"subject": "lunch"}, []uint32{uids[2], uids[0]}},
		{"text", map[string]any{"text": "Noon works"}, []uint32{uids[2]}},
		{"unseen", map[string]any{"unseen": true}, []uint32{uids[2], uids[1]}},
		{"flagged", map[string]any{"flagged": true}, []uint32{uids[1]}},
		{"from and unseen", map[string]any{"from": "bob", "unseen": true}, []uint32{uids[2]}},
		{"since", map[string]any{"since": "2026-03-10"}, uids},
		{"before", map[string]any{"before": "2026-03-10"}, nil},
		{"quote in text", map[string]any{"subject": `a "quoted" (paren) \ word`}, nil},
		{"limit", map[string]any{"limit": 1}, []uint32{uids[2]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, d, "search_messages", tc.args)
			want := slices.Clone(tc.want)
			if tc.name == "since" {
				slices.Reverse(want)
			}
			if got := uidsOf(res); !slices.Equal(got, want) {
				t.Errorf("uids = %v, want %v", got, want)
			}
		})
	}
}

func TestSearchRefusesBadInput(t *testing.T) {
	_, d, _ := seeded(t, nil)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"since": "last tuesday"}, `since "last tuesday" is not a date; write it as YYYY-MM-DD`},
		{map[string]any{"before": "2026-13-01"}, `before "2026-13-01" is not a date`},
		{map[string]any{"subject": "x\r\nA1 DELETE INBOX"}, "subject contains a control character"},
		{map[string]any{"folder": "INBOX\r\nA1 DELETE INBOX"}, "contains a control character"},
		{map[string]any{"limit": -1}, "limit -1 is negative"},
	} {
		err := callErr(t, d, "search_messages", tc.args)
		if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "search_messages: ") {
			t.Errorf("%v: error %q, want it to contain %q", tc.args, err, tc.want)
		}
	}
	// The connection still works.
	if res := call(t, d, "search_messages", map[string]any{"from": "bob"}); res["count"] != 2.0 {
		t.Errorf("after refusals: %v", res)
	}
}

func TestFolderWithQuotes(t *testing.T) {
	im := startIMAP(t, nil, nil)
	name := `Projects "Q3" (draft) \ x`
	if err := im.user.Create(name, nil); err != nil {
		t.Fatal(err)
	}
	uid := im.add(t, name, plainMsg)
	d := newTestDriver(t, im, nil, nil)
	res := call(t, d, "list_messages", map[string]any{"folder": name})
	if got := uidsOf(res); !slices.Equal(got, []uint32{uid}) {
		t.Errorf("messages in %q = %v", name, got)
	}
	res = call(t, d, "move_message", map[string]any{"folder": name, "uid": float64(uid), "destination": "Archive"})
	if res["moved"] != true {
		t.Errorf("move = %v", res)
	}
	err := callErr(t, d, "list_messages", map[string]any{"folder": "Nope\n"})
	if !strings.Contains(err.Error(), "control character") {
		t.Errorf("error = %v", err)
	}
	err = callErr(t, d, "list_messages", map[string]any{"folder": "Does not exist"})
	if !strings.Contains(err.Error(), `folder "Does not exist" cannot be opened`) {
		t.Errorf("error = %v", err)
	}
}

func TestFetchMessage(t *testing.T) {
	im, d, uids := seeded(t, nil)
	plain := call(t, d, "fetch_message", map[string]any{"uid": float64(uids[0])})
	want := map[string]any{
		"folder": "INBOX", "uid": float64(uids[0]), "date": "2026-03-09T10:00:00Z",
		"from": []any{"Bob <bob@partner.org>"}, "to": []any{"Alice <alice@example.com>"},
		"subject": "Lunch on Friday", "flags": []any{`\Seen`}, "size": plain["size"],
		"message_id": "<lunch-1@partner.org>", "attachments": []any{},
		"body": "Shall we meet at noon?\r\n", "body_format": "text", "truncated": false,
	}
	if diff := cmp.Diff(want, plain); diff != "" {
		t.Errorf("plain message (-want +got):\n%s", diff)
	}

	html := call(t, d, "fetch_message", map[string]any{"uid": float64(uids[1])})
	body := html["body"].(string)
	if body != "Café deals\nTwo for one.\nSee deals (https://shop.example/d) x" {
		t.Errorf("html body = %q", body)
	}
	for _, bad := range []string{"steal", "color", "Ignore previous", "javascript", "<"} {
		if strings.Contains(body, bad) {
			t.Errorf("html body keeps %q: %q", bad, body)
		}
	}
	if diff := cmp.Diff([]any{map[string]any{"part": "2", "filename": "prices.pdf", "content_type": "application/pdf", "size": 28.0}}, html["attachments"]); diff != "" {
		t.Errorf("attachments (-want +got):\n%s", diff)
	}
	if html["body_format"] != "html reduced to text" {
		t.Errorf("format = %v", html["body_format"])
	}

	reply := call(t, d, "fetch_message", map[string]any{"uid": float64(uids[2])})
	if reply["in_reply_to"] != "<lunch-2@example.com>" || reply["references"] != "<lunch-1@partner.org> <lunch-2@example.com>" {
		t.Errorf("threading = %v, %v", reply["in_reply_to"], reply["references"])
	}

	// BODY.PEEK: reading does not mark the message read.
	res := call(t, d, "search_messages", map[string]any{"unseen": true})
	if got := uidsOf(res); !slices.Equal(got, []uint32{uids[2], uids[1]}) {
		t.Errorf("unseen after fetching = %v, want %v", got, []uint32{uids[2], uids[1]})
	}

	cut := call(t, d, "fetch_message", map[string]any{"uid": float64(uids[0]), "max_bytes": 5})
	if cut["body"] != "Shall" || cut["truncated"] != true {
		t.Errorf("cut body = %q truncated %v", cut["body"], cut["truncated"])
	}
	missing := call(t, d, "fetch_message", map[string]any{"uid": 999})
	if missing["error"] != "not found" {
		t.Errorf("missing = %v", missing)
	}
	_ = im
}

func TestSetFlags(t *testing.T) {
	_, d, uids := seeded(t, nil)
	res := call(t, d, "set_flags", map[string]any{"uid": float64(uids[2]), "add": []any{`\seen`, `$Important`}})
	if diff := cmp.Diff([]any{`\Seen`, `$Important`}, res["flags"], sortAny()); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
	}
	res = call(t, d, "set_flags", map[string]any{"uid": float64(uids[2]), "remove": []any{`\Seen`}})
	if diff := cmp.Diff([]any{`$Important`}, res["flags"]); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		flag, want string
	}{
		{`\Deleted`, "not offered"},
		{`\Recent`, "is not one of"},
		{"a b", "may hold letters"},
		{"x)\r\nA1 EXPUNGE", "may hold letters"},
	} {
		err := callErr(t, d, "set_flags", map[string]any{"uid": float64(uids[2]), "add": []any{tc.flag}})
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("flag %q: %v, want %q", tc.flag, err, tc.want)
		}
	}
	if res := call(t, d, "set_flags", map[string]any{"uid": 999, "add": []any{`\Seen`}}); res["error"] != "not found" {
		t.Errorf("missing = %v", res)
	}
}

func sortAny() cmp.Option {
	return cmp.Transformer("sort", func(in []any) []string {
		out := make([]string, len(in))
		for i, v := range in {
			out[i] = fmt.Sprint(v)
		}
		slices.Sort(out)
		return out
	})
}

// TestMoveKeepsOtherDeleted moves one message, with MOVE and with the UIDPLUS
// fallback, and proves that the other messages flagged \Deleted in the folder
// survive.
func TestMoveKeepsOtherDeleted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caps   imap.CapSet
		method string
	}{
		{"MOVE", nil, "MOVE"},
		{"UIDPLUS fallback", imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapUIDPlus: {}}, "COPY+UID EXPUNGE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			im := startIMAP(t, tc.caps, nil)
			keep1 := im.add(t, "INBOX", plainMsg, imap.FlagDeleted)
			move := im.add(t, "INBOX", replyMsg)
			keep2 := im.add(t, "INBOX", htmlMsg, imap.FlagDeleted)
			d := newTestDriver(t, im, nil, nil)
			res := call(t, d, "move_message", map[string]any{"uid": float64(move), "destination": "Archive"})
			if res["method"] != tc.method || res["moved"] != true {
				t.Fatalf("move = %v, want method %s", res, tc.method)
			}
			if got := uidsOf(call(t, d, "list_messages", nil)); !slices.Equal(got, []uint32{keep2, keep1}) {
				t.Errorf("INBOX after the move = %v, want the two \\Deleted messages %v", got, []uint32{keep2, keep1})
			}
			archived := call(t, d, "list_messages", map[string]any{"folder": "Archive"})
			msgs := archived["messages"].([]any)
			if len(msgs) != 1 || msgs[0].(map[string]any)["subject"] != "Re: Lunch on Friday" {
				t.Errorf("Archive = %v", archived)
			}
			if res := call(t, d, "move_message", map[string]any{"uid": float64(move), "destination": "Archive"}); res["error"] != "not found" {
				t.Errorf("moving again = %v", res)
			}
		})
	}
	t.Run("neither MOVE nor UIDPLUS", func(t *testing.T) {
		im := startIMAP(t, imap.CapSet{imap.CapIMAP4rev1: {}}, nil)
		keep := im.add(t, "INBOX", plainMsg, imap.FlagDeleted)
		move := im.add(t, "INBOX", replyMsg)
		d := newTestDriver(t, im, nil, nil)
		err := callErr(t, d, "move_message", map[string]any{"uid": float64(move), "destination": "Archive"})
		if !strings.Contains(err.Error(), "supports neither MOVE") {
			t.Errorf("error = %v", err)
		}
		if got := uidsOf(call(t, d, "list_messages", nil)); !slices.Equal(got, []uint32{move, keep}) {
			t.Errorf("INBOX = %v, want it untouched", got)
		}
	})
}

func TestMetaAndConcurrency(t *testing.T) {
	im, _, uids := seeded(t, nil)
	sm := startSMTP(t, nil)
	cfg := Config{IMAPAddr: im.addr, SMTPAddr: sm.addr, TLS: TLSNone, Username: testUser, From: "alice@example.com",
		Credentials: staticCreds{"mail": testPassword}, AllowRecipients: []string{"*@example.com"}}
	td := drivertest.Open(t, NewToolDriver, cfg)
	want := mcs.Meta{
		ID: "mcs-go/mail", Name: "Mail", Version: version,
		Bindings:     []mcs.Binding{{Capability: "mail", Adapter: "imap+smtp", SpecFormat: "builtin"}},
		Capabilities: []mcs.Capability{mcs.CapabilityOrchestratable, mcs.CapabilityHealthcheck},
	}
	if diff := cmp.Diff(want, td.Meta()); diff != "" {
		t.Errorf("ToolDriver.Meta (-want +got):\n%s", diff)
	}
	want.SupportedLLMs = []string{"*"}
	want.Capabilities = []mcs.Capability{mcs.CapabilityOrchestratable, mcs.CapabilityStandalone, mcs.CapabilityNativeTools, mcs.CapabilityStreaming, mcs.CapabilityToolMiddleware, mcs.CapabilityHealthcheck}
	if diff := cmp.Diff(want, drivertest.OpenDriver(t, New, cfg).Meta()); diff != "" {
		t.Errorf("Driver.Meta (-want +got):\n%s", diff)
	}
	drivertest.CheckTools(t, td, []string{"list_folders", "list_messages", "search_messages", "fetch_message", "move_message", "set_flags", "create_draft", "send_draft", "discard_draft"})
	// Many calls at once share the one IMAP connection, one at a time.
	drivertest.RunConcurrently(t, td, 8, func(i int) []drivertest.ToolCall {
		return []drivertest.ToolCall{
			{Tool: "fetch_message", Args: map[string]any{"uid": float64(uids[i%3])}},
			{Tool: "search_messages", Args: map[string]any{"from": "bob"}},
			{Tool: "list_folders"},
			{Tool: "create_draft", Args: map[string]any{"to": []any{"jane@example.com"}, "subject": fmt.Sprint("s", i), "body": "b"}},
		}
	})
}

func TestHealthcheck(t *testing.T) {
	im := startIMAP(t, nil, nil)
	sm := startSMTP(t, nil)
	d := newTestDriver(t, im, sm, nil)
	h := d.Healthcheck(context.Background())
	if h.Status != mcs.HealthOK || h.Detail != "IMAP "+im.addr+", SMTP "+sm.addr+" answered" {
		t.Errorf("healthy: %+v", h)
	}
	bad := newTestDriver(t, im, nil, func(c *Config) { c.SMTPAddr = "127.0.0.1:1" })
	h = bad.Healthcheck(context.Background())
	if h.Status != mcs.HealthError || !strings.Contains(h.Detail, "smtp: connecting to 127.0.0.1:1") {
		t.Errorf("no SMTP server: %+v", h)
	}
	if n := len(sm.messages()); n != 0 {
		t.Errorf("the check sent %d messages", n)
	}
}
