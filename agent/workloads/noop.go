package workloads

import (
	"context"
	"time"
)

// Noop does nothing, so its response isolates the platform's and the agent's own overhead.
type Noop struct {
	Kind string `json:"kind"`
}

func (n *Noop) Validate() error { return nil }

func (n *Noop) Run(context.Context) (any, error) {
	start := time.Now()
	return Common{Kind: "noop", ElapsedS: time.Since(start).Seconds()}, nil
}
