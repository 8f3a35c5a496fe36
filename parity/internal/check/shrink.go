package check

import "fmt"

// Shrink returns a smallest input it can find that still fails, and that input's error.
// If ops itself does not fail (again) it returns ops and nil: a divergence that came
// from scheduling, not from the input, which the caller reports as such.
//
// First it drops runs of operations — halves, then quarters, … then single ones — and
// keeps every drop after which the input still fails (the delta-debugging idea: a long
// input mostly holds operations that do not matter). Then, if simplify is set, it
// replaces single operations by simpler ones. It repeats both until a whole pass
// changes nothing, so every operation left is needed, and none can be simpler.
//
// Why the last error is returned and not the first: the shrunk input may fail in a
// different place than the generated one (an earlier divergence that the long input
// also had). The report must describe the input it prints.
func Shrink[O fmt.Stringer](ops []O, fails func([]O) error, simplify func(O) []O) ([]O, error) {
	last := fails(ops)
	if last == nil {
		return ops, nil
	}
	try := func(candidate []O) bool {
		if err := fails(candidate); err != nil {
			ops, last = candidate, err
			return true
		}
		return false
	}
	for changed := true; changed; {
		changed = false
		for size := len(ops) / 2; size >= 1; size /= 2 {
			for start := 0; start+size <= len(ops); {
				candidate := append(append(make([]O, 0, len(ops)-size), ops[:start]...), ops[start+size:]...)
				if try(candidate) {
					changed = true
					continue // the same start now holds the next run
				}
				start += size
			}
		}
		if simplify == nil {
			continue
		}
		for i := 0; i < len(ops); i++ {
			for _, simpler := range simplify(ops[i]) {
				candidate := append([]O(nil), ops...)
				candidate[i] = simpler
				if try(candidate) {
					changed = true
					break
				}
			}
		}
	}
	return ops, last
}
