package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The test binary doubles as the agent when this variable is set, so the real main (flags,
// exit codes, stdout) is what gets tested.
func TestMain(m *testing.M) {
	if os.Getenv("FAASCOPE_AGENT_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestOnce(t *testing.T) {
	tmp := t.TempDir()
	cases := []struct {
		payload, stdin string
		exit           int
		errType        string
	}{
		{`{"workload": {"kind": "noop"}}`, "", 0, ""},
		{"-", `{"workload": {"kind": "spin", "iterations": 10}}`, 0, ""},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "direct": true}}`, "", 0, ""},
		{`{"workload": {"kind": "spin"}}`, "", 2, "InvalidRequest"},
		{`{"workload": {"kind": "fileio", "op": "read", "file_size": 4096, "io_size": 512, "prepare": false, "path": "nope"}}`, "", 1, "IOError"},
	}
	for _, c := range cases {
		cmd := exec.Command(os.Args[0], "--once", c.payload)
		cmd.Env = append(os.Environ(), "FAASCOPE_AGENT_TEST_MAIN=1", "TMPDIR="+tmp)
		cmd.Stdin = strings.NewReader(c.stdin)
		out, err := cmd.Output()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var resp struct {
			OK    bool `json:"ok"`
			Cold  bool `json:"cold"`
			Error *struct {
				Type string `json:"type"`
			} `json:"error"`
		}
		if jerr := json.Unmarshal(out, &resp); jerr != nil {
			t.Fatalf("%s: stdout is not the response: %v\n%s", c.payload, jerr, out)
		}
		if code != c.exit || resp.OK != (c.exit == 0) || !resp.Cold || (resp.Error != nil && resp.Error.Type != c.errType) {
			t.Errorf("%s: exit %d, response %s", c.payload, code, out)
		}
	}
}
