package platform

import (
	"net/http"
	"strings"
	"testing"
)

// Event source mappings (eventsource.go): there are no event sources here, so none exists; the
// answers and their order are AWS's recorded ones (test_event_source_mapping_exceptions).
func TestEventSourceMappingsAnswerAsAWSWithoutSources(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("fn", nil)
	const uuid = "/2015-03-31/event-source-mappings/4c915a50-2751-4d24-aed1-1e5041ce1adf"
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		resp, body := tp.call(m, uuid, map[string]any{"Enabled": false}, nil)
		wantAPIError(t, m+" of an unknown UUID", resp, body, http.StatusNotFound, "ResourceNotFoundException", "The resource you requested does not exist.")
	}
	resp, body := tp.call("GET", "/2015-03-31/event-source-mappings/?FunctionName=doesnotexist", nil, nil)
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"EventSourceMappings":[]}` {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}
	const queue = "arn:aws:sqs:us-east-1:111111111111:somequeue"
	for _, c := range []struct {
		what string
		req  map[string]any
		msg  string
	}{
		{"no source", map[string]any{"FunctionName": "doesnotexist"}, "Unrecognized event source."},
		{"a destination for SQS, before the function", map[string]any{"FunctionName": "doesnotexist", "EventSourceArn": queue,
			"DestinationConfig": map[string]any{"OnSuccess": map[string]any{"Destination": queue}}},
			"Unsupported DestinationConfig parameter for given event source mapping type."},
		{"a missing function", map[string]any{"FunctionName": "doesnotexist", "EventSourceArn": queue}, "Function does not exist"},
		{"a source that cannot be reached", map[string]any{"FunctionName": "fn", "EventSourceArn": queue}, "cannot be reached"},
	} {
		resp, body := tp.call("POST", "/2015-03-31/event-source-mappings/", c.req, nil)
		wantAPIError(t, c.what, resp, body, http.StatusBadRequest, "InvalidParameterValueException", c.msg)
	}
}
