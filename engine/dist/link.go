package dist

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"scaleplan/internal/benchlog"
)

// NewLoopbackRing returns a ring of size ranks in this process connected
// by TCP over 127.0.0.1, the transport of Transport "tcp" without worker
// processes: each rank is to be driven by its own goroutine. The caller
// closes every transport.
func NewLoopbackRing(ctx context.Context, size int, timeout time.Duration) ([]Transport, error) {
	if size < 1 {
		return nil, fmt.Errorf("dist: loopback ring of %d ranks", size)
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tok, err := newToken()
	if err != nil {
		return nil, fmt.Errorf("dist: %w", err)
	}
	lns := make([]*net.TCPListener, size)
	ring := make([]string, size)
	for r := range size {
		ln, err := listenLoopback("ring")
		if err != nil {
			for _, l := range lns[:r] {
				l.Close()
			}
			return nil, err
		}
		lns[r], ring[r] = ln, ln.Addr().String()
	}
	ts := make([]Transport, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t, err := connectRing(ctx, lns[r], ring, r, timeout, tok, nil)
			if err == nil {
				ts[r] = t
			}
			errs[r] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, t := range ts {
			if t != nil {
				t.Close()
			}
		}
		return nil, err
	}
	return ts, nil
}

// Link is the point-to-point cost of a transport in the model
//
//	time(n) = Latency + n / Bandwidth
//
// for one ring step that moves n bytes from every rank to the next and
// combines them there (SendRecv with add), as MeasureLink fits it.
type Link struct {
	Latency   float64 // seconds per message
	Bandwidth float64 // bytes per second
	Small     Probe   // the small message's timing
	Large     Probe   // the large message's timing
	Evict     int     // bytes written before every step (LinkProbe.Evict); 0: the messages were in the cache
}

// Probe is the median time of one ring step at a message size.
type Probe struct {
	Bytes   int     // message size, bytes
	Seconds float64 // median over the repetitions
}

// LinkProbe is what MeasureLink measures.
type LinkProbe struct {
	// Small and Large are the two message sizes, in float32 values,
	// 1 <= Small < Large.
	Small, Large int
	// Reps is the number of timed steps at each size, after one untimed
	// step; at least 1.
	Reps int
	// Evict is the size in bytes of a buffer that is written, a value per
	// cache line, before every step, so that the step finds its messages
	// and its receive buffers out of the cache, as an all-reduce does
	// that runs after a backward pass whose weights, gradients and
	// activations have been through the cache since; 0 leaves them where
	// the last step put them (in the cache, for messages smaller than it).
	// Make it larger than the last-level cache (LastLevelCache) for the
	// buffers to leave it.
	Evict int
}

// MeasureLink times ring steps of SendRecv with add on the ring ts
// (every rank driven by its own goroutine, all ranks at once) for a
// message of p.Small and of p.Large float32 values, p.Reps times each
// after one untimed step, each step after writing p.Evict bytes
// elsewhere, and fits the two medians to Link's model. It reads the clock
// only to time the steps.
func MeasureLink(ts []Transport, p LinkProbe) (Link, error) {
	if len(ts) == 0 || p.Small < 1 || p.Large <= p.Small || p.Reps < 1 || p.Evict < 0 {
		return Link{}, fmt.Errorf("dist: link probe of %d ranks, %d and %d values, %d repetitions, %d bytes evicted", len(ts), p.Small, p.Large, p.Reps, p.Evict)
	}
	evict := make([]float32, p.Evict/4)
	probe := func(n int) (Probe, error) {
		src := make([][]float32, len(ts))
		dst := make([][]float32, len(ts))
		for r := range ts {
			src[r], dst[r] = make([]float32, n), make([]float32, n)
		}
		times := make([]float64, 0, p.Reps)
		for i := range p.Reps + 1 {
			for j := 0; j < len(evict); j += cacheLine / 4 {
				evict[j]++
			}
			errs := make([]error, len(ts))
			var wg sync.WaitGroup
			start := time.Now()
			for r, t := range ts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[r] = t.SendRecv(src[r], dst[r], true)
				}()
			}
			wg.Wait()
			el := time.Since(start).Seconds()
			if err := errors.Join(errs...); err != nil {
				return Probe{}, err
			}
			if i > 0 {
				times = append(times, el)
			}
		}
		return Probe{Bytes: 4 * n, Seconds: median(times)}, nil
	}
	s, err := probe(p.Small)
	if err != nil {
		return Link{}, err
	}
	l, err := probe(p.Large)
	if err != nil {
		return Link{}, err
	}
	k := fitLink(s, l)
	k.Evict = p.Evict
	return k, nil
}

// cacheLine is the bytes of a cache line that MeasureLink's eviction
// writes one value of: 64 on the x86-64 and Arm cores this runs on.
const cacheLine = 64

// LastLevelCache returns the size in bytes of the CPU cache of the highest
// level that Linux reports for CPU 0 (/sys/devices/system/cpu/cpu0/cache),
// or 0 where it reports none.
func LastLevelCache() int {
	return lastLevelCache(os.DirFS("/sys/devices/system/cpu/cpu0/cache"))
}

// lastLevelCache returns the size of the cache of the highest level among
// the index*/ directories of fsys, each with a level and a size file
// ("32768K"), or 0 if none can be read.
func lastLevelCache(fsys fs.FS) int {
	dirs, _ := fs.Glob(fsys, "index*")
	best, bestLevel := 0, 0
	for _, d := range dirs {
		level, err1 := readCacheField(fsys, d+"/level")
		size, err2 := readCacheField(fsys, d+"/size")
		if err1 != nil || err2 != nil || level < bestLevel || size <= 0 {
			continue
		}
		if level > bestLevel || size > best {
			best, bestLevel = size, level
		}
	}
	return best
}

// readCacheField reads a number from a sysfs cache file, with the suffix
// K, M or G for binary kilo-, mega- or gigabytes.
func readCacheField(fsys fs.FS, name string) (int, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	mult := 1
	if s != "" {
		switch s[len(s)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > math.MaxInt/mult {
		return 0, fmt.Errorf("dist: %s: %q is not a cache size", name, b)
	}
	return n * mult, nil
}

// MedianLink combines repeated measurements of one link, such as one
// MeasureLink per round of a longer experiment: the median time of the
// small probes and of the large probes (the mean of the middle two of an
// even count), fitted to Link's model as MeasureLink fits one. A spell of
// load during one measurement then moves the result no more than it moves
// the median. It returns an error if links is empty or the probes'
// sizes differ between the links.
func MedianLink(links []Link) (Link, error) {
	if len(links) == 0 {
		return Link{}, errors.New("dist: median of no link measurements")
	}
	s, l := links[0].Small, links[0].Large
	small, large := make([]float64, len(links)), make([]float64, len(links))
	for i, k := range links {
		if k.Small.Bytes != s.Bytes || k.Large.Bytes != l.Bytes || k.Evict != links[0].Evict {
			return Link{}, fmt.Errorf("dist: median of link probes of %d and %d bytes (%d evicted) with probes of %d and %d bytes (%d evicted)",
				s.Bytes, l.Bytes, links[0].Evict, k.Small.Bytes, k.Large.Bytes, k.Evict)
		}
		small[i], large[i] = k.Small.Seconds, k.Large.Seconds
	}
	s.Seconds, l.Seconds = median(small), median(large)
	k := fitLink(s, l)
	k.Evict = links[0].Evict
	return k, nil
}

// median returns the median of xs (the mean of the middle two of an even
// count), sorting xs in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[n/2]
}

// fitLink returns the line through the two probes, with the latency
// clamped at zero and the bandwidth of the large probe alone when the
// small one took as long or longer.
func fitLink(s, l Probe) Link {
	k := Link{Small: s, Large: l}
	slope := (l.Seconds - s.Seconds) / float64(l.Bytes-s.Bytes)
	if !(slope > 0) {
		k.Bandwidth = float64(l.Bytes) / l.Seconds
		return k
	}
	k.Bandwidth = 1 / slope
	k.Latency = max(0, s.Seconds-float64(s.Bytes)*slope)
	if k.Latency == 0 {
		k.Bandwidth = float64(l.Bytes) / l.Seconds
	}
	return k
}

// Record returns a bench log record of k, a probe of transport that ended
// round (1 for the first; 0 outside rounds), for run.
func (k Link) Record(run, transport string, round int) benchlog.Record {
	return benchlog.Record{Kind: benchlog.KindLink, Run: run, Transport: transport, Link: &benchlog.Link{
		Round: round, SmallBytes: k.Small.Bytes, SmallTime: k.Small.Seconds, LargeBytes: k.Large.Bytes, LargeTime: k.Large.Seconds,
		EvictBytes: k.Evict, Latency: k.Latency, Bandwidth: k.Bandwidth}}
}

// LinkOf returns the link a link record holds, as Link.Record wrote it: the
// two probes and the eviction, and the latency and bandwidth fitted again
// from the probes, which must agree with the record's to a part in 10⁹.
// Anything else is an error.
func LinkOf(r benchlog.Record) (Link, error) {
	if err := r.Validate(); err != nil {
		return Link{}, err
	}
	if r.Kind != benchlog.KindLink {
		return Link{}, fmt.Errorf("dist: a %s record is not a link probe", r.Kind)
	}
	x := r.Link
	k := fitLink(Probe{x.SmallBytes, x.SmallTime}, Probe{x.LargeBytes, x.LargeTime})
	k.Evict = x.EvictBytes
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
	if !near(k.Latency, x.Latency) || !near(k.Bandwidth, x.Bandwidth) {
		return Link{}, fmt.Errorf("dist: link record of %s: latency %g s and bandwidth %g B/s, where its probes give %g s and %g B/s",
			r.Transport, x.Latency, x.Bandwidth, k.Latency, k.Bandwidth)
	}
	return k, nil
}

// GradientLayout returns the number of values of each parameter tensor of
// the network c describes, in the order backward produces their
// gradients (last layer first), which is the order the all-reduce's
// buckets fill in. Their sum is the length of the gradient.
func (c Config) GradientLayout() ([]int, error) {
	c = c.WithDefaults()
	if !slices.Contains(Models, c.Model) {
		return nil, fmt.Errorf("dist: unknown model %q (valid: %v)", c.Model, Models)
	}
	groups := c.build().ParamGroups()
	n := make([]int, len(groups))
	for i, g := range groups {
		n[len(groups)-1-i] = len(g.Params)
	}
	return n, nil
}
