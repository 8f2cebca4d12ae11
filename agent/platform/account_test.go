package platform

import (
	"testing"
)

// GetAccountSettings tells this platform's limits and usage, not made-up ones.
func TestAccountSettingsAreThePlatforms(t *testing.T) {
	tp := startPlatform(t, Config{Concurrency: 50})
	for _, path := range []string{"/2016-08-19/account-settings/", "/2016-08-19/account-settings"} {
		if resp, body := tp.call("GET", path, nil, nil); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
	lim, use := tp.accountSettings()
	if lim != (AccountLimit{TotalCodeSize: 80530636800, CodeSizeUnzipped: 262144000, CodeSizeZipped: 52428800,
		ConcurrentExecutions: 50, UnreservedConcurrentExecutions: 50}) || use != (AccountUsage{}) {
		t.Fatalf("empty platform: %+v %+v", lim, use)
	}
	tp.create("one", nil)
	tp.create("two", nil)
	layer := tp.publishLayer("l", zipOf(nil, map[string][]byte{"x": []byte("x")}), nil)
	tp.putConcurrency("two", 10)
	lim, use = tp.accountSettings()
	want := 2*int64(len(agentZip)) + layer.Content.CodeSize
	if use.FunctionCount != 2 || use.TotalCodeSize != want || lim.UnreservedConcurrentExecutions != 40 {
		t.Fatalf("two functions (%d bytes each), a layer (%d), 10 reserved: %+v %+v", len(agentZip), layer.Content.CodeSize, lim, use)
	}
	tp.call("DELETE", "/2018-10-31/layers/l/versions/1", nil, nil)
	if _, use = tp.accountSettings(); use.TotalCodeSize != 2*int64(len(agentZip)) {
		t.Fatalf("a deleted layer version no longer counts: %+v", use)
	}
}
