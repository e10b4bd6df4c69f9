package dist

import (
	"bytes"
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"scaleplan/internal/benchlog"
)

func TestGradientLayout(t *testing.T) {
	for _, tc := range []struct {
		model string
		total int // parameters, counted by hand from the layer shapes
		last  []int
	}{
		// 784·1024+1024 + 1024·1024+1024 + 1024·10+10
		{"mlp", 1_863_690, []int{10, 10240}},
		// conv 3·3·1·32+32, conv 3·3·32·64+64, dense 9216·128+128, dense 128·10+10
		{"cnn", 1_199_882, []int{10, 1280}},
	} {
		n, err := Config{Model: tc.model}.GradientLayout()
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for _, v := range n {
			sum += v
		}
		first := map[int]bool{n[0]: true, n[1]: true}
		if sum != tc.total || !first[tc.last[0]] || !first[tc.last[1]] {
			t.Errorf("%s: layout %v sums to %d, want %d with the last layer's %v first", tc.model, n, sum, tc.total, tc.last)
		}
	}
	if _, err := (Config{Model: "resnet"}).GradientLayout(); err == nil {
		t.Error("unknown model: no error")
	}
}

func TestFitLink(t *testing.T) {
	const alpha, beta = 5e-6, 2e9
	at := func(b int) Probe { return Probe{Bytes: b, Seconds: alpha + float64(b)/beta} }
	k := fitLink(at(4096), at(4<<20))
	if math.Abs(k.Latency-alpha) > 1e-12 || math.Abs(k.Bandwidth-beta)/beta > 1e-9 {
		t.Errorf("fit %+v, want latency %g and bandwidth %g", k, alpha, beta)
	}
	// A small message slower than a large one: no line; the large one's rate.
	k = fitLink(Probe{Bytes: 4096, Seconds: 1e-3}, Probe{Bytes: 1 << 20, Seconds: 5e-4})
	if k.Latency != 0 || k.Bandwidth != float64(1<<20)/5e-4 {
		t.Errorf("fit %+v, want no latency and the large probe's rate", k)
	}
	// A line with a negative intercept: latency 0, the large probe's rate.
	k = fitLink(Probe{Bytes: 4096, Seconds: 1e-7}, Probe{Bytes: 1 << 20, Seconds: 1e-3})
	if k.Latency != 0 || k.Bandwidth != float64(1<<20)/1e-3 {
		t.Errorf("fit %+v, want no latency and the large probe's rate", k)
	}
}

func TestMedianLink(t *testing.T) {
	const small, large = 16 << 10, 16 << 20
	mk := func(ts, tl float64) Link { return fitLink(Probe{small, ts}, Probe{large, tl}) }
	// Three rounds, one of them slowed by a spell of load (the second):
	// the medians are 20 µs and 10.02 ms, whatever order the rounds came in.
	k, err := MedianLink([]Link{mk(20e-6, 10.02e-3), mk(90e-6, 31e-3), mk(19e-6, 9.9e-3)})
	if err != nil {
		t.Fatal(err)
	}
	// The line through (16 KiB, 20 µs) and (16 MiB, 10.02 ms).
	slope := (10.02e-3 - 20e-6) / float64(large-small)
	wantBW, wantLat := 1/slope, 20e-6-small*slope
	if math.Abs(k.Bandwidth-wantBW)/wantBW > 1e-12 || math.Abs(k.Latency-wantLat) > 1e-15 {
		t.Errorf("median link: %.6g B/s and %.6g s, want %.6g and %.6g", k.Bandwidth, k.Latency, wantBW, wantLat)
	}
	if k.Small.Seconds != 20e-6 || k.Large.Seconds != 10.02e-3 {
		t.Errorf("median probes %v and %v, want 20 µs and 10.02 ms", k.Small, k.Large)
	}
	// An even count takes the mean of the middle two.
	k, err = MedianLink([]Link{mk(10e-6, 4e-3), mk(30e-6, 8e-3)})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(k.Small.Seconds-20e-6) > 1e-18 || math.Abs(k.Large.Seconds-6e-3) > 1e-15 {
		t.Errorf("median of two: probes %v and %v, want 20 µs and 6 ms", k.Small, k.Large)
	}
	if _, err := MedianLink(nil); err == nil {
		t.Error("no links: no error")
	}
	other := fitLink(Probe{4096, 1e-5}, Probe{large, 1e-2})
	if _, err := MedianLink([]Link{mk(20e-6, 1e-2), other}); err == nil {
		t.Error("probes of different sizes: no error")
	}
	// Probes of cold buffers combine with each other, not with hot ones.
	cold := func(ts, tl float64) Link { k := mk(ts, tl); k.Evict = 64 << 20; return k }
	if k, err := MedianLink([]Link{cold(20e-6, 1e-2), cold(30e-6, 2e-2), cold(25e-6, 3e-2)}); err != nil || k.Evict != 64<<20 || k.Large.Seconds != 2e-2 {
		t.Errorf("cold probes: %+v, %v", k, err)
	}
	if _, err := MedianLink([]Link{cold(20e-6, 1e-2), mk(20e-6, 1e-2)}); err == nil {
		t.Error("cold and hot probes: no error")
	}
}

func TestLoopbackRing(t *testing.T) {
	ts, err := NewLoopbackRing(context.Background(), 3, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, tr := range ts {
			tr.Close()
		}
	}()
	// One step: rank r receives rank r−1's values.
	dst := make([][]float32, 3)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for r, tr := range ts {
		dst[r] = []float32{100, 100}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = tr.SendRecv([]float32{float32(r), float32(10 * r)}, dst[r], true)
		}()
	}
	wg.Wait()
	for r := range ts {
		p := (r + 2) % 3
		if errs[r] != nil || dst[r][0] != 100+float32(p) || dst[r][1] != 100+float32(10*p) {
			t.Errorf("rank %d: %v, %v; want 100 plus rank %d's values", r, dst[r], errs[r], p)
		}
	}
	if _, err := NewLoopbackRing(context.Background(), 0, time.Second); err == nil {
		t.Error("ring of 0 ranks: no error")
	}
}

func TestMeasureLink(t *testing.T) {
	tcp, err := NewLoopbackRing(context.Background(), 2, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, tr := range tcp {
			tr.Close()
		}
	}()
	for name, ts := range map[string][]Transport{"inproc": NewInprocRing(2), "tcp": tcp} {
		for _, evict := range []int{0, 1 << 20} {
			k, err := MeasureLink(ts, LinkProbe{Small: 1024, Large: 256 << 10, Reps: 5, Evict: evict})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !(k.Bandwidth > 0) || math.IsInf(k.Bandwidth, 0) || !(k.Latency >= 0) || k.Small.Bytes != 4096 || k.Large.Bytes != 1<<20 || k.Evict != evict {
				t.Errorf("%s, %d bytes evicted: %+v", name, evict, k)
			}
		}
	}
	for _, bad := range []LinkProbe{{0, 10, 1, 0}, {10, 10, 1, 0}, {1, 10, 0, 0}, {1, 10, 1, -1}} {
		if _, err := MeasureLink(NewInprocRing(2), bad); err == nil {
			t.Errorf("MeasureLink(%+v): no error", bad)
		}
	}
}

func TestLastLevelCache(t *testing.T) {
	cache := func(files ...string) fstest.MapFS {
		fsys := fstest.MapFS{}
		for i := 0; i+1 < len(files); i += 2 {
			fsys[files[i]] = &fstest.MapFile{Data: []byte(files[i+1])}
		}
		return fsys
	}
	for _, tc := range []struct {
		name string
		fsys fstest.MapFS
		want int
	}{
		// The AMD EPYC guest of docs/validation.md: L1d, L1i, L2, L3.
		{"epyc", cache("index0/level", "1\n", "index0/size", "32K\n", "index1/level", "1\n", "index1/size", "32K\n",
			"index2/level", "2\n", "index2/size", "1024K\n", "index3/level", "3\n", "index3/size", "32768K\n"), 32 << 20},
		{"units", cache("index0/level", "2", "index0/size", "2M", "index1/level", "4", "index1/size", "1G", "index2/level", "3", "index2/size", "4194304"), 1 << 30},
		{"highest level wins over a larger lower one", cache("index0/level", "2", "index0/size", "64M", "index1/level", "3", "index1/size", "16M"), 16 << 20},
		{"unreadable entries are skipped", cache("index0/level", "3", "index0/size", "lots", "index1/level", "x", "index1/size", "8M",
			"index2/level", "2", "index2/size", "512K", "index3/level", "3"), 512 << 10},
		{"nothing", cache(), 0},
	} {
		if got := lastLevelCache(tc.fsys); got != tc.want {
			t.Errorf("%s: %d bytes, want %d", tc.name, got, tc.want)
		}
	}
	if n := LastLevelCache(); n < 0 {
		t.Errorf("LastLevelCache() = %d", n)
	}
}

// TestLinkRecord: a link written as a bench log record, through the
// log's JSON, reads back as the same link, its latency and bandwidth
// fitted again from its probes; a record whose fit disagrees with its
// probes, or of another kind, is refused.
func TestLinkRecord(t *testing.T) {
	k := fitLink(Probe{Bytes: 64 << 10, Seconds: 1.3e-4}, Probe{Bytes: 16 << 20, Seconds: 1.05e-2})
	k.Evict = 64 << 20
	var buf bytes.Buffer
	if err := benchlog.NewWriter(&buf).Write(k.Record("r", "tcp", 3)); err != nil {
		t.Fatal(err)
	}
	r, err := benchlog.NewReader(&buf).Next()
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != benchlog.KindLink || r.Transport != "tcp" || r.Run != "r" || r.Link.Round != 3 {
		t.Errorf("record %+v", r)
	}
	got, err := LinkOf(r)
	if err != nil || got != k {
		t.Errorf("LinkOf: %+v (%v), want %+v", got, err, k)
	}
	bad := r
	l := *r.Link
	l.Bandwidth *= 1.01
	bad.Link = &l
	if _, err := LinkOf(bad); err == nil || !strings.Contains(err.Error(), "where its probes give") {
		t.Errorf("a bandwidth its probes do not give: %v", err)
	}
	if _, err := LinkOf(benchlog.Record{Kind: benchlog.KindMeasurement, Batch: 8, StepTime: 0.1}); err == nil {
		t.Error("a measurement record: no error")
	}
}
