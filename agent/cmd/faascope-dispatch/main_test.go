package main

import (
	"bufio"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// dispatch runs the dispatcher over pipes with “cfg“ and “reqs“ (then go and end) and
// returns its output lines by kind.
type outLines struct {
	ready   map[string]any
	results map[int]result
	unsent  []int
	done    map[string]any
	code    int
}

func dispatch(t *testing.T, cfg config, reqs []request, after func(w io.Writer)) outLines {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	code := make(chan int, 1)
	go func() {
		c := run(inR, outW)
		outW.Close()
		code <- c
	}()
	enc := json.NewEncoder(inW)
	if cfg.Total == 0 {
		cfg.Total = len(reqs)
	}
	go func() {
		enc.Encode(map[string]any{"config": cfg})
		for _, r := range reqs {
			enc.Encode(r)
		}
		enc.Encode(map[string]any{"go": true})
		if after != nil {
			after(inW)
		} else {
			enc.Encode(map[string]any{"end": true})
		}
	}()
	o := outLines{results: map[int]result{}}
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(line, &probe); err != nil {
			t.Fatalf("bad output line %q: %v", line, err)
		}
		switch {
		case probe["ready"] != nil:
			json.Unmarshal(probe["ready"], &o.ready)
		case probe["done"] != nil:
			json.Unmarshal(probe["done"], &o.done)
		case probe["unsent"] != nil:
			json.Unmarshal(probe["unsent"], &o.unsent)
		default:
			var r result
			json.Unmarshal(line, &r)
			o.results[r.K] = r
		}
	}
	inW.Close()
	o.code = <-code
	return o
}

func req(k int, offset time.Duration, base string) request {
	addr := strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://")
	scheme := "http"
	if strings.HasPrefix(base, "https://") {
		scheme = "https"
	}
	return request{K: k, OffsetNs: int64(offset), Scheme: scheme, Addr: addr, Host: addr,
		Method: "POST", Target: "/2015-03-31/functions/f/invocations",
		Headers: [][2]string{{"Content-Type", "application/json"}, {"X-Member", fmt.Sprint(k)}},
		Body:    []byte(fmt.Sprintf(`{"k":%d}`, k))}
}

// arrivalServer answers every request at once and records when (and which member) arrived.
type arrivalServer struct {
	mu       sync.Mutex
	arrivals map[string]int64
	count    map[string]int
}

func newArrivalServer(t *testing.T) (*arrivalServer, string) {
	a := &arrivalServer{arrivals: map[string]int64{}, count: map[string]int{}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().UnixNano()
		io.ReadAll(r.Body)
		a.mu.Lock()
		a.arrivals[r.Header.Get("X-Member")] = now
		a.count[r.Header.Get("X-Member")]++
		a.mu.Unlock()
		w.Header().Set("X-Faascope-Instance-Id", "i-1")
		fmt.Fprintf(w, `{"ok":true,"member":%q}`, r.Header.Get("X-Member"))
	}))
	srv.Start()
	t.Cleanup(srv.Close)
	return a, srv.URL
}

func TestSendsEveryMemberAtItsInstantInOrder(t *testing.T) {
	a, url := newArrivalServer(t)
	var reqs []request
	offsets := []time.Duration{0, 150 * time.Millisecond, 300 * time.Millisecond}
	for k := 0; k < 60; k++ {
		reqs = append(reqs, req(k, offsets[k%3], url))
	}
	o := dispatch(t, config{LeadNs: int64(20 * time.Millisecond)}, reqs, nil)
	if o.code != 0 || len(o.results) != 60 || o.done["sent"].(float64) != 60 {
		t.Fatalf("code %d, %d results, done %v", o.code, len(o.results), o.done)
	}
	if o.ready["connected"].(float64) != 60 {
		t.Fatalf("every member's connection is opened before the start: %v", o.ready)
	}
	start := int64(o.ready["start_ns"].(float64))
	lastOf := map[int]int64{}
	firstOf := map[int]int64{}
	for k, r := range o.results {
		g := k % 3
		if r.Transport != "replied" || r.Status != 200 || r.Connection != "reused" {
			t.Fatalf("member %d: %+v", k, r)
		}
		if !strings.Contains(string(r.Body), fmt.Sprintf(`"member":"%d"`, k)) {
			t.Fatalf("member %d got someone else's reply: %s", k, r.Body)
		}
		if d := r.ScheduledNs - (start + int64(offsets[g])); d > 1000 || d < -1000 { // start_ns read as a float
			t.Fatalf("scheduled %d, want start + offset", r.ScheduledNs)
		}
		// never before its instant; late by far less than the gap between instants
		lag := time.Duration(r.SendNs - r.ScheduledNs)
		if lag < 0 || lag > 100*time.Millisecond {
			t.Fatalf("member %d sent %v after its instant", k, lag)
		}
		if !(r.SendNs <= r.FirstByteNs && r.FirstByteNs <= r.HeadersNs && r.HeadersNs <= r.EndNs) {
			t.Fatalf("timestamps out of order: %+v", r)
		}
		if firstOf[g] == 0 || r.SendNs < firstOf[g] {
			firstOf[g] = r.SendNs
		}
		if r.SendNs > lastOf[g] {
			lastOf[g] = r.SendNs
		}
	}
	for g := 0; g < 2; g++ {
		// each group's sends end before the next group's begin
		if lastOf[g] >= firstOf[g+1] {
			t.Fatalf("group %d's last send is after group %d's first", g, g+1)
		}
		// the groups' spread is small against the 150 ms between them
		if spread := lastOf[g] - firstOf[g]; spread*2 > int64(150*time.Millisecond) {
			t.Fatalf("group %d spread %v", g, time.Duration(spread))
		}
	}
	for k := range o.results {
		if a.count[fmt.Sprint(k)] != 1 {
			t.Fatalf("member %d arrived %d times", k, a.count[fmt.Sprint(k)])
		}
	}
}

func TestRefusedConnectionsAreNeverSent(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close() // nobody listens there now
	reqs := []request{req(0, 0, "http://"+addr), req(1, 0, "http://"+addr)}
	o := dispatch(t, config{LeadNs: int64(10 * time.Millisecond)}, reqs, nil)
	for k := 0; k < 2; k++ {
		r := o.results[k]
		if r.Transport != "never_sent" || r.Error == nil || r.Error.Type != "EndpointConnectionError" || r.SendNs != 0 {
			t.Fatalf("member %d: %+v", k, r)
		}
	}
	// with abort_if_unreachable nothing is attempted at all
	o = dispatch(t, config{LeadNs: int64(10 * time.Millisecond), AbortIfUnreachable: true}, reqs, nil)
	if o.ready["unreachable"] != true || len(o.results) != 0 || len(o.unsent) != 2 || o.done["sent"].(float64) != 0 {
		t.Fatalf("unreachable: %+v", o)
	}
}

func TestAServerThatClosesBeforeReadingMeansNeverSent(t *testing.T) {
	// the server accepts the pre-opened connections and closes them unread, then stops
	// listening: the members find their connections closed, cannot re-connect, and so were
	// never sent
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	url := "http://" + ln.Addr().String()
	got := make(chan int, 10)
	go func() {
		for i := 0; i < 3; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
		ln.Close()
		close(got)
	}()
	reqs := []request{req(0, 0, url), req(1, 0, url), req(2, 0, url)}
	o := dispatch(t, config{LeadNs: int64(200 * time.Millisecond)}, reqs, nil)
	for k := 0; k < 3; k++ {
		r := o.results[k]
		if r.Transport != "never_sent" || r.Error.Type != "EndpointConnectionError" || r.Connection != "redialed" {
			t.Fatalf("member %d: %+v", k, r)
		}
	}
}

func TestAServerThatReadsThenDiesMeansMayHaveRun(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	var read sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			read.Add(1)
			go func(c net.Conn) {
				defer read.Done()
				http.ReadRequest(bufio.NewReader(c)) // the request was read: the function may run
				c.Close()                            // … and the server died before replying
			}(c)
		}
	}()
	url := "http://" + ln.Addr().String()
	o := dispatch(t, config{LeadNs: int64(20 * time.Millisecond)}, []request{req(0, 0, url), req(1, 10*time.Millisecond, url)}, nil)
	for k := 0; k < 2; k++ {
		r := o.results[k]
		if r.Transport != "may_have_run" || r.Error.Type != "MayHaveRun.ConnectionClosedError" || r.SendNs == 0 {
			t.Fatalf("member %d: %+v", k, r)
		}
	}
}

func TestAReplyThatNeverComesIsAReadTimeout(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, c) // reads forever, never answers
		}
	}()
	url := "http://" + ln.Addr().String()
	o := dispatch(t, config{LeadNs: int64(10 * time.Millisecond), ReadTimeoutNs: int64(200 * time.Millisecond)},
		[]request{req(0, 0, url)}, nil)
	if r := o.results[0]; r.Transport != "may_have_run" || r.Error.Type != "MayHaveRun.ReadTimeoutError" {
		t.Fatalf("%+v", r)
	}
}

func TestStopKeepsLaterMembersUnsent(t *testing.T) {
	a, url := newArrivalServer(t)
	reqs := []request{req(0, 0, url), req(1, 0, url), req(2, 2*time.Second, url), req(3, 3*time.Second, url)}
	o := dispatch(t, config{LeadNs: int64(10 * time.Millisecond)}, reqs, func(w io.Writer) {
		time.Sleep(300 * time.Millisecond)
		json.NewEncoder(w).Encode(map[string]any{"stop": "error_budget"})
	})
	sort.Ints(o.unsent)
	if len(o.results) != 2 || fmt.Sprint(o.unsent) != "[2 3]" || o.done["stopped"] != "error_budget" {
		t.Fatalf("%+v", o)
	}
	if a.count["2"] != 0 || a.count["3"] != 0 {
		t.Fatal("a stopped member was sent")
	}
}

func TestMembersHandedOverLaterAreSentOnTheirSchedule(t *testing.T) {
	_, url := newArrivalServer(t)
	o := dispatch(t, config{Total: 2, LeadNs: int64(10 * time.Millisecond)}, []request{req(0, 0, url)}, func(w io.Writer) {
		enc := json.NewEncoder(w)
		enc.Encode(req(1, 300*time.Millisecond, url))
		enc.Encode(map[string]any{"end": true})
	})
	r := o.results[1]
	if len(o.results) != 2 || r.Transport != "replied" || time.Duration(r.SendNs-r.ScheduledNs) > 100*time.Millisecond || r.SendNs < r.ScheduledNs {
		t.Fatalf("%+v", o)
	}
}

func TestTheDriverGoneStopsSending(t *testing.T) {
	a, url := newArrivalServer(t)
	reqs := []request{req(0, 0, url), req(1, time.Second, url)}
	o := dispatch(t, config{LeadNs: int64(10 * time.Millisecond)}, reqs, func(w io.Writer) {
		time.Sleep(200 * time.Millisecond)
		w.(io.Closer).Close() // EOF before {"end"}: the driver was killed
	})
	if o.code != 3 {
		t.Fatalf("exit %d", o.code)
	}
	time.Sleep(1200 * time.Millisecond)
	if a.count["1"] != 0 {
		t.Fatal("a member was sent after the driver was gone")
	}
}

func TestTLSConnectionsAreOpenedAhead(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		fmt.Fprint(w, `{"ok":true}`)
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600)
	reqs := []request{req(0, 0, srv.URL), req(1, 0, srv.URL)}
	o := dispatch(t, config{LeadNs: int64(10 * time.Millisecond), CAFile: ca}, reqs, nil)
	for k := 0; k < 2; k++ {
		if r := o.results[k]; r.Transport != "replied" || r.Status != 200 || r.Connection != "reused" {
			t.Fatalf("member %d: %+v", k, r)
		}
	}
}

func TestWireIsOneRequestWithHostAndLength(t *testing.T) {
	r := req(7, 0, "http://127.0.0.1:9")
	w := string(wire(&r))
	if !strings.HasPrefix(w, "POST /2015-03-31/functions/f/invocations HTTP/1.1\r\nHost: 127.0.0.1:9\r\n") ||
		!strings.HasSuffix(w, "Content-Length: 7\r\n\r\n{\"k\":7}") {
		t.Fatalf("%q", w)
	}
	parsed, err := http.ReadRequest(bufio.NewReader(strings.NewReader(w)))
	if err != nil || parsed.ContentLength != int64(len(r.Body)) || parsed.Host != "127.0.0.1:9" {
		t.Fatalf("%v %+v", err, parsed)
	}
}

// With h2c, http members go as streams of ceil(members/h2c_streams) HTTP/2 connections opened
// ahead (one warm-up each), every member replied with its own body, and the server sees HTTP/2.
func TestH2CMultiplexesMembersOverFewConnections(t *testing.T) {
	var mu sync.Mutex
	conns := map[string]bool{}
	protos := map[int]int{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = true
		protos[r.ProtoMajor]++
		mu.Unlock()
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Echo-Target", r.URL.Path)
		w.Write(b)
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	const n = 50
	var reqs []request
	for k := 0; k < n; k++ {
		reqs = append(reqs, request{K: k, Scheme: "http", Addr: addr, Host: addr, Method: "POST",
			Target: fmt.Sprintf("/m/%d", k), Headers: [][2]string{{"Content-Type", "application/json"}},
			Body: []byte(fmt.Sprintf(`{"k":%d}`, k)),
			Warm: &request{Method: "GET", Target: "/warm"}})
	}
	o := dispatch(t, config{LeadNs: int64(50 * time.Millisecond), H2C: true, H2CStreams: 20}, reqs, nil)
	if got := o.ready["connected"]; got != float64(3) {
		t.Fatalf("connections opened ahead: %v, want ceil(50/20) = 3 (ready %v)", got, o.ready)
	}
	for k := 0; k < n; k++ {
		r := o.results[k]
		if r.Transport != "replied" || r.Status != 200 || string(r.Body) != fmt.Sprintf(`{"k":%d}`, k) || r.SendNs == 0 {
			t.Fatalf("member %d: %+v", k, r)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if protos[1] != 0 || protos[2] != n+3 {
		t.Fatalf("requests by HTTP major version: %v, want all %d on HTTP/2", protos, n+3)
	}
	if len(conns) != 3 {
		t.Fatalf("the server saw %d connections, want 3", len(conns))
	}
}
