package workloads

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The raw samples are the requests runRequests timed: a systematic sample by request index
// (every stride-th, at most MaxLatencySamples), only those that succeeded, each value the
// latency the histogram recorded for the same request.
func TestLatencySamplesAreTheTimedRequests(t *testing.T) {
	for _, tc := range []struct {
		count       int64
		parallelism int
		stride      int64
	}{{10, 1, 1}, {1000, 4, 1}, {2500, 8, 3}, {1001, 2, 2}} {
		// request i takes (i % 7 + 1) * 20 µs; every 11th fails
		fn := func(ctx context.Context, i int64) (int64, time.Duration, error) {
			time.Sleep(time.Duration(i%7+1) * 20 * time.Microsecond)
			if i%11 == 5 {
				return 0, 0, errors.New("boom")
			}
			return 1, 0, nil
		}
		st, _ := runRequests(context.Background(), tc.count, tc.parallelism, false, fn)
		s := st.samples.result()
		if s.Method != "systematic" || s.Stride != tc.stride {
			t.Fatalf("count %d: %+v", tc.count, s)
		}
		var want int
		for i := int64(0); i < tc.count; i += tc.stride {
			if i%11 != 5 {
				want++
			}
		}
		if len(s.ValuesS) != want || len(s.ValuesS) > MaxLatencySamples {
			t.Errorf("count %d: %d samples, want %d (≤ %d)", tc.count, len(s.ValuesS), want, MaxLatencySamples)
		}
		// in request-index order: request i slept (i%7+1)*20 µs, so each value is at least that
		k := 0
		for i := int64(0); i < tc.count; i += tc.stride {
			if i%11 == 5 {
				continue
			}
			if floor := float64(i%7+1) * 20e-6; s.ValuesS[k] < floor {
				t.Errorf("count %d: sample %d (request %d) = %g s < its sleep %g s", tc.count, k, i, s.ValuesS[k], floor)
			}
			k++
		}
		// consistent with the histogram of every request: within its exact min and max, and
		// when every request is kept, the same nearest-rank median within the histogram's 1/256
		lat := st.latency.summary()
		v := append([]float64(nil), s.ValuesS...)
		sort.Float64s(v)
		if v[0] < lat.MinS || v[len(v)-1] > lat.MaxS {
			t.Errorf("count %d: samples [%g, %g] outside the histogram's [%g, %g]", tc.count, v[0], v[len(v)-1], lat.MinS, lat.MaxS)
		}
		if tc.stride == 1 {
			if int64(len(v)) != lat.Count {
				t.Errorf("count %d: %d samples, histogram counted %d", tc.count, len(v), lat.Count)
			}
			med := v[int(math.Ceil(0.5*float64(len(v))))-1]
			if math.Abs(med-lat.P50S) > med/256+1e-9 {
				t.Errorf("count %d: sample median %g vs histogram p50 %g", tc.count, med, lat.P50S)
			}
		}
	}
}

// The bound's one source is the response schema's maxItems; the agent's constant equals it.
func TestLatencySamplesBoundIsTheSchemas(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "src", "faascope", "schemas", "agent-response.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs map[string]struct {
			Properties map[string]struct {
				MaxItems *int `json:"maxItems"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Defs["latencySamples"].Properties["values_s"].MaxItems
	if m == nil || *m != MaxLatencySamples {
		t.Fatalf("schema's latencySamples.values_s.maxItems = %v, agent's MaxLatencySamples = %d", m, MaxLatencySamples)
	}
	if sampleStride(MaxLatencySamples) != 1 || sampleStride(MaxLatencySamples+1) != 2 || sampleStride(MaxObjectCount) != MaxObjectCount/MaxLatencySamples {
		t.Error("sampleStride")
	}
	if n := len(newSampler(MaxObjectCount).slots); n != MaxLatencySamples {
		t.Errorf("a million requests keep %d slots", n)
	}
}

// A kv result (Redis) carries the samples of its requests, bounded, and validates against the
// response schema.
func TestKVResultCarriesSamples(t *testing.T) {
	url := startRedis(t)
	put := &KV{Op: "put", Endpoint: url, ItemSize: 100, CountIn: ptr(int64(1500)), ParallelismIn: ptr(4), Index: 3}
	if err := put.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := put.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := out.(KVResult)
	s := r.LatencySamples
	if s == nil || s.Stride != 2 || len(s.ValuesS) != 750 || r.Latency.Count != 1500 {
		t.Fatalf("%+v %+v", s, r.Latency)
	}
	doc, _ := json.Marshal(map[string]any{"ok": true, "cold": false,
		"instance": map[string]any{"id": "x", "started_at": "t", "sandbox": "", "boot_id": "", "cpu_quota": nil,
			"memory_limit_bytes": nil, "hostname": "h", "arch": "amd64", "num_cpu": 1,
			"env": map[string]any{"function_name": nil, "memory_mb": nil, "log_stream": nil}},
		"timings":  map[string]any{"received_ns": 1, "workload_start_ns": 2, "workload_end_ns": 3},
		"workload": r, "error": nil})
	sch, err := jsonschema.NewCompiler().Compile(filepath.Join("..", "..", "src", "faascope", "schemas", "agent-response.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err := sch.Validate(inst); err != nil {
		t.Errorf("kv result with samples: %v", err)
	}
	sort.Float64s(s.ValuesS)
	if s.ValuesS[0] < r.Latency.MinS || s.ValuesS[len(s.ValuesS)-1] > r.Latency.MaxS {
		t.Errorf("samples outside [min, max]: %v", r.Latency)
	}
	b, _ := json.Marshal(r)
	if len(b) > 30_000 {
		t.Errorf("a result of %d bytes", len(b))
	}
}
