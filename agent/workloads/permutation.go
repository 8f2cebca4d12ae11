package workloads

import "math/bits"

// permutation visits every block of a file exactly once in a seeded pseudo-random order, like
// fio's default random map, without storing the order: a 4-round Feistel network over the
// smallest even-bit power of two ≥ n, with cycle-walking back into [0, n). Memory stays O(1)
// for 64 GiB / 512 B = 2^27 operations.
type permutation struct {
	n    uint64
	half uint
	mask uint64
	keys [4]uint64
}

func newPermutation(n uint64, seed int64) permutation {
	b := uint(bits.Len64(n - 1))
	if b < 2 {
		b = 2
	}
	b += b & 1
	p := permutation{n: n, half: b / 2, mask: (1 << (b / 2)) - 1}
	s := uint64(seed)
	for i := range p.keys {
		s += 0x9e3779b97f4a7c15
		p.keys[i] = mix64(s)
	}
	return p
}

func (p *permutation) at(i uint64) uint64 {
	x := i
	for {
		x = p.encrypt(x)
		if x < p.n {
			return x
		}
	}
}

func (p *permutation) encrypt(x uint64) uint64 {
	l, r := x>>p.half, x&p.mask
	for _, k := range p.keys {
		l, r = r, l^(mix64(r^k)&p.mask)
	}
	return l<<p.half | r
}

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
