package measure

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"scaleplan/engine/dist"
)

// Rounds makes its warm rounds first, as measure(-1, i), and sets
// them aside: they are in neither result, and afterRound runs only after
// the rounds proper.
func TestMeasureRoundsWarm(t *testing.T) {
	var calls, after []string
	measure := func(r, i int) (*dist.Measurement, error) {
		calls = append(calls, fmt.Sprintf("%d/%d", r, i))
		step := 1.0 // warm measurements ten times slower than the rest
		if r < 0 {
			step = 10
		}
		return &dist.Measurement{Config: dist.Config{Workers: 1, Batch: 4}, Steps: 1, StepTime: step, SamplesPerSec: 4 / step,
			StepStats: []dist.StepStats{{Time: time.Duration(step * float64(time.Second))}}}, nil
	}
	afterRound := func(r int) error {
		after = append(after, fmt.Sprint(r))
		return nil
	}
	meas, kept, err := Rounds(2, 1, 2, measure, afterRound, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"-1/0", "-1/1", "0/0", "0/1", "1/0", "1/1"}; !slices.Equal(calls, want) {
		t.Errorf("measured %v, want %v", calls, want)
	}
	if want := []string{"0", "1"}; !slices.Equal(after, want) {
		t.Errorf("afterRound after %v, want %v", after, want)
	}
	for i := range 2 {
		if len(kept[i]) != 2 || meas[i].StepTime != 1 {
			t.Errorf("configuration %d: %d kept, combined step %g s; want 2 and 1 s", i, len(kept[i]), meas[i].StepTime)
		}
	}
	// An error of a warm measurement is returned as it is.
	boom := errors.New("boom")
	if _, _, err := Rounds(1, 1, 1, func(r, i int) (*dist.Measurement, error) { return nil, boom }, nil, nil); !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
}

// RoundsTo tells kept of every measurement of a round as it is
// made and, without a guard, final of each configuration right after its
// last round; after an error it returns what it kept so far.
func TestMeasureRoundsHooks(t *testing.T) {
	boom := errors.New("boom")
	var events []string
	measure := func(r, i int) (*dist.Measurement, error) {
		if r == 1 && i == 1 {
			return nil, boom
		}
		step := float64(1 + r) // round r's step takes 1 + r seconds
		return &dist.Measurement{Config: dist.Config{Workers: 1, Batch: 4}, Steps: 1, StepTime: step, SamplesPerSec: 4 / step,
			StepStats: []dist.StepStats{{Time: time.Duration(step * float64(time.Second))}}}, nil
	}
	hooks := Hooks{
		Kept: func(r, i int, m *dist.Measurement) error {
			events = append(events, fmt.Sprintf("kept %d/%d %gs", r, i, m.StepTime))
			return nil
		},
		Final: func(i int, m *dist.Measurement) error {
			events = append(events, fmt.Sprintf("final %d %gs over %d", i, m.StepTime, m.Steps))
			return nil
		},
	}
	_, all, err := RoundsTo(2, 1, 2, measure, nil, nil, hooks)
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
	// Configuration 0's rounds took 1 s and 2 s: 1.5 s over 2 steps.
	want := []string{"kept 0/0 1s", "kept 0/1 1s", "kept 1/0 2s", "final 0 1.5s over 2"}
	if !slices.Equal(events, want) {
		t.Errorf("hooks saw %q, want %q", events, want)
	}
	if len(all) != 2 || len(all[0]) != 2 || len(all[1]) != 1 {
		t.Errorf("kept %d rounds of configuration 0 and %d of 1, want 2 and 1", len(all[0]), len(all[1]))
	}
}
