package platform

// A function's generation names one configuration of it: an instance runs the generation it was
// started with and retires when the function's generation moves on (invoke.go, current). Lambda
// never hands a deleted function's execution environment to a function created again under the
// same name, so generations come from one counter for the whole platform: a re-created
// function, and the versions it publishes, never carry a generation that an instance of the
// deleted one, still finishing a call, carries too.

// newGeneration hands out the next generation.
func (p *Platform) newGeneration() int {
	return int(p.lastGeneration.Add(1))
}

// lastGeneration is the largest generation the stored functions and their versions carry, where
// the counter goes on from after a restart.
func lastGeneration(functions map[fnKey]*Function) int {
	last := 0
	for _, f := range functions {
		last = max(last, f.Generation)
		for _, v := range f.Versions {
			last = max(last, v.Generation)
		}
	}
	return last
}
