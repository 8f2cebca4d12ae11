package main

// The JSON lines of the protocol (see main.go): the config, the requests the driver hands over,
// the messages it sends, and the record reported for each member.

import (
	"errors"
	"net"
)

type config struct {
	// members in all (the driver may stream later ones after "go")
	Total int `json:"total"`
	// from "ready" to the schedule's start (offset 0)
	LeadNs int64 `json:"lead_ns"`
	// a connection is opened this long before its member's instant (members due later than
	// this after the start are connected during the burst, not before it)
	ConnectAheadNs   int64 `json:"connect_ahead_ns"`
	ConnectTimeoutNs int64 `json:"connect_timeout_ns"`
	ReadTimeoutNs    int64 `json:"read_timeout_ns"`
	// how many members (the first, in the order they were given) get a connection opened ahead;
	// the others connect at their instant; -1 or absent: all
	Preconnect *int `json:"preconnect"`
	// connections opened at once while pre-connecting
	DialParallel int `json:"dial_parallel"`
	// PEM file of extra trusted CAs (tests); the system's roots otherwise
	CAFile string `json:"ca_file"`
	// when not one pre-opened connection succeeded and every failure was a refusal or a timeout,
	// send nothing (the driver reports the endpoint unreachable)
	AbortIfUnreachable bool `json:"abort_if_unreachable"`
	// send the http (not https) members as streams of a few HTTP/2 connections without TLS (h2c,
	// prior knowledge), H2CStreams members per connection (default 1000), instead of one
	// HTTP/1.1 connection each: a burst of thousands then costs the server a few descriptors,
	// not one per member (the local platform serves h2c). The send is then the request's
	// hand-over to Go's HTTP/2 transport, which writes its frames under the connection's lock.
	H2C        bool `json:"h2c"`
	H2CStreams int  `json:"h2c_streams"`
}

type request struct {
	K        int         `json:"k"`
	OffsetNs int64       `json:"offset_ns"`
	Scheme   string      `json:"scheme"`
	Addr     string      `json:"addr"`
	Host     string      `json:"host"`
	Method   string      `json:"method"`
	Target   string      `json:"target"`
	Headers  [][2]string `json:"headers"`
	Body     []byte      `json:"body"`
	// a request that runs nothing (a Lambda DryRun invoke, an agent's health check), sent on the
	// connection when it is opened ahead, so that the server's own per-connection set-up (its
	// first request on a connection) is done before the burst, as a pooled client's would be
	Warm *request `json:"warm,omitempty"`
}

type message struct {
	Config *config `json:"config"`
	request
	Go   bool   `json:"go"`
	Stop string `json:"stop"`
	End  bool   `json:"end"`
}

type errInfo struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Stage   string `json:"stage"` // connect, write, read
}

type result struct {
	K           int         `json:"k"`
	Transport   string      `json:"transport"`
	ScheduledNs int64       `json:"scheduled_ns"`
	SendNs      int64       `json:"send_ns,omitempty"`
	FirstByteNs int64       `json:"first_byte_ns,omitempty"`
	HeadersNs   int64       `json:"headers_ns,omitempty"`
	EndNs       int64       `json:"end_ns,omitempty"`
	Status      int         `json:"status,omitempty"`
	Headers     [][2]string `json:"headers,omitempty"`
	Body        []byte      `json:"body,omitempty"`
	Error       *errInfo    `json:"error,omitempty"`
	Connection  string      `json:"connection"` // reused (opened before the instant), new, redialed
}

// connectError names a failure to connect as botocore names it (the driver's NEVER_SENT).
func connectError(err error) *errInfo {
	t := "EndpointConnectionError"
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t = "ConnectTimeoutError"
	}
	return &errInfo{Type: t, Message: err.Error(), Stage: "connect"}
}
