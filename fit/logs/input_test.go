package logs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"scaleplan/internal/benchlog"
)

// zeros is an endless stream of NUL bytes that cannot seek, like a pipe
// from /dev/zero.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestReadRefusesLongLine: a file of NULs, seekable or not, detected or
// read as any format, ends with an error naming line 1 and the limit,
// after reading about MaxLineBytes.
func TestReadRefusesLongLine(t *testing.T) {
	const want = "nul:1: line longer than 1 MiB"
	file := make([]byte, MaxLineBytes+10)
	for _, tc := range []struct {
		name string
		r    func() io.Reader
	}{
		{"seekable", func() io.Reader { return bytes.NewReader(file) }},
		{"endless stream", func() io.Reader { return zeros{} }},
	} {
		for _, f := range append([]Format{""}, Formats...) {
			var err error
			if f == "" {
				_, err = Read(tc.r(), "nul")
			} else {
				_, err = ReadAs(tc.r(), "nul", f)
			}
			if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s as %q: error %v, want %q wrapping ErrLimit", tc.name, f, err, want)
			}
		}
	}
}

// TestLineReaderLimits checks the two limits of lineReader and readCapped
// with small ones: the line and the byte each goes over is named.
func TestLineReaderLimits(t *testing.T) {
	lr := newLineReader(strings.NewReader("ab\ncd\nef\n"), "x", 6)
	var got []string
	for {
		l, ok := lr.next()
		if !ok {
			break
		}
		got = append(got, string(l))
	}
	if len(got) > 2 || !errors.Is(lr.err, ErrLimit) || !strings.Contains(lr.err.Error(), "x: more than 6 bytes read") {
		t.Errorf("lines %q, error %v; want at most 2 lines and more than 6 bytes", got, lr.err)
	}
	lr = newLineReader(strings.NewReader("ab\r\ncd"), "x", 6)
	a, _ := lr.next()
	a = bytes.Clone(a)
	b, _ := lr.next()
	if string(a) != "ab" || string(b) != "cd" || lr.err != nil {
		t.Errorf("lines %q %q, error %v; want ab, cd, none", a, b, lr.err)
	}
	if _, err := readCapped(strings.NewReader("abc\nabcdef\n"), "y", 100, 5); err == nil || !strings.Contains(err.Error(), "y:2: line longer than 5 bytes") {
		t.Errorf("readCapped: %v, want line 2 longer than 5 bytes", err)
	}
	if _, err := readCapped(strings.NewReader("abc\nabc\nabc\n"), "y", 10, 5); err == nil || !strings.Contains(err.Error(), "y: more than 10 bytes") {
		t.Errorf("readCapped: %v, want more than 10 bytes", err)
	}
	if data, err := readCapped(strings.NewReader("abc\nabc\n"), "y", 8, 3); err != nil || string(data) != "abc\nabc\n" {
		t.Errorf("readCapped at its limits: %q, %v", data, err)
	}
}

func TestQuote(t *testing.T) {
	long := strings.Repeat("x", 100)
	accents := strings.Repeat("é", 50) // 2 bytes each: 80 bytes end a character
	odd := "a" + strings.Repeat("é", 50)
	for _, tc := range []struct{ in, quote, clip string }{
		{"short", `"short"`, "short"},
		{long, `"` + long[:80] + `"…(100 bytes)`, long[:80] + "…(100 bytes)"},
		{accents, `"` + accents[:80] + `"…(100 bytes)`, accents[:80] + "…(100 bytes)"},
		{odd, `"` + odd[:79] + `"…(101 bytes)`, odd[:79] + "…(101 bytes)"},
	} {
		if got := quote(tc.in); got != tc.quote {
			t.Errorf("quote(%d bytes) = %s, want %s", len(tc.in), got, tc.quote)
		}
		if got := clip(tc.in); got != tc.clip {
			t.Errorf("clip(%d bytes) = %s, want %s", len(tc.in), got, tc.clip)
		}
	}
}

// TestReadQuotesLittle: a bad cell of 500 kB is quoted in 80 bytes.
func TestReadQuotesLittle(t *testing.T) {
	big := strings.Repeat("9", 500_000) + "x"
	data := "batch,samples_per_s\n8,100\n16," + big + "\n32,180\n"
	lg, err := Read(strings.NewReader(data), "big.csv")
	if err != nil {
		t.Fatal(err)
	}
	s := lg.MalformedSummary()
	if len(s) > 400 || !strings.Contains(s, "line 3") || !strings.Contains(s, "…(500001 bytes)") {
		t.Errorf("summary of %d bytes: %.600s", len(s), s)
	}
}

func TestCheckBounds(t *testing.T) {
	m := func(f func(r *benchlog.Record)) benchlog.Record {
		r := benchlog.Record{Kind: benchlog.KindMeasurement, Workers: 8, Batch: 32, SamplesPerSec: 1000}
		f(&r)
		return r
	}
	for _, tc := range []struct {
		name string
		r    benchlog.Record
		want string // "" for none
	}{
		{"ordinary", m(func(*benchlog.Record) {}), ""},
		{"1e308 samples/s", m(func(r *benchlog.Record) { r.SamplesPerSec = 1e308 }), "throughput 1e+308 samples/s"},
		{"just over 1e9 per device", m(func(r *benchlog.Record) { r.SamplesPerSec = 8.0001e9 }), "per device"},
		{"1e9 per device", m(func(r *benchlog.Record) { r.SamplesPerSec = 8e9 }), ""},
		{"step of a picosecond", m(func(r *benchlog.Record) { r.SamplesPerSec, r.StepTime = 0, 1e-12 }), "step time 1e-12 s"},
		{"step of a nanosecond", m(func(r *benchlog.Record) { r.SamplesPerSec, r.StepTime, r.Workers, r.Batch = 0, 1e-9, 1e6, 1 }), ""},
		{"step of 1e7 s", m(func(r *benchlog.Record) { r.StepTime = 1e7 }), "step time 1e+07 s"},
		{"step of 1e-320 s", m(func(r *benchlog.Record) { r.SamplesPerSec, r.StepTime = 0, 1e-320 }), "step time"},
		{"batch 2^31", m(func(r *benchlog.Record) { r.Batch = 1 << 31 }), "batch 2147483648"},
		{"global batch over 2^30", m(func(r *benchlog.Record) { r.Batch = 1 << 28 }), "effective global batch 2147483648"},
		{"1e8 devices", m(func(r *benchlog.Record) { r.Workers = 1e8 }), "devices 100000000"},
		{"oom of a batch", benchlog.Record{Kind: benchlog.KindOOM, Batch: 1 << 31}, "batch 2147483648"},
	} {
		err := checkBounds(&tc.r)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestReadRefusesAbsurd: every reader's records pass through the bounds,
// with the line and the value.
func TestReadRefusesAbsurd(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"csv", "batch,samples_per_s\n8,100\n16,1e308\n32,180\n", "line 3: throughput 1e+308 samples/s"},
		{"csv zero", "batch,samples_per_s\n8,100\n16,0\n32,180\n", "line 3: samples_per_s \"0\": want a number > 0"},
		{"csv step", "batch,step_time\n8,0.1\n16,1e-12\n32,0.3\n", "line 3: step time 1e-12 s"},
		{"bench log", `{"kind":"measurement","batch":8,"samples_per_s":100}` + "\n" + `{"kind":"measurement","batch":16,"samples_per_s":1e308}` + "\n", "line 2: throughput 1e+308 samples/s"},
		{"horovod", "Model: resnet50\nBatch size: 32\nNumber of GPUs: 1\nRunning benchmark...\nTotal img/sec on 1 GPU(s): 1e300 +-0.5\n", "throughput 1e+300 samples/s"},
	} {
		lg, err := Read(strings.NewReader(tc.data), tc.name)
		var s string
		if err != nil {
			s = err.Error()
		} else {
			s = lg.MalformedSummary()
		}
		if !strings.Contains(s, tc.want) {
			t.Errorf("%s: %s; want %q", tc.name, s, tc.want)
		}
	}
}

// csvRows writes a CSV of n measurement rows at global batches 8, 16 and
// 32 whose throughputs scatter ±1 % and ±2 % about b/(b/v0 + t), v0 = 1000
// samples/s and t = 10 ms, symmetrically, so that the mean of every batch
// over a whole number of cycles of 15 rows is the law.
func csvRowsOf(n int) []byte {
	var b bytes.Buffer
	b.WriteString("model,batch,samples_per_s\n")
	scatter := []float64{-0.02, -0.01, 0, 0.01, 0.02}
	for i := range n {
		batch := []int{8, 16, 32}[i%3]
		v := float64(batch) / (float64(batch)/1000 + 0.01)
		fmt.Fprintf(&b, "resnet50,%d,%.17g\n", batch, v*(1+scatter[(i/3)%5]))
	}
	return b.Bytes()
}

// TestReadCSVMerges: past AggregateRows, rows are merged into one
// measurement per configuration and batch at the mean throughput, at the
// line of its first row (TestFitCSVMerged fits them).
func TestReadCSVMerges(t *testing.T) {
	n := 15 * (AggregateRows/15 + 1000) // whole cycles past the limit
	data := append(csvRowsOf(n), "resnet50,64,abc\n"...)
	lg, err := Read(bytes.NewReader(data), "big.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Records) != 3 || lg.Malformed != 1 {
		t.Fatalf("%d records, %d malformed; want 3 and 1", len(lg.Records), lg.Malformed)
	}
	for i, r := range lg.Records {
		b := []int{8, 16, 32}[i]
		want := float64(b) / (float64(b)/1000 + 0.01)
		if r.GlobalBatch != b || lg.Lines[i] != i+2 || math.Abs(r.SamplesPerSec/want-1) > 1e-12 {
			t.Errorf("record %d: batch %d line %d %v samples/s; want %d, %d, %v", i, r.GlobalBatch, lg.Lines[i], r.SamplesPerSec, b, i+2, want)
		}
	}
	if len(lg.Notes) != 1 || !strings.Contains(lg.Notes[0], fmt.Sprintf("%d measurement rows (more than %d) merged into 3 measurements", n, AggregateRows)) {
		t.Errorf("notes %q", lg.Notes)
	}
	// Just under the limit, every row is its own record.
	lg, err = Read(bytes.NewReader(csvRowsOf(AggregateRows)), "edge.csv")
	if err != nil || len(lg.Records) != AggregateRows || len(lg.Notes) != 0 {
		t.Errorf("%d rows: %v, %d records, notes %q", AggregateRows, err, len(lg.Records), lg.Notes)
	}
}

// TestReadCSVDistinctRowsLimit: rows that never repeat a configuration
// cannot be merged, and past MaxRecords they are an error.
func TestReadCSVDistinctRowsLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("half a million rows")
	}
	var b bytes.Buffer
	b.WriteString("run_id,batch,samples_per_s\n")
	for i := range MaxRecords + 1 {
		fmt.Fprintf(&b, "%d,8,100\n", i)
	}
	_, err := Read(bytes.NewReader(b.Bytes()), "distinct.csv")
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "more than 500000 records") {
		t.Errorf("error %v, want more than 500000 records", err)
	}
}

func TestReadCSVGlobalBatchPerDevice(t *testing.T) {
	data := "global_batch_size,num_gpus,samples_per_second\n64,8,1000\n30,4,900\n128,8,1800\n"
	lg, err := Read(strings.NewReader(data), "g.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Records) != 2 {
		t.Fatalf("%d records, want 2", len(lg.Records))
	}
	if r := lg.Records[0]; r.Batch != 8 || r.Workers != 8 || r.GlobalBatch != 64 || r.SamplesPerSec != 1000 {
		t.Errorf("record %+v; want batch 8 of 8 devices, global 64, 1000 samples/s", r)
	}
	if s := lg.MalformedSummary(); !strings.Contains(s, "line 3: global_batch 30 is not a multiple of devices 4") {
		t.Errorf("malformed: %s", s)
	}
	for _, h := range []string{"per_device_batch,world_size,throughput", "batch_size,gpus,images_per_sec", "per_device_train_batch_size,n_gpus,samples/s"} {
		lg, err := Read(strings.NewReader(h+"\n8,4,100\n16,4,150\n"), "alias.csv")
		if err != nil || lg.Records[0].Batch != 8 || lg.Records[0].Workers != 4 || lg.Records[0].GlobalBatch != 32 || lg.Records[0].SamplesPerSec != 100 {
			t.Errorf("%s: %v %+v", h, err, lg)
		}
	}
}

// TestReadCSVAccumulation checks gradient accumulation in a CSV: a global
// batch of 1,024 over one device's batch of 128 is 8 micro-batches a step,
// over 4 devices 2 (DeepLearningExamples' GNMT, --train-global-batch-size
// 1024); an accumulation column says it outright; a global batch that is
// not batch × devices × accumulation is refused, naming the figures.
func TestReadCSVAccumulation(t *testing.T) {
	data := "batch,gpus,global_batch,samples_per_s\n128,1,1024,100\n128,4,1024,380\n128,8,1024,700\n128,4,1000,10\n"
	lg, err := Read(strings.NewReader(data), "acc.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Records) != 3 {
		t.Fatalf("%d records, want 3", len(lg.Records))
	}
	for i, want := range []int{8, 2, 0} {
		if r := lg.Records[i]; r.Accumulate != want || r.GlobalBatch != 1024 || r.Batch != 128 {
			t.Errorf("record %d: accumulate %d, global %d, batch %d; want %d, 1024, 128", i, r.Accumulate, r.GlobalBatch, r.Batch, want)
		}
	}
	if s := lg.MalformedSummary(); !strings.Contains(s, "line 5: global_batch 1000 is not a whole number of steps of batch 128 on 4 devices") {
		t.Errorf("malformed: %s", s)
	}
	lg, err = Read(strings.NewReader("batch,gpus,gradient_accumulation_steps,samples_per_s\n64,8,4,900\n64,8,2,880\n"), "col.csv")
	if err != nil {
		t.Fatal(err)
	}
	if r := lg.Records[0]; r.Accumulate != 4 || r.GlobalBatch != 2048 {
		t.Errorf("accumulation column: accumulate %d, global %d; want 4, 2048", r.Accumulate, r.GlobalBatch)
	}
	lg, err = Read(strings.NewReader("batch,gpus,accumulation,global_batch,samples_per_s\n64,8,4,1024,900\n64,8,2,1024,880\n"), "bad.csv")
	if err != nil {
		t.Fatal(err)
	}
	if s := lg.MalformedSummary(); !strings.Contains(s, "global_batch 1024 is not batch 64 × devices 8 × accumulation 4 = 2048") {
		t.Errorf("malformed: %s", s)
	}
}

func TestMLPerfRunStopBeforeStart(t *testing.T) {
	ev := func(ms int, key, status string) string {
		meta := `{}`
		if status != "" {
			meta = `{"status": "` + status + `"}`
		}
		return fmt.Sprintf(`:::MLLOG {"namespace": "", "time_ms": %d, "event_type": "INTERVAL_END", "key": "%s", "value": null, "metadata": %s}`, ms, key, meta)
	}
	settings := `:::MLLOG {"namespace": "", "time_ms": 1000, "event_type": "POINT_IN_TIME", "key": "global_batch_size", "value": 256, "metadata": {}}` + "\n" +
		`:::MLLOG {"namespace": "", "time_ms": 1000, "event_type": "POINT_IN_TIME", "key": "submission_benchmark", "value": "resnet", "metadata": {}}` + "\n"
	for _, tc := range []struct{ name, log, want string }{
		{"stop before start in time", settings + ev(5000, "run_start", "") + "\n" + ev(4000, "run_stop", "success") + "\n",
			"line 4: run_stop at line 4 (4000 ms) is not after run_start at line 3 (5000 ms): run refused"},
		{"zero duration", settings + ev(5000, "run_start", "") + "\n" + ev(5000, "run_stop", "success") + "\n",
			"run_stop at line 4 (5000 ms) is not after run_start at line 3 (5000 ms)"},
		{"stop without start", settings + ev(4000, "run_stop", "success") + "\n" + ev(5000, "run_start", "") + "\n",
			"line 3: run_stop with no run_start before it: run refused"},
	} {
		lg, err := Read(strings.NewReader(tc.log), tc.name)
		var s string
		if err != nil {
			s = err.Error()
		} else {
			s = lg.MalformedSummary()
			for _, r := range lg.Runs {
				if r.Status == "success" {
					t.Errorf("%s: run %+v accepted as a success", tc.name, r)
				}
			}
		}
		if !strings.Contains(s, tc.want) {
			t.Errorf("%s: %s; want %q", tc.name, s, tc.want)
		}
	}
}

// BenchmarkReadCSV reads CSVs of 10^4 to 10^6 measurement rows; past
// AggregateRows the rows are merged as they are read, so the memory a
// read holds stops growing with the rows.
func BenchmarkReadCSV(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		data := csvRowsOf(n)
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Read(bytes.NewReader(data), "bench.csv"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
