package sandbox

import "encoding/json"

// RunscSpec returns the OCI configuration the runsc backend writes for
// command, as JSON values, with the workspace owned by 65534.
func RunscSpec(cfg Config, command string) (map[string]any, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	r := &runsc{cfg: cfg, uid: 65534, gid: 65534}
	b, err := json.Marshal(r.spec(command, "/bundle/etc"))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	err = json.Unmarshal(b, &m)
	return m, err
}
