package lambdaapi

import (
	"encoding/json"
	"net/http"

	"github.com/faascope/faascope/agent/platform"
)

// Handlers of event source mappings (eventsource.go of the core: there are none here).

func (a *api) createEventSourceMapping(rc *http.ResponseController, r *http.Request) (response, error) {
	var req struct {
		FunctionName      string          `json:"FunctionName"`
		EventSourceArn    string          `json:"EventSourceArn"`
		DestinationConfig json.RawMessage `json:"DestinationConfig"`
	}
	if err := decodeBody(rc, r, &req); err != nil {
		return response{}, err
	}
	return response{}, a.p.CreateEventSourceMapping(platform.RequestRegion(r), platform.EventSourceMappingInput{
		FunctionName: req.FunctionName, EventSourceArn: req.EventSourceArn, DestinationConfig: req.DestinationConfig})
}

func (a *api) eventSourceMapping(_ *http.ResponseController, r *http.Request) (response, error) {
	return response{}, a.p.EventSourceMapping(r.PathValue("uuid"))
}

func (a *api) listEventSourceMappings(_ *http.ResponseController, r *http.Request) (response, error) {
	return jsonResponse(http.StatusOK, map[string]any{"EventSourceMappings": []any{}}), nil
}
