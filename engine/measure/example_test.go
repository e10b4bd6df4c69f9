package measure_test

import (
	"fmt"
	"time"

	"scaleplan/engine/dist"
	"scaleplan/engine/measure"
)

// Two configurations in two rounds after a warm round: the warm
// measurements (ten times slower, as a fresh process's first are) are
// set aside, and each configuration's measurement is over the timed
// steps of its two rounds, whose steps took 1 s and 3 s.
func ExampleRounds() {
	mk := func(step float64) *dist.Measurement {
		return &dist.Measurement{Config: dist.Config{Workers: 1, Batch: 4}, Steps: 1, StepTime: step, SamplesPerSec: 4 / step,
			StepStats: []dist.StepStats{{Time: time.Duration(step * float64(time.Second))}}}
	}
	meas, _, err := measure.Rounds(2, 1, 2, func(r, i int) (*dist.Measurement, error) {
		fmt.Printf("%sconfiguration %d\n", measure.RoundPrefix(r, 2), i)
		if r < 0 {
			return mk(10), nil
		}
		return mk(float64(1 + 2*r)), nil
	}, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, m := range meas {
		fmt.Printf("configuration %d: %.1f s a step over %d steps\n", i, m.StepTime, m.Steps)
	}
	// Output:
	// warm-up: configuration 0
	// warm-up: configuration 1
	// round 1: configuration 0
	// round 1: configuration 1
	// round 2: configuration 0
	// round 2: configuration 1
	// configuration 0: 2.0 s a step over 2 steps
	// configuration 1: 2.0 s a step over 2 steps
}
