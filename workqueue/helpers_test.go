package workqueue

import "math/rand/v2"

// newRand returns a deterministic generator, so that a failing seed can be replayed.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x5eed))
}
