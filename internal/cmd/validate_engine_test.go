package cmd

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"scaleplan/engine/dist"
	"scaleplan/fit"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/units"
	"scaleplan/sim"
)

// testCalibration is a calibration with round numbers on two cores: v0
// 5000 samples/s, t 10 ms of which 4 ms update, two layers of one 1 MiB
// bucket each.
func testCalibration(link dist.Link) *engineCalibration {
	return &engineCalibration{
		Law:    &fit.ThroughputFit{V0: 5000, T: units.Seconds(0.010)},
		Update: 0.004, Forward: 0.4, Layers: []int{1 << 18, 1 << 18}, Bucket: 1 << 20, Cores: 2,
		Links: map[string]*dist.Link{"inproc": &link},
	}
}

// The simulated step against closed forms: one worker follows the fitted
// law b/v0 + t; four workers take four times as long to compute (each has
// a quarter of the machine); W workers add, after the backward pass, the
// ring all-reduce of the whole 2 MiB gradient, 2(W−1)(α + n/(W·β')), over
// links of β' = β·min(1, cores/W): two workers on two cores at the probed
// bandwidth, four at half of it.
func TestEngineSimConfig(t *testing.T) {
	const alpha, beta = 20e-6, 1e9
	link := dist.Link{Latency: alpha, Bandwidth: beta}
	for _, tc := range []struct {
		name    string
		workers int
		batch   int
		want    float64 // step time, seconds
		tol     float64
	}{
		{"one worker", 1, 16, 16.0/5000 + 0.010, 1e-9},
		{"one worker, large batch", 1, 1024, 1024.0/5000 + 0.010, 1e-9},
		{"two workers", 2, 64, 2*(64.0/5000+0.010) + 2*(alpha+float64(2<<20)/(2*beta)), 1e-9},
		{"four workers, half the bandwidth each", 4, 64, 4*(64.0/5000+0.010) + 6*(alpha+float64(2<<20)/(4*beta/2)), 1e-9},
		{"four workers, free links", 4, 64, 4 * (64.0/5000 + 0.010), 1e-6},
	} {
		l := link
		if tc.name == "four workers, free links" {
			l = dist.Link{Bandwidth: 1e18}
		}
		cfg, err := engineSimConfig(testCalibration(l), tc.workers, tc.batch, "inproc")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		res, err := sim.Run(cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := float64(res.StepTime); math.Abs(got-tc.want)/tc.want > tc.tol {
			t.Errorf("%s: step %.9g s, want %.9g s", tc.name, got, tc.want)
		}
	}
	// Calibrated on one core of the two, as validate --engine does by
	// default: two workers, a core each, compute as fast as the
	// calibrated worker; four take turns, twice as long; one worker with
	// both cores is taken to be twice as fast.
	for _, tc := range []struct {
		workers int
		want    float64
	}{
		{1, 0.5 * (64.0/5000 + 0.010)},
		{2, 64.0/5000 + 0.010 + 2*(alpha+float64(2<<20)/(2*beta))},
		{4, 2*(64.0/5000+0.010) + 6*(alpha+float64(2<<20)/(4*beta/2))},
	} {
		cal := testCalibration(link)
		cal.Threads = 1
		cfg, err := engineSimConfig(cal, tc.workers, 64, "inproc")
		if err != nil {
			t.Fatalf("calibrated on one core, %d workers: %v", tc.workers, err)
		}
		res, err := sim.Run(cfg)
		if err != nil {
			t.Fatalf("calibrated on one core, %d workers: %v", tc.workers, err)
		}
		if got := float64(res.StepTime); math.Abs(got-tc.want)/tc.want > 1e-9 {
			t.Errorf("calibrated on one core, %d workers: step %.9g s, want %.9g s", tc.workers, got, tc.want)
		}
	}
	if _, err := engineSimConfig(testCalibration(link), 2, 16, "tcp"); err == nil {
		t.Error("a transport without a measured link: no error")
	}
}

// validate --engine end to end on a small synthetic configuration: the
// table has a row per worker count, transport and batch, and the log
// every measurement of both rounds (each round one worker's sweep first).
func TestValidateEngine(t *testing.T) {
	log := filepath.Join(t.TempDir(), "ve.jsonl")
	stdout, stderr, code := runCLI("validate", "--engine", "--engine-data", "synthetic", "--engine-batch", "4,8", "--engine-workers", "2",
		"--engine-transport", "inproc,tcp", "--engine-steps", "2", "--engine-warmup", "1", "--engine-rounds", "2", "--engine-out", log, "--format", "csv",
		"--engine-core-guard=false")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "workers,transport,batch,global_batch,predicted_samples_per_s,measured_samples_per_s") ||
		!strings.HasPrefix(lines[1], "2,inproc,4,8,") || !strings.HasPrefix(lines[4], "2,tcp,8,16,") {
		t.Errorf("stdout is not a CSV table of 4 rows:\n%s", stdout)
	}
	// The calibration: one worker on max(1, cores/2) cores, beside
	// independent copies of it on the others.
	recs := readLog(t, log)
	cores := runtime.GOMAXPROCS(0)
	copies, calTransport := max(1, cores/max(1, cores/2)), "none"
	calWho := fmt.Sprintf("%d independent workers", copies)
	if copies == 1 {
		calTransport, calWho = "inproc", "1 workers inproc"
	}
	// Each round: its six measurements, then its probe of each link.
	if len(recs) != 17 || recs[0].Kind != benchlog.KindHeader || recs[1].Workers != copies || recs[1].Transport != calTransport ||
		recs[3].Workers != 2 || recs[3].Transport != "inproc" || recs[6].Transport != "tcp" ||
		recs[9].Workers != copies || recs[14].Transport != "tcp" {
		t.Errorf("log of %d records: %+v", len(recs), recs)
	}
	for i, want := range map[int]struct {
		transport string
		round     int
	}{7: {"inproc", 1}, 8: {"tcp", 1}, 15: {"inproc", 2}, 16: {"tcp", 2}} {
		if i >= len(recs) {
			break
		}
		r := recs[i]
		if r.Kind != benchlog.KindLink || r.Transport != want.transport || r.Link.Round != want.round || r.Link.EvictBytes != linkEvict() {
			t.Errorf("record %d: %+v, want a link record of %s in round %d", i, r, want.transport, want.round)
		} else if _, err := dist.LinkOf(r); err != nil {
			t.Errorf("record %d: %v", i, err)
		}
	}
	// fit reads the log as it reads the log without its link records: they
	// are not measurements.
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(l, `{"kind":"link"`) {
			kept = append(kept, l)
		}
	}
	noLinks := filepath.Join(t.TempDir(), "nolinks.jsonl")
	if len(kept) != 14 { // 13 records and the empty string after the last newline
		t.Fatalf("%d lines without the link records, want 13:\n%s", len(kept)-1, b)
	}
	if err := os.WriteFile(noLinks, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	with, stderr, code := runCLI("fit", "--format", "csv", log)
	without, _, _ := runCLI("fit", "--format", "csv", noLinks)
	if code != exitOK || with != without || !strings.Contains(with, "\nmlp,localhost,2,") {
		t.Errorf("fit of the log: exit %d:\n%s%s\nwithout its link records:\n%s", code, with, stderr, without)
	}
	// --model names the model of records that do not, and a link record
	// has none to name.
	if _, stderr, code := runCLI("fit", "--model", "mlp", log); code != exitUsage || !strings.Contains(stderr, "every record of these logs names its model") {
		t.Errorf("fit --model of a log whose measurements name their model: exit %d: %s", code, stderr)
	}
	// The text report names the links' medians over the rounds.
	stdout, stderr, code = runCLI("validate", "--engine", "--engine-core-guard=false", "--engine-data", "synthetic", "--engine-batch", "4,8", "--engine-workers", "2",
		"--engine-transport", "inproc", "--engine-steps", "2", "--engine-warmup", "0", "--engine-rounds", "3")
	if want := fmt.Sprintf("Link inproc (ring step of two ranks on buffers out of the cache (%s written before each step), median of 3 rounds): latency ",
		units.Bytes(linkEvict())); code != exitOK || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, text report without %q:\n%s%s", code, want, stdout, stderr)
	}
	if cores == 2 && !strings.Contains(stdout, "Calibration (one worker on 1 of 2 cores, beside an independent copy of it on the other, 2 batches): v0 = ") {
		t.Errorf("the report does not say where the calibrated worker ran:\n%s", stdout)
	}
	if !strings.Contains(stdout, "Every configuration measured in 3 alternating rounds, over the timed steps of all of them, after a warm-up round set aside\n") ||
		!strings.Contains(stderr, "validate: warm-up: mlp "+calWho+" batch 4:") {
		t.Errorf("no warm-up round in the report or the progress:\n%s%s", stdout, stderr)
	}
	// One round: the warm-up round is said, and with --engine-warm-rounds
	// 0 nothing is.
	for _, tc := range []struct{ warm, want string }{
		{"1", "Every configuration measured once, after a warm-up round set aside\n"},
		{"2", "Every configuration measured once, after 2 warm-up rounds set aside\n"},
		{"0", ""},
	} {
		stdout, stderr, code = runCLI("validate", "--engine", "--engine-core-guard=false", "--engine-data", "synthetic", "--engine-batch", "4,8", "--engine-workers", "2",
			"--engine-transport", "inproc", "--engine-steps", "2", "--engine-warmup", "0", "--engine-rounds", "1", "--engine-warm-rounds", tc.warm)
		if code != exitOK || tc.want != "" && !strings.Contains(stdout, tc.want) || tc.want == "" && strings.Contains(stdout, "Every configuration") {
			t.Errorf("--engine-warm-rounds %s: exit %d, want %q in the report:\n%s%s", tc.warm, code, tc.want, stdout, stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"validate", "--engine", "--cases", "x.yaml"}, exclusiveModes},
		{[]string{"validate", "--engine", "--engine-batch", "16"}, "--engine-batch: the one-worker fit needs at least two batches, got one, 16"},
		{[]string{"validate", "--engine", "--engine-transport", "udp"}, `--engine-transport "udp" (valid: inproc, tcp)`},
		{[]string{"validate", "--engine", "--engine-steps", "1"}, "--engine-steps 1, --engine-warmup 3: want at least 2 timed steps"},
		{[]string{"validate", "--engine", "--engine-rounds", "0"}, "--engine-rounds 0: want 1 to 99"},
		{[]string{"validate", "--engine", "--engine-warm-rounds", "10"}, "--engine-warm-rounds 10: want 0 to 9"},
		{[]string{"validate", "--engine", "--engine-threads", "0"}, "--engine-threads 0: want 1 to"},
		{[]string{"validate", "--engine", "--engine-threads", "4097"}, "--engine-threads 4097: want 1 to"},
		// Repeats would be measured twice (a batch twice leaves the fit one
		// point short); engine flags without --engine, and --steps with it,
		// would be ignored.
		{[]string{"validate", "--engine", "--engine-batch", "16,32,16"}, "--engine-batch: 16 is given twice"},
		{[]string{"validate", "--engine", "--engine-workers", "2,2"}, "--engine-workers: 2 is given twice"},
		{[]string{"validate", "--engine", "--engine-transport", "tcp", "--engine-transport", "tcp"}, "--engine-transport: tcp is given twice"},
		{[]string{"validate", "--engine-batch", "16,32"}, "validate: --engine-batch applies to --engine; give it with --engine"},
		{[]string{"validate", "--engine-core-guard=false"}, "validate: --engine-core-guard applies to --engine"},
		{[]string{"validate", "--engine", "--steps", "4"}, "validate: --steps applies to the published cases"},
		{[]string{"validate", "--engine", "--engine-workers", "65", "--engine-data", "synthetic"}, "validate --engine: workers 65 not in [1, 64]"},
	} {
		if _, stderr, code := runCLI(tc.args...); code != exitUsage || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.msg)
		}
	}
}

// The summary's figures, computed by hand from four rows.
func TestSummarizeEngine(t *testing.T) {
	rows := []engineRow{
		{Workers: 2, Transport: "inproc", Batch: 16, Error: 0.30},
		{Workers: 2, Transport: "inproc", Batch: 32, Error: -0.10},
		{Workers: 4, Transport: "tcp", Batch: 64, Error: 0.16},
		{Workers: 4, Transport: "inproc", Batch: 128, Error: 0.15}, // on the bound: within
	}
	// All: (0.30 + 0.10 + 0.16 + 0.15)/4 = 0.1775; batch >= 32:
	// (0.10 + 0.16 + 0.15)/3 = 0.1367, two of three within 0.15.
	want := "mean absolute error 17.8% over 4 configurations, 13.7% over the 3 with batch >= 32; worst +30.0% (2 workers, inproc, batch 16)\n" +
		"within 15% at batch >= 32: 2 of 3; worst there +16.0% (4 workers, tcp, batch 64)\n"
	if got := summarizeEngine(rows); got != want {
		t.Errorf("summary:\n%s\nwant\n%s", got, want)
	}
	if s := summaryOf(rows); s.All.Within != 2 || s.Large.Within != 2 || math.Abs(s.Large.MAE-0.41/3) > 1e-12 {
		t.Errorf("summaryOf = %+v", s)
	}
	// Only small batches: no line about the target.
	want = "mean absolute error 30.0% over 1 configurations; worst +30.0% (2 workers, inproc, batch 16)\n"
	if got := summarizeEngine(rows[:1]); got != want {
		t.Errorf("summary of batch 16 alone:\n%s\nwant\n%s", got, want)
	}
}

// TestValidateEngineReplay: validate --engine --engine-from rebuilds, from
// the log of a run, the report that run printed, measuring nothing; a log
// that does not hold what it needs, or a flag that says what to measure,
// is refused with the reason.
func TestValidateEngineReplay(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "ve.jsonl")
	args := []string{"validate", "--engine", "--engine-core-guard=false", "--engine-data", "synthetic", "--engine-batch", "4,8,32", "--engine-workers", "2",
		"--engine-transport", "inproc,tcp", "--engine-steps", "3", "--engine-warmup", "1", "--engine-rounds", "2"}
	live, stderr, code := runCLI(append(args, "--engine-out", log)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	replayed, stderr, code := runCLI("validate", "--engine", "--engine-from", log)
	if code != exitOK || replayed != live {
		t.Errorf("exit %d: the replay differs from the run\nrun:\n%s\nreplay:\n%s%s", code, live, replayed, stderr)
	}
	if want := "validate --engine-from: " + log + ": 18 measurements and 4 link probes of 2 rounds, measured by "; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
	if got, _, code := runCLI("validate", "--engine", "--engine-from", log, "--format", "csv"); code != exitOK || !strings.HasPrefix(got, "workers,transport,batch,") {
		t.Errorf("--format csv: exit %d:\n%s", code, got)
	}
	if _, stderr, code := runCLI("validate", "--engine", "--engine-from", log, "--max-error", "0"); code != exitRuntime || !strings.Contains(stderr, "exceeds --max-error 0%") {
		t.Errorf("--max-error 0: exit %d: %s", code, stderr)
	}

	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	write := func(name string, ls []string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(ls, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var noLinks []string
	for _, l := range lines {
		if !strings.HasPrefix(l, `{"kind":"link"`) {
			noLinks = append(noLinks, l)
		}
	}
	// As a log of before 2026-11-26: no cores in the header's config.
	old := strings.Join(noLinks, "")
	at := strings.Index(old, `"config"`)
	old = old[:at] + strings.Replace(old[at:], `"cores":`, `"cpus":`, 1)
	huge := strings.Replace(lines[0], `"workers":[2]`, `"workers":[2000000000]`, 1)
	swapped := append([]string{}, lines...)
	swapped[1], swapped[2] = swapped[2], swapped[1]
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--engine-from", write("truncated.jsonl", lines[:len(lines)-3])}, exitRuntime, "truncated.jsonl: 20 records after the header, want 22: 2 rounds of 9 measurements and 2 link probes"},
		{[]string{"--engine-from", write("nolinks.jsonl", noLinks)}, exitRuntime, "the log holds no link probes: written before validate --engine logged them (2026-11-26), it cannot be replayed"},
		{[]string{"--engine-from", write("old.jsonl", []string{old})}, exitRuntime, "its header gives no cores: the log was written before validate --engine recorded them"},
		{[]string{"--engine-from", write("huge.jsonl", append([]string{huge}, lines[1:]...))}, exitRuntime, "huge.jsonl: header: "},
		{[]string{"--engine-from", write("swapped.jsonl", swapped)}, exitRuntime, "swapped.jsonl: record 2: want round 1's measurement of mlp, 2 workers none, batch 4"},
		{[]string{"--engine-from", "../../docs/measurements/h100-2026-11-26/cnn.jsonl"}, exitRuntime, `its header's command is "", not "validate --engine"`},
		{[]string{"--engine-from", filepath.Join(dir, "none.jsonl")}, exitRuntime, "no such file"},
		{[]string{"--engine-from", log, "--engine-batch", "4,8"}, exitUsage, "validate --engine-from: --engine-batch: the log says what was measured; leave it out"},
	} {
		_, stderr, code := runCLI(append([]string{"validate", "--engine"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tc.args, code, tc.code, tc.msg, stderr)
		}
	}
}

// TestValidateEngineReplayCommitted replays the committed log of a run of
// validate --engine on this project's machine and checks the figures
// docs/validation.md quotes of it ("More runs, and logs to replay"): the replay is the
// run's report, whatever the build that replays it, but for the core
// guard's account, which the log does not hold.
func TestValidateEngineReplayCommitted(t *testing.T) {
	stdout, stderr, code := runCLI("validate", "--engine", "--engine-from", "../../docs/measurements/validate-engine-mlp-amd-replay.jsonl")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkContains(t, "validate --engine-from", stdout,
		"Calibration (one worker on 1 of 2 cores, beside an independent copy of it on the other, 6 batches): v0 = 9614 samples/s, t = 3.71 ms, R² = 0.9986; update 1.64 ms, forward share 0.40",
		"Link inproc (ring step of two ranks on buffers out of the cache (64 MiB written before each step), median of 5 rounds): latency 38.2 us, bandwidth 7.306 GB/s",
		"Link tcp (ring step of two ranks on buffers out of the cache (64 MiB written before each step), median of 5 rounds): latency 153.9 us, bandwidth 1.473 GB/s",
		"Engine: predicted against measured, mlp, openblas, 2 cores",
		"2        tcp        32     64            5157                     5597                    -7.9       12.41              11.44             5.37                       3.87",
		"mean absolute error 4.2% over 24 configurations, 4.1% over the 20 with batch >= 32; worst +11.1% (4 workers, inproc, batch 64)",
		"within 15% at batch >= 32: 20 of 20; worst there +11.1% (4 workers, inproc, batch 64)")
	if strings.Contains(stdout, "Cores:") {
		t.Errorf("a core guard's account the log does not hold:\n%s", stdout)
	}
}

// TestValidateEngineReplayRuns replays the nine committed runs of
// docs/measurements/validate-engine-2026-11-26 and checks the summary lines
// each printed when it ran, which docs/validation.md quotes.
func TestValidateEngineReplayRuns(t *testing.T) {
	for name, want := range map[string][2]string{
		"1656-openblas": {"6.3% over 24 configurations, 5.7% over the 20 with batch >= 32; worst +17.7% (4 workers, inproc, batch 16)", "20 of 20; worst there +11.4% (4 workers, tcp, batch 64)"},
		"1659-openblas": {"4.7% over 24 configurations, 5.3% over the 20 with batch >= 32; worst +12.5% (2 workers, inproc, batch 32)", "20 of 20; worst there +12.5% (2 workers, inproc, batch 32)"},
		"1707-go":       {"3.6% over 24 configurations, 2.8% over the 20 with batch >= 32; worst -14.6% (2 workers, tcp, batch 16)", "20 of 20; worst there +11.4% (4 workers, inproc, batch 32)"},
		"1709-openblas": {"4.3% over 24 configurations, 4.1% over the 20 with batch >= 32; worst +12.2% (2 workers, inproc, batch 32)", "20 of 20; worst there +12.2% (2 workers, inproc, batch 32)"},
		"1712-openblas": {"3.6% over 24 configurations, 3.4% over the 20 with batch >= 32; worst +8.9% (2 workers, inproc, batch 16)", "20 of 20; worst there +7.4% (4 workers, inproc, batch 32)"},
		"1719-go":       {"3.4% over 24 configurations, 2.8% over the 20 with batch >= 32; worst -12.0% (2 workers, tcp, batch 16)", "20 of 20; worst there -9.0% (2 workers, tcp, batch 32)"},
		"1726-openblas": {"7.0% over 24 configurations, 6.9% over the 20 with batch >= 32; worst +20.1% (4 workers, tcp, batch 16)", "20 of 20; worst there +12.0% (4 workers, tcp, batch 32)"},
		"1733-go":       {"3.1% over 24 configurations, 2.8% over the 20 with batch >= 32; worst -7.7% (4 workers, inproc, batch 16)", "20 of 20; worst there -7.7% (2 workers, tcp, batch 32)"},
		"1737-openblas": {"6.3% over 24 configurations, 5.8% over the 20 with batch >= 32; worst +19.1% (4 workers, inproc, batch 16)", "20 of 20; worst there +13.1% (4 workers, inproc, batch 256)"},
	} {
		stdout, stderr, code := runCLI("validate", "--engine", "--engine-from", "../../docs/measurements/validate-engine-2026-11-26/"+name+".jsonl")
		if code != exitOK {
			t.Errorf("%s: exit %d: %s", name, code, stderr)
			continue
		}
		checkContains(t, name, stdout, "\nmean absolute error "+want[0]+"\n", "\nwithin 15% at batch >= 32: "+want[1]+"\n")
	}
	if logs, _ := filepath.Glob("../../docs/measurements/validate-engine-2026-11-26/*.jsonl"); len(logs) != 9 {
		t.Errorf("%d logs, want the 9 above", len(logs))
	}
}
