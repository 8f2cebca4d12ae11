package workloads

import "testing"

func TestPermutationVisitsEveryBlockOnce(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 4, 5, 17, 1000, 4096, 65537} {
		p := newPermutation(n, 42)
		seen := make([]bool, n)
		inOrder := true
		for i := uint64(0); i < n; i++ {
			x := p.at(i)
			if x >= n || seen[x] {
				t.Fatalf("n=%d: index %d -> %d (repeat or out of range)", n, i, x)
			}
			seen[x] = true
			inOrder = inOrder && x == i
		}
		if n >= 17 && inOrder {
			t.Errorf("n=%d: permutation is the identity", n)
		}
	}
}

func TestPermutationDependsOnSeed(t *testing.T) {
	a, b := newPermutation(1000, 1), newPermutation(1000, 2)
	same := 0
	for i := uint64(0); i < 1000; i++ {
		if a.at(i) == b.at(i) {
			same++
		}
	}
	if same > 50 {
		t.Errorf("%d of 1000 positions equal across seeds", same)
	}
}
