package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

const runtimeAPIVersion = "2018-06-01"

// RunLambda is the custom-runtime loop of a Lambda `bootstrap`: fetch the next invocation, answer
// it, repeat. Workload failures are normal responses (ok=false) so that callers always get the
// agent's JSON; the /error endpoint is only for failures of the runtime itself.
func RunLambda(ctx context.Context, api string, newHandler func() (*Handler, error), log io.Writer) error {
	base := "http://" + api + "/" + runtimeAPIVersion + "/runtime"
	client := &http.Client{} // no timeout: /next blocks until an invocation arrives
	h, err := newHandler()
	if err != nil {
		if perr := postError(ctx, client, base+"/init/error", "Runtime.InitError", err); perr != nil {
			return errors.Join(err, perr)
		}
		return err
	}
	for {
		id, deadline, payload, received, err := nextInvocation(ctx, client, base)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		ictx, cancel := ctx, context.CancelFunc(func() {})
		if !deadline.IsZero() {
			ictx, cancel = context.WithDeadline(ctx, deadline)
		}
		_, resp := h.Invoke(ictx, received, payload)
		cancel()
		body, err := json.Marshal(resp)
		if err != nil {
			if perr := postError(ctx, client, base+"/invocation/"+id+"/error", "Runtime.MarshalError", err); perr != nil {
				return perr
			}
			continue
		}
		if err := post(ctx, client, base+"/invocation/"+id+"/response", body, nil); err != nil {
			// Lambda rejects some responses (e.g. too large) but stays up; anything else means
			// the Runtime API is gone and the sandbox is being torn down.
			var status statusError
			if errors.As(err, &status) {
				fmt.Fprintf(log, "faascope-agent: response for %s rejected: %v\n", id, err)
				continue
			}
			return err
		}
	}
}

func nextInvocation(ctx context.Context, client *http.Client, base string) (id string, deadline time.Time, payload []byte, received time.Time, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/invocation/next", nil)
	if err != nil {
		return "", time.Time{}, nil, time.Time{}, err
	}
	res, err := client.Do(req)
	if err != nil {
		return "", time.Time{}, nil, time.Time{}, fmt.Errorf("runtime API next: %w", err)
	}
	defer res.Body.Close()
	payload, err = io.ReadAll(res.Body)
	received = time.Now()
	if err != nil {
		return "", time.Time{}, nil, time.Time{}, fmt.Errorf("runtime API next: reading payload: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return "", time.Time{}, nil, time.Time{}, fmt.Errorf("runtime API next: status %s", res.Status)
	}
	id = res.Header.Get("Lambda-Runtime-Aws-Request-Id")
	if id == "" {
		return "", time.Time{}, nil, time.Time{}, errors.New("runtime API next: no Lambda-Runtime-Aws-Request-Id")
	}
	if ms, perr := strconv.ParseInt(res.Header.Get("Lambda-Runtime-Deadline-Ms"), 10, 64); perr == nil {
		deadline = time.UnixMilli(ms)
	}
	return id, deadline, payload, received, nil
}

type statusError struct {
	url    string
	status string
}

func (e statusError) Error() string { return e.url + ": " + e.status }

func post(ctx context.Context, client *http.Client, url string, body []byte, header http.Header) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode/100 != 2 {
		return statusError{url: url, status: res.Status}
	}
	return nil
}

func postError(ctx context.Context, client *http.Client, url, typ string, cause error) error {
	body, _ := json.Marshal(map[string]string{"errorMessage": cause.Error(), "errorType": typ})
	return post(ctx, client, url, body, http.Header{"Lambda-Runtime-Function-Error-Type": {typ}})
}
