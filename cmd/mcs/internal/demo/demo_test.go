package demo

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestStartClose checks that the demo serves its spec and data on loopback and
// that Close removes the data set.
func TestStartClose(t *testing.T) {
	d, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.URL, "http://127.0.0.1:") {
		t.Errorf("URL %q is not on loopback", d.URL)
	}
	resp, err := http.Get(d.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "findPetsByStatus") {
		t.Errorf("spec: %d %.100s", resp.StatusCode, body)
	}
	if _, err := os.Stat(d.Dir + "/adoptions.csv"); err != nil {
		t.Error(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Dir); !os.IsNotExist(err) {
		t.Errorf("data directory left behind: %v", err)
	}
}

// TestStoreWrites checks the key check and the validation of the store.
func TestStoreWrites(t *testing.T) {
	d, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	post := func(key, body string) int {
		req, _ := http.NewRequest(http.MethodPost, d.URL+"/api/pets", strings.NewReader(body))
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		key, body string
		want      int
	}{
		{"", `{"name": "Luna"}`, 401},
		{"wrong", `{"name": "Luna"}`, 401},
		{APIKey, `{"name": "Luna"}`, 201},
		{APIKey, `{"name": ""}`, 400},
		{APIKey, `{"name": "Luna", "status": "gone"}`, 400},
		{APIKey, `not json`, 400},
	} {
		if got := post(tc.key, tc.body); got != tc.want {
			t.Errorf("POST key %q body %s: %d, want %d", tc.key, tc.body, got, tc.want)
		}
	}
}
