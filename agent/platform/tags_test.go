package platform

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func tagsPath(arn string) string { return "/2017-03-31/tags/" + url.PathEscape(arn) }

func (tp *testPlatform) listTags(arn string) map[string]string {
	tp.t.Helper()
	resp, body := tp.call("GET", tagsPath(arn), nil, nil)
	if resp.StatusCode != 200 {
		tp.t.Fatalf("ListTags %s: %d %s", arn, resp.StatusCode, body)
	}
	var out struct{ Tags map[string]string }
	json.Unmarshal(body, &out)
	return out.Tags
}

func wantAPIError(t *testing.T, what string, resp *http.Response, body []byte, status int, code, msg string) {
	t.Helper()
	if resp.StatusCode != status || resp.Header.Get("X-Amzn-ErrorType") != code || !strings.Contains(string(body), msg) {
		t.Errorf("%s: want %d %s %q, got %d %s %s", what, status, code, msg, resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), body)
	}
}

func TestTagsAPI(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("tagged", map[string]any{"Tags": map[string]string{"team": "io"}})
	arn := key("tagged").arn()
	if got := tp.listTags(arn); len(got) != 1 || got["team"] != "io" {
		t.Fatalf("tags from create: %v", got)
	}
	resp, body := tp.call("POST", tagsPath(arn), map[string]any{"Tags": map[string]string{"stage": "dev", "team": "storage"}}, nil)
	if resp.StatusCode != 204 {
		t.Fatalf("TagResource: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("DELETE", tagsPath(arn)+"?tagKeys=stage&tagKeys=absent", nil, nil)
	if resp.StatusCode != 204 {
		t.Fatalf("UntagResource: %d %s", resp.StatusCode, body)
	}
	// The ARN as boto3 sends it (colons escaped) and as curl might (not escaped) name the same.
	resp, body = tp.call("GET", "/2017-03-31/tags/"+arn, nil, nil)
	if resp.StatusCode != 200 || string(body) != `{"Tags":{"team":"storage"}}`+"\n" {
		t.Fatalf("ListTags after tag and untag: %d %s", resp.StatusCode, body)
	}
	if fn, _ := tp.GetFunction(ref("tagged")); fn.Tags["team"] != "storage" || len(fn.Tags) != 1 {
		t.Fatalf("GetFunction's tags: %v", fn.Tags)
	}

	resp, body = tp.call("GET", tagsPath(key("nope").arn()), nil, nil)
	wantAPIError(t, "unknown function", resp, body, 404, "ResourceNotFoundException", "Function not found: "+key("nope").arn())
	resp, body = tp.call("POST", tagsPath(key("nope").arn()), map[string]any{"Tags": map[string]string{"a": "b"}}, nil)
	wantAPIError(t, "tag unknown function", resp, body, 404, "ResourceNotFoundException", "Function not found")
	resp, body = tp.call("GET", tagsPath("tagged"), nil, nil)
	wantAPIError(t, "a name, not an ARN", resp, body, 400, "ValidationException", "failed to satisfy constraint")
	resp, body = tp.call("GET", tagsPath(arn+":$LATEST"), nil, nil)
	wantAPIError(t, "qualified ARN", resp, body, 400, "InvalidParameterValueException", "Tags on function aliases and versions are not supported")

	many := map[string]string{}
	for i := 0; i < 50; i++ {
		many[fmt.Sprint("k", i)] = "v"
	}
	resp, body = tp.call("POST", tagsPath(arn), map[string]any{"Tags": many}, nil) // 50 + "team"
	wantAPIError(t, "51 tags", resp, body, 400, "InvalidParameterValueException", "Number of tags exceeds resource tag limit.")
	resp, body = tp.call("POST", tagsPath(arn), map[string]any{"Tags": map[string]string{"aws:x": "y"}}, nil)
	wantAPIError(t, "aws: prefix", resp, body, 400, "InvalidParameterValueException", "aws:")
	resp, body = tp.call("POST", tagsPath(arn), map[string]any{"Tags": map[string]string{"k": strings.Repeat("v", 257)}}, nil)
	wantAPIError(t, "long value", resp, body, 400, "InvalidParameterValueException", "256")
	resp, body = tp.call("POST", tagsPath(arn), map[string]any{"Tags": map[string]string{TagProfile: "azure"}}, nil)
	wantAPIError(t, "bad faascope:profile", resp, body, 400, "InvalidParameterValueException", TagProfile)
	req := map[string]any{"FunctionName": "toomany", "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r", "Handler": "h",
		"Code": map[string]string{"ZipFile": "UEsFBgAAAAAAAAAAAAAAAAAAAAAAAA=="}, "Tags": map[string]string{"k": "v", "aws:k": "v"}}
	resp, body = tp.call("POST", "/2015-03-31/functions", req, nil)
	wantAPIError(t, "create with an aws: tag", resp, body, 400, "InvalidParameterValueException", "aws:")
	if got := tp.listTags(arn); len(got) != 1 {
		t.Fatalf("refused changes must change nothing: %v", got)
	}
}

// Tagging a faascope:* tag steers the platform as setting it at create does; other tags leave
// warm instances be.
func TestTaggingPlatformTagsChangesBehaviour(t *testing.T) {
	tp := startPlatform(t, Config{KeepAlive: time.Hour})
	tp.create("steer", nil)
	arn := key("steer").arn()
	noop := `{"workload":{"kind":"noop"}}`
	tp.invoke("steer", noop)
	if resp, body := tp.call("POST", tagsPath(arn), map[string]any{"Tags": map[string]string{"owner": "me"}}, nil); resp.StatusCode != 204 {
		t.Fatalf("tag: %d %s", resp.StatusCode, body)
	}
	if _, r, _ := tp.invoke("steer", noop); r.Cold {
		t.Fatal("an ordinary tag must not retire the warm instance")
	}
	if resp, body := tp.call("POST", tagsPath(arn), map[string]any{"Tags": map[string]string{TagKeepAlive: "0.2"}}, nil); resp.StatusCode != 204 {
		t.Fatalf("tag keep-alive: %d %s", resp.StatusCode, body)
	}
	if _, r, _ := tp.invoke("steer", noop); !r.Cold {
		t.Fatal("a faascope:* tag changes how instances run: the next invocation starts a new one")
	}
	time.Sleep(600 * time.Millisecond)
	if _, r, _ := tp.invoke("steer", noop); !r.Cold {
		t.Fatal("the tagged 0.2 s keep-alive should have evicted the instance")
	}
	if resp, body := tp.call("DELETE", tagsPath(arn)+"?tagKeys="+url.QueryEscape(TagKeepAlive), nil, nil); resp.StatusCode != 204 {
		t.Fatalf("untag: %d %s", resp.StatusCode, body)
	}
	tp.invoke("steer", noop)
	time.Sleep(600 * time.Millisecond)
	if _, r, _ := tp.invoke("steer", noop); r.Cold {
		t.Fatal("without the tag the platform's one-hour keep-alive applies again")
	}
}
