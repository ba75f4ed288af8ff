package mcp

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/mcs-go/mcs"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// elicit answers an elicitation request of the server: with Config.Elicit when
// set, else through Config.Consent, else declined.
func (d *ToolDriver) elicit(ctx context.Context, req *mcpsdk.ElicitRequest) (*mcpsdk.ElicitResult, error) {
	// A person may be asked: stop waiting when the driver closes.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(d.life, cancel)
	defer stop()

	if d.cfg.Elicit != nil {
		return d.cfg.Elicit(ctx, req)
	}
	decline := &mcpsdk.ElicitResult{Action: "decline"}
	p := req.Params
	if p == nil {
		return decline, nil
	}
	if d.cfg.Consent == nil {
		d.log.Warn("mcp: elicitation declined: no consent handler configured", "server", d.server, "message", oneLine(p.Message))
		return decline, nil
	}
	if p.Mode == "url" || p.URL != "" {
		d.log.Warn("mcp: URL elicitation declined", "server", d.server)
		return decline, nil
	}
	fields, content, ok := formDefaults(p.RequestedSchema)
	if !ok {
		d.log.Warn("mcp: elicitation declined: it asks for input a yes or no cannot give", "server", d.server, "message", oneLine(p.Message))
		return decline, nil
	}
	name := "elicitation"
	if info, ok := mcs.CallInfoFromContext(ctx); ok && info.Tool.Name != "" {
		name = info.Tool.Name
	}
	args := map[string]any{"elicitation": p.Message, "server": d.server}
	if len(fields) > 0 {
		args["fields"] = fields
	}
	allowed, err := d.cfg.Consent(ctx, name, args)
	switch {
	case err != nil:
		d.log.Warn("mcp: elicitation cancelled: no decision", "server", d.server, "error", err)
		return &mcpsdk.ElicitResult{Action: "cancel"}, nil
	case !allowed:
		return decline, nil
	}
	return &mcpsdk.ElicitResult{Action: "accept", Content: content}, nil
}

// formDefaults reads a form's fields and their defaults; ok is false when a
// required field has none.
func formDefaults(schema any) (fields []string, content map[string]any, ok bool) {
	content = map[string]any{}
	var m map[string]any
	switch s := schema.(type) {
	case nil:
		return nil, content, true
	case map[string]any:
		m = s
	default:
		b, err := json.Marshal(s)
		if err != nil || json.Unmarshal(b, &m) != nil {
			return nil, nil, false
		}
	}
	props, _ := m["properties"].(map[string]any)
	for k, v := range props {
		fields = append(fields, k)
		if pm, ok := v.(map[string]any); ok {
			if def, ok := pm["default"]; ok {
				content[k] = def
			}
		}
	}
	sort.Strings(fields)
	if req, okReq := m["required"].([]any); okReq {
		for _, r := range req {
			if s, isStr := r.(string); isStr {
				if _, has := content[s]; !has {
					return fields, nil, false
				}
			}
		}
	}
	return fields, content, true
}
