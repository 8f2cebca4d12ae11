package lambdaapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/faascope/faascope/agent/platform"
)

// FuzzLambdaAPI throws arbitrary bodies, names and tags at the control API: every answer must be
// a success or an AWS-shaped error (X-Amzn-ErrorType and a JSON message), never a panic or a 500.
func FuzzLambdaAPI(f *testing.F) {
	f.Add("fn", `{"FunctionName":"fn","Runtime":"provided.al2023","Role":"arn:aws:iam::000000000000:role/r","Handler":"h","Code":{"ZipFile":"UEsFBgAAAAAAAAAAAAAAAAAAAAAAAA=="}}`, "PUT")
	f.Add("../x", `{"MemorySize":-1}`, "PUT")
	f.Add("fn", `{"Tags":{"faascope:expose":"9001"},"FunctionName":"a"}`, "POST")
	f.Add("fn", `{"EphemeralStorage":{"Size":1e99}}`, "PUT")
	f.Add("fn", `[]`, "DELETE")
	dir := f.TempDir()
	p, err := platform.New(platform.Config{DataDir: dir, DefaultProfile: platform.ProfileLambda, Isolation: "none"})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(p.Close)
	h := Handler(p)
	f.Fuzz(func(t *testing.T, name, body, method string) {
		if name == "" {
			name = "x"
		}
		name = url.PathEscape(name)
		paths := []string{"/2015-03-31/functions", "/2015-03-31/functions/" + name,
			"/2015-03-31/functions/" + name + "/configuration", "/2015-03-31/functions/" + name + "/code"}
		for _, path := range paths {
			for _, m := range []string{method, "POST", "PUT"} {
				if m != "GET" && m != "POST" && m != "PUT" && m != "DELETE" {
					continue
				}
				req := httptest.NewRequest(m, path, bytes.NewBufferString(body))
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code >= 500 {
					t.Fatalf("%s %s %q: status %d %s", m, path, body, rec.Code, rec.Body)
				}
				if rec.Code >= 400 {
					var e map[string]any
					if rec.Header().Get("X-Amzn-ErrorType") == "" || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e["message"] == "" {
						t.Fatalf("%s %s %q: error without AWS shape: %d %s", m, path, body, rec.Code, rec.Body)
					}
				}
			}
		}
		// Whatever got created is cleaned up, so the function table stays small.
		req := httptest.NewRequest(http.MethodDelete, "/2015-03-31/functions/"+name, nil)
		h.ServeHTTP(httptest.NewRecorder(), req)
	})
}
