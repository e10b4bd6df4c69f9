package event_test

import (
	"fmt"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

func Example() {
	var s event.Scheduler
	s.At(2*units.Millisecond, func() { fmt.Println(s.Now(), "second") })
	s.At(1*units.Millisecond, func() {
		fmt.Println(s.Now(), "first")
		s.After(1*units.Millisecond, func() { fmt.Println(s.Now(), "third (same time, scheduled later)") })
	})
	s.Run()
	fmt.Println(s.Events(), "events")
	// Output:
	// 1 ms first
	// 2 ms second
	// 2 ms third (same time, scheduled later)
	// 3 events
}
