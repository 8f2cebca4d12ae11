package platform

import (
	"encoding/base64"
	"os/exec"
	"strings"
	"testing"
)

// awsTutorialRuntime is AWS's tutorial custom runtime (docs.aws.amazon.com/lambda/latest/dg/
// runtimes-walkthrough.html) cut to its shape: #!/bin/sh, set -euo pipefail, curl against the
// Runtime API. It answers with the shell it runs under.
const awsTutorialRuntime = `#!/bin/sh
set -euo pipefail
while true; do
  HEADERS="$(mktemp)"
  curl -sS -LD "$HEADERS" -o /dev/null "http://${AWS_LAMBDA_RUNTIME_API}/2018-06-01/runtime/invocation/next"
  REQUEST_ID=$(grep -Fi Lambda-Runtime-Aws-Request-Id "$HEADERS" | tr -d '[:space:]' | cut -d: -f2)
  RESPONSE="{\"bash\":\"${BASH_VERSION:-none}\"}"
  curl -sS -o /dev/null "http://${AWS_LAMBDA_RUNTIME_API}/2018-06-01/runtime/invocation/$REQUEST_ID/response" -d "$RESPONSE"
done
`

// On Amazon Linux /bin/sh is bash; a bootstrap written for Lambda relies on it.
func TestShellBootstrapRunsUnderBashAsOnAmazonLinux(t *testing.T) {
	needSandboxes(t)
	for _, tool := range []string{"curl", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip("needs " + tool + " in the sandbox's /usr")
		}
	}
	tp := startPlatform(t, Config{})
	req := map[string]any{"FunctionName": "tutorial", "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r", "Handler": "h",
		"Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(zipOf(nil, map[string][]byte{"bootstrap": []byte(awsTutorialRuntime)}))}}
	if resp, body := tp.call("POST", "/2015-03-31/functions", req, nil); resp.StatusCode != 201 {
		t.Fatal(string(body))
	}
	waitReady(t, tp.Platform, "tutorial")
	resp, _, body := tp.invoke("tutorial", `{}`)
	if resp.StatusCode != 200 || resp.Header.Get("X-Amz-Function-Error") != "" || strings.Contains(string(body), `"none"`) {
		t.Fatalf("AWS's tutorial bootstrap: %d %s", resp.StatusCode, body)
	}
}
