package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"scaleplan/calibrate"
	"scaleplan/engine/dist"
	"scaleplan/engine/tensor"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/tables"
	"scaleplan/internal/units"
)

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
		if r.Kind != benchlog.KindLink || r.Transport != want.transport || r.Link.Round != want.round || r.Link.EvictBytes != calibrate.LinkEvict() {
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
		units.Bytes(calibrate.LinkEvict())); code != exitOK || !strings.Contains(stdout, want) {
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
	// Without --engine-rounds the build's backend gives the rounds: 4 with
	// the pure-Go BLAS, 12 with OpenBLAS.
	stdout, stderr, code = runCLI("validate", "--engine", "--engine-core-guard=false", "--engine-data", "synthetic", "--engine-batch", "4,8", "--engine-workers", "2",
		"--engine-transport", "inproc", "--engine-steps", "2", "--engine-warmup", "0", "--engine-warm-rounds", "0")
	if want := fmt.Sprintf("Every configuration measured in %d alternating rounds", calibrate.DefaultRounds(tensor.Backend())); code != exitOK || !strings.Contains(stdout, want) {
		t.Errorf("validate --engine without --engine-rounds, %s build: exit %d, want %q in the report:\n%s%s", tensor.Backend(), code, want, stdout, stderr)
	}
	for backend, want := range map[string]int{"gonum": 4, "openblas": 12} {
		if got := calibrate.DefaultRounds(backend); got != want {
			t.Errorf("calibrate.DefaultRounds(%q) = %d, want %d", backend, got, want)
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
		{[]string{"validate", "--engine", "--engine-calibration", "one", "--engine-threads", "0"}, "--engine-threads 0: want 1 to"},
		{[]string{"validate", "--engine", "--engine-calibration", "one", "--engine-threads", "4097"}, "--engine-threads 4097: want 1 to"},
		{[]string{"validate", "--engine", "--engine-threads", "1"}, "--engine-threads applies to --engine-calibration one; with step, every worker count is calibrated"},
		{[]string{"validate", "--engine", "--engine-calibration", "all"}, `--engine-calibration "all" (valid: step, each, one)`},
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

// TestValidateEngineCalibrations: by default each worker count is
// calibrated by its own sweep, independent workers on the cores its
// workers will have, measured before the workers and written to the log;
// the replay of that log with --engine-calibration one is the replay of
// the same log with the sweep one would have measured alone, as a run of
// one writes it.
func TestValidateEngineCalibrations(t *testing.T) {
	cores := runtime.GOMAXPROCS(0)
	if cores < 2 {
		t.Skip("one core: one worker and two take the same sweep")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "each.jsonl")
	live, stderr, code := runCLI("validate", "--engine", "--engine-core-guard=false", "--engine-data", "synthetic", "--engine-batch", "4,8", "--engine-workers", "1,2",
		"--engine-transport", "inproc", "--engine-steps", "2", "--engine-warmup", "0", "--engine-rounds", "1", "--engine-warm-rounds", "0", "--engine-out", log)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readLog(t, log)
	if len(recs) != 10 || recs[0].Config["calibration"] != "step" {
		t.Fatalf("log of %d records, header %+v: want the header, 8 measurements and a link probe", len(recs), recs[0].Config)
	}
	for i, want := range []struct {
		workers, batch int
		transport      string
	}{{1, 4, "inproc"}, {1, 8, "inproc"}, {2, 4, "none"}, {2, 8, "none"}} {
		if r := recs[1+i]; r.Workers != want.workers || r.Batch != want.batch || r.Transport != want.transport {
			t.Errorf("record %d: %d workers %s at batch %d; want %d workers %s at batch %d", i+2, r.Workers, r.Transport, r.Batch, want.workers, want.transport, want.batch)
		}
	}
	checkContains(t, "validate --engine", live,
		fmt.Sprintf("Calibration of 1 worker (one worker on %d cores, 2 batches): v0 = ", cores),
		fmt.Sprintf("Calibration of 2 workers (one worker on %d of %d cores, beside an independent copy of it on the other, 2 batches): v0 = ", cores/2, cores))
	replayed, stderr, code := runCLI("validate", "--engine", "--engine-from", log)
	if code != exitOK || replayed != live {
		t.Errorf("exit %d: the replay differs from the run\nrun:\n%s\nreplay:\n%s%s", code, live, replayed, stderr)
	}

	// The sweep of one: one worker on the cores each of two has, beside a
	// copy of it; the log as a run of one would have written it keeps that
	// sweep alone.
	onePath, got, stderr := checkReplayAs(t, log, "step", "one", func(i int) bool { return i >= 2 }) // the one-worker sweep's two records left out
	// The log's measurements are counted as it holds them, the sweep left
	// out included.
	checkContains(t, "--engine-calibration one", stderr, ": 8 measurements and 1 link probes of 1 rounds, measured by ")
	// One worker, taken from the sweep of two, on twice the cores: s = 1/2.
	checkContains(t, "--engine-calibration one", got, fmt.Sprintf("Calibration (one worker on %d of %d cores, beside an independent copy of it on the other, 2 batches): v0 = ", cores/2, cores))
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--engine-from", onePath, "--engine-calibration", "each"}, exitRuntime, fmt.Sprintf("one.jsonl: --engine-calibration each: the log (calibration one) holds no sweep of one worker on %d cores, which each measures", cores)},
		{[]string{"--engine-from", log, "--engine-calibration", "both"}, exitUsage, `--engine-calibration "both" (valid: step, each, one)`},
	} {
		_, stderr, code := runCLI(append([]string{"validate", "--engine"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tc.args, code, tc.code, tc.msg, stderr)
		}
	}
}

// TestValidateEngineInStep: by default, workers that take turns on the
// cores are calibrated by as many workers in step over each transport,
// measured after the sweep of a worker per core and before the workers,
// logged with transport none and the label in_step, and replayed as the
// run reported them; the replay as each, from the same log, is the replay
// of the log as a run of each writes it.
func TestValidateEngineInStep(t *testing.T) {
	cores := runtime.GOMAXPROCS(0)
	if cores > 8 {
		t.Skip("twice the cores in worker processes is too many for a unit test")
	}
	w := 2 * cores
	dir := t.TempDir()
	log := filepath.Join(dir, "step.jsonl")
	live, stderr, code := runCLI("validate", "--engine", "--engine-core-guard=false", "--engine-data", "synthetic", "--engine-batch", "4,8",
		"--engine-workers", fmt.Sprintf("%d,%d", cores, w), "--engine-transport", "inproc,tcp", "--engine-steps", "2", "--engine-warmup", "0",
		"--engine-rounds", "1", "--engine-warm-rounds", "0", "--engine-out", log)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readLog(t, log)
	if len(recs) != 17 {
		t.Fatalf("log of %d records: want the header, 14 measurements and 2 link probes", len(recs))
	}
	for i, want := range []struct {
		workers         int
		transport, over string
	}{{cores, "none", ""}, {cores, "none", ""}, {w, "none", "inproc"}, {w, "none", "inproc"}, {w, "none", "tcp"}, {w, "none", "tcp"}, {cores, "inproc", ""}} {
		if cores == 1 && want.workers == 1 && want.transport == "none" {
			want.transport = "inproc" // one worker alone
		}
		if r := recs[1+i]; r.Workers != want.workers || r.Transport != want.transport || r.Labels[benchlog.InStep] != want.over {
			t.Errorf("record %d: %d workers %s, labels %v; want %d workers %s in step over %q", i+2, r.Workers, r.Transport, r.Labels, want.workers, want.transport, want.over)
		}
	}
	for _, over := range []string{"inproc", "tcp"} {
		checkContains(t, "validate --engine", live, fmt.Sprintf("Calibration of %d workers over %s (%d workers in step on %s, meeting over %s where they would all-reduce and exchanging nothing, 2 batches): v0 = ",
			w, over, w, fmt.Sprintf("%d %s", cores, tables.Plural(cores, "core", "cores")), over))
	}
	if strings.Contains(live, "Jitter of "+strconv.Itoa(w)) {
		t.Errorf("jitter drawn for workers calibrated in step:\n%s", live)
	}
	replayed, stderr, code := runCLI("validate", "--engine", "--engine-from", log)
	if code != exitOK || replayed != live {
		t.Errorf("exit %d: the replay differs from the run\nrun:\n%s\nreplay:\n%s%s", code, live, replayed, stderr)
	}

	// The log as a run of each would have written it: the sweeps in step
	// left out.
	eachPath, _, _ := checkReplayAs(t, log, "step", "each", func(i int) bool { return i < 2 || i >= 6 })
	// A log of each holds no sweep in step.
	_, stderr, code = runCLI("validate", "--engine", "--engine-from", eachPath, "--engine-calibration", "step")
	if msg := fmt.Sprintf("each.jsonl: --engine-calibration step: the log (calibration each) holds no sweep of %d workers in step over inproc, which step measures", w); code != exitRuntime || !strings.Contains(stderr, msg) {
		t.Errorf("a log of each replayed as step: exit %d, want %d with %q:\n%s", code, exitRuntime, msg, stderr)
	}
}

// checkReplayAs checks that the validate --engine log at path, of
// calibration from, replayed with --engine-calibration mode reports what
// the log as a run of mode writes it reports: the header's calibration
// mode, and the records after it whose index keep accepts. It returns that
// log's path (MODE.jsonl beside path) and the replay's stdout and stderr.
func checkReplayAs(t *testing.T, path, from, mode string, keep func(i int) bool) (string, string, string) {
	t.Helper()
	lines := strings.SplitAfter(strings.TrimSuffix(string(mustRead(t, path)), "\n"), "\n")
	as := []string{strings.Replace(lines[0], `"calibration":"`+from+`"`, `"calibration":"`+mode+`"`, 1)}
	for i, l := range lines[1:] {
		if keep(i) {
			as = append(as, l)
		}
	}
	asPath := filepath.Join(filepath.Dir(path), mode+".jsonl")
	if err := os.WriteFile(asPath, []byte(strings.Join(as, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	want, stderr, code := runCLI("validate", "--engine", "--engine-from", asPath)
	if code != exitOK {
		t.Fatalf("the log of %s: exit %d: %s", mode, code, stderr)
	}
	got, stderr, code := runCLI("validate", "--engine", "--engine-from", path, "--engine-calibration", mode)
	if code != exitOK || got != want {
		t.Errorf("--engine-calibration %s: exit %d:\n%s%s\nwant, from the log of %s:\n%s", mode, code, got, stderr, mode, want)
	}
	return asPath, got, stderr
}

// mustRead returns the contents of the file at path.
func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
		{[]string{"--engine-from", measurements + "/h100-2026-11-26/cnn.jsonl"}, exitRuntime, `its header's command is "", not "validate --engine"`},
		{[]string{"--engine-from", filepath.Join(dir, "none.jsonl")}, exitRuntime, "no such file"},
		{[]string{"--engine-from", log, "--engine-batch", "4,8"}, exitUsage, "validate --engine-from: --engine-batch: the log says what was measured; leave it out"},
	} {
		_, stderr, code := runCLI(append([]string{"validate", "--engine"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tc.args, code, tc.code, tc.msg, stderr)
		}
	}
}

// measurements is the folder of committed measurement logs.
const measurements = "../../testdata/measurements"

// TestValidateEngineReplayCommitted replays the committed log of a run of
// validate --engine and compares the report with its golden copy: the
// format of the report, and that a replay measures nothing (no core
// guard's account, which the log does not hold). go test -update rewrites
// the golden file after a change to the model.
func TestValidateEngineReplayCommitted(t *testing.T) {
	stdout, stderr, code := runCLI("validate", "--engine", "--engine-from", measurements+"/validate-engine-mlp-amd-replay.jsonl")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "Cores:") {
		t.Errorf("a core guard's account the log does not hold:\n%s", stdout)
	}
	checkGolden(t, "validate/engine-replay.golden", stdout)
}

// replayed is what a replay's summary lines say of the rows at batch
// 32 and above: how many, their mean absolute error, and how many are
// within 15 % of the measurement.
type replayed struct {
	rows, within int
	mae          float64 // fraction
}

var (
	largeMAE    = regexp.MustCompile(`\nmean absolute error [0-9.]+% over [0-9]+ configurations, ([0-9.]+)% over the ([0-9]+) with batch >= 32;`)
	largeWithin = regexp.MustCompile(`\nwithin 15% at batch >= 32: ([0-9]+) of ([0-9]+);`)
)

// parseReplayed reads the summary lines of a validate --engine report.
func parseReplayed(report string) (replayed, error) {
	m, w := largeMAE.FindStringSubmatch(report), largeWithin.FindStringSubmatch(report)
	if m == nil || w == nil {
		return replayed{}, fmt.Errorf("no summary of the rows at batch >= 32")
	}
	var s replayed
	mae, _ := strconv.ParseFloat(m[1], 64)
	s.mae = mae / 100
	s.rows, _ = strconv.Atoi(m[2])
	s.within, _ = strconv.Atoi(w[1])
	if n, _ := strconv.Atoi(w[2]); n != s.rows {
		return s, fmt.Errorf("%d rows at batch >= 32 in one line, %d in the other", s.rows, n)
	}
	return s, nil
}

// TestValidateEngineReplayRuns replays every committed run of validate
// --engine (the folders validate-engine-* of the measurements) with the
// calibration it was measured with, and checks the model against them:
// each replays, the mean absolute error at batch >= 32 of each run is at
// most 15 %, and over all runs together at least 90 % of those rows are
// within 15 % of the measurement (docs/validation.md states the target).
// Runs of calibration step replay as each too, from the same measurements.
// It asserts no run's figures and no count of runs: a new log is checked
// the same way.
func TestValidateEngineReplayRuns(t *testing.T) {
	logs, err := filepath.Glob(measurements + "/validate-engine-*/*.jsonl")
	if err != nil || len(logs) == 0 {
		t.Fatalf("no committed runs (%v)", err)
	}
	var rows, within int
	for _, log := range logs {
		s := replaySummary(t, log)
		rows, within = rows+s.rows, within+s.within
		if s.mae > 0.15 {
			t.Errorf("%s: mean absolute error %.1f%% at batch >= 32, want at most 15%%", log, 100*s.mae)
		}
		if strings.Contains(string(mustRead(t, log)[:512]), `"calibration":"step"`) {
			replaySummary(t, log, "--engine-calibration", "each")
		}
	}
	if rows == 0 || float64(within) < 0.9*float64(rows) {
		t.Errorf("%d of %d rows at batch >= 32 within 15%%, want at least 90%%", within, rows)
	}
	t.Logf("%d runs: %d of %d rows at batch >= 32 within 15%%", len(logs), within, rows)
}

// replaySummary replays the validate --engine log at path with the extra
// arguments and returns its summary of the rows at batch >= 32.
func replaySummary(t *testing.T, path string, args ...string) replayed {
	t.Helper()
	stdout, stderr, code := runCLI(append([]string{"validate", "--engine", "--engine-from", path}, args...)...)
	if code != exitOK {
		t.Errorf("%s %v: exit %d: %s", path, args, code, stderr)
		return replayed{}
	}
	s, err := parseReplayed(stdout)
	if err != nil {
		t.Errorf("%s %v: %v:\n%s", path, args, err, stdout)
	}
	return s
}
