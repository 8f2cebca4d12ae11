// Package workloads holds what the agent measures: each workload decodes its own parameters,
// validates them, and runs with only its timed region inside elapsed_s.
package workloads

import (
	"context"
	"sort"
)

// Workload is one kind of measured work. Parameters are decoded into the value by the caller
// (strict JSON, so unknown fields are rejected) before Validate fills in defaults.
type Workload interface {
	// Validate checks parameters and applies defaults; it returns *Error of type InvalidRequest.
	Validate() error
	// Run does the work. The result is marshalled as the response's "workload" object.
	Run(ctx context.Context) (any, error)
}

// Common are the result fields every workload reports.
type Common struct {
	Kind string `json:"kind"`
	// ElapsedS is the timed region only, from the monotonic clock.
	ElapsedS float64 `json:"elapsed_s"`
	Bytes    int64   `json:"bytes"`
	Ops      int64   `json:"ops"`
}

var registry = map[string]func() Workload{
	"noop":     func() Workload { return &Noop{} },
	"spin":     func() Workload { return &Spin{} },
	"fileio":   func() Workload { return &FileIO{} },
	"object":   func() Workload { return &Object{} },
	"kv":       func() Workload { return &KV{} },
	"sharedfs": func() Workload { return &SharedFS{} },
	"network":  func() Workload { return &Network{} },
	"transfer": func() Workload { return &Transfer{} },
	"app":      func() Workload { return &App{} },
}

// New returns an empty parameter value for kind, ready to be decoded into.
func New(kind string) (Workload, bool) {
	f, ok := registry[kind]
	if !ok {
		return nil, false
	}
	return f(), true
}

// Kinds lists the known workload kinds, sorted, for error messages.
func Kinds() []string {
	kinds := make([]string, 0, len(registry))
	for k := range registry {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}
