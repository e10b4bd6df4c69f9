package measure

import (
	"fmt"
	"time"

	"scaleplan/engine/dist"
)

// Guard keeps the measurements of a sweep out of the spells in which
// the first two CPUs do not share a cache. On the 2-core virtual machines
// this project measures on, the host now and then runs the two vCPUs on
// different core complexes for a fraction of a second to half a minute:
// a cache line then takes 6 times as long to cross from one core to the
// other, and a worker that splits its work over both cores slows by up to
// half (its optimizer update by 4 times), while single-threaded workers
// barely notice (docs/validation.md, "Cores apart"). A measurement made
// in such a spell is of another machine.
//
// The guard probes the handoff time (dist.MeasureHandoff) before and after
// each measurement. Before, it waits while the probe is above Factor times
// the lowest seen in the run, for at most Wait; after, it has the
// measurement repeated if the probe is above it, at most Tries times in
// all, and then keeps the last one; once it has given Budget in all to the
// cores — waiting for them, and measurements made again — it waits and
// repeats no more, and a failed probe turns it off. (A run whose best
// probe comes from a spell in which the cores were closer than usual, as
// when the host runs both vCPUs on one physical core, finds the usual
// handoff at Factor times it and every measurement apart: the budget is
// what bounds that run.) What it did
// is counted for the report. The decision rests on the probes alone,
// never on the measurement's result.
//
// A run that starts while the cores are apart takes that spell's handoff
// for its best until the spell ends, and keeps what it measured in the
// spell. So each measurement's probe level (the higher of its probes
// before and after) is kept, and once the rounds are over, those above
// Factor times the run's final best are made again, the most apart first,
// up to a round's worth and while the budget lasts (Rounds,
// revisit).
type Guard struct {
	probe func() (time.Duration, error) // probeHandoff in use; a fake in tests
	sleep func(time.Duration)           // time.Sleep in use
	now   func() time.Time              // time.Now in use
	// Repeated, if not nil, is told of every measurement the guard
	// discards, with the probe that discarded it.
	Repeated func(probe time.Duration)
	// Revisiting, if not nil, is told of every measurement revisit
	// makes again, with the probe level that condemned it.
	Revisiting func(level time.Duration)

	Factor float64       // a probe above Factor × Best means the cores are apart
	Wait   time.Duration // longest wait for the cores before one measurement
	Tries  int           // measurements of one configuration at most
	Budget time.Duration // waiting and measuring again in all, after which the guard only counts

	Best        time.Duration // lowest probe of the run
	Probes      int           // probes made
	Repeats     int           // measurements discarded and made again
	Waited      time.Duration // time spent waiting for the cores
	Redone      time.Duration // time spent on measurements discarded, and on those made again after the rounds
	Kept        int           // measurements kept although the cores were apart after the last try
	Revisit     int           // measurements made again after the rounds, made apart before the run's best
	Unrevisited int           // made apart before the run's best but left as they were: beyond a round's worth, or the budget spent
	Off         error         // why the guard stopped, if a probe failed; nil while it works
}

// NewGuard returns a guard whose probe is the least of five handoff
// measurements of 400 round trips each (tens to hundreds of
// microseconds): a thread descheduled by other load slows one of them, a
// move of the vCPUs apart slows all five. It counts the cores apart at 3
// times the best probe, waits up to 5 s before a measurement and tries
// one at most 3 times, until it has waited and measured again 60 s in
// all: on a machine whose cores stay apart, or are too loaded to answer
// the probe, it then only counts what it sees.
func NewGuard() *Guard {
	return &Guard{
		probe:  probeHandoff,
		sleep:  time.Sleep,
		now:    time.Now,
		Factor: 3, Wait: 5 * time.Second, Tries: 3, Budget: time.Minute,
	}
}

// spent reports whether the guard has used its budget.
func (g *Guard) spent() bool { return g.Waited+g.Redone >= g.Budget }

// probeHandoff is the least of five dist.MeasureHandoff(400).
func probeHandoff() (time.Duration, error) {
	var best time.Duration
	for i := range 5 {
		d, err := dist.MeasureHandoff(400)
		if err != nil {
			return 0, err
		}
		if i == 0 || d < best {
			best = d
		}
	}
	return best, nil
}

// check probes the cores and reports whether they are apart. A probe
// that fails (one CPU so busy with other work that the other side waited
// a second for it) turns the guard off for the rest of the run, with the
// reason kept for the report: the guard decides when to measure, and it
// must not stop a measurement it cannot judge.
func (g *Guard) check() (time.Duration, bool) {
	if g.Off != nil {
		return 0, false
	}
	d, err := g.probe()
	if err != nil {
		g.Off = fmt.Errorf("probing the cores: %w", err)
		return 0, false
	}
	g.Probes++
	if g.Best == 0 || d < g.Best {
		g.Best = d
	}
	return d, g.stale(d)
}

// start takes the run's first measure of the best handoff: the lowest of
// five probes 20 ms apart. A nil guard does nothing.
func (g *Guard) start() {
	if g == nil {
		return
	}
	for i := range 5 {
		if i > 0 {
			g.sleep(20 * time.Millisecond)
		}
		g.check()
	}
}

// settle waits, probing every 100 ms, until the cores are together or
// Wait has passed, and returns the last probe.
func (g *Guard) settle() time.Duration {
	const every = 100 * time.Millisecond
	for waited := time.Duration(0); ; waited += every {
		if d, apart := g.check(); !apart || waited >= g.Wait || g.spent() {
			return d
		}
		g.sleep(every)
		g.Waited += every
	}
}

// measure runs do between the guard's probes, as often as the guard
// decides (see Guard), and returns the measurement it keeps and its
// probe level, the higher of the probes just before and after it (0
// without probes); a nil guard runs do once.
func (g *Guard) measure(do func() (*dist.Measurement, error)) (*dist.Measurement, time.Duration, error) {
	if g == nil {
		m, err := do()
		return m, 0, err
	}
	for try := 1; ; try++ {
		before := g.settle()
		t0 := g.now()
		m, err := do()
		if err != nil {
			return nil, 0, err
		}
		took := g.now().Sub(t0)
		d, apart := g.check()
		level := max(before, d)
		if !apart {
			return m, level, nil
		}
		if try == g.Tries || g.spent() {
			g.Kept++
			return m, level, nil
		}
		g.Repeats++
		g.Redone += took
		if g.Repeated != nil {
			g.Repeated(d)
		}
	}
}

// stale reports whether a measurement of probe level was made with the
// cores apart by the run's best probe so far: false for a nil guard or
// one turned off.
func (g *Guard) stale(level time.Duration) bool {
	return g != nil && g.Off == nil && float64(level) > g.Factor*float64(g.Best)
}

// revisit makes again, through measure, a measurement whose probe level
// old is stale, and reports whether the new one, of probe level level,
// is to replace it: when its level is lower. The one kept is counted in
// Kept if it was made apart.
func (g *Guard) revisit(old time.Duration, do func() (*dist.Measurement, error)) (m *dist.Measurement, level time.Duration, replace bool, err error) {
	g.Revisit++
	if g.Revisiting != nil {
		g.Revisiting(old)
	}
	kept, t0, waited, redone := g.Kept, g.now(), g.Waited, g.Redone
	m, level, err = g.measure(do)
	if err != nil {
		return nil, 0, false, err
	}
	// All of it was measuring again, but the waiting, counted already.
	g.Redone = redone + max(0, g.now().Sub(t0)-(g.Waited-waited))
	if g.Kept == kept && g.stale(min(level, old)) {
		g.Kept++ // the one kept was made apart, and measure did not count it
	}
	return m, level, level < old, nil
}

// String summarizes what the guard did, for a report.
func (g *Guard) String() string {
	s := fmt.Sprintf("handoff between the first two CPUs %s at best (apart above %s): %d measurements repeated, %.1f s of waiting, %d kept apart",
		FormatHandoff(g.Best), FormatHandoff(time.Duration(g.Factor*float64(g.Best))), g.Repeats, g.Waited.Seconds(), g.Kept)
	if g.Redone > 0 {
		s += fmt.Sprintf(", %.1f s measuring again", g.Redone.Seconds())
	}
	if g.Revisit > 0 {
		s += fmt.Sprintf(", %d made again after the rounds (made apart before the run's best probe)", g.Revisit)
	}
	if g.Unrevisited > 0 {
		s += fmt.Sprintf(", %d more made apart before it left as they were", g.Unrevisited)
	}
	if g.spent() {
		s += fmt.Sprintf(" (the %v allowed for waiting and measuring again were spent)", g.Budget)
	}
	if g.Off != nil {
		s += fmt.Sprintf("; off after %d probes: %v", g.Probes, g.Off)
	}
	return s
}

// FormatHandoff formats a handoff time in nanoseconds.
func FormatHandoff(d time.Duration) string { return fmt.Sprintf("%d ns", d.Nanoseconds()) }
