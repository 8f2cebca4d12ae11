package lambdaapi

import (
	"encoding/base64"
	"testing"
)

// The client context a function sees is the header's JSON, decoded (the platform's end-to-end
// test, TestInvokeChecksPayloadAndClientContext, sends it through a running function).
func TestDecodeClientContext(t *testing.T) {
	cc := base64.StdEncoding.EncodeToString([]byte(`{"custom":{"k":"v"}}`))
	if got, err := decodeClientContext(cc); err != nil || got != `{"custom":{"k":"v"}}` {
		t.Fatalf("decoded client context: %q %v", got, err)
	}
}
