package scenarios

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"scaleplan/internal/config"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestShippedScenariosLoad(t *testing.T) {
	names := Names()
	if len(names) < 16 {
		t.Fatalf("only %d shipped scenarios: %v", len(names), names)
	}
	for _, name := range names {
		r, err := Load(name, Options{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if r.Name != name {
			t.Errorf("%s: name field is %q", name, r.Name)
		}
		if r.Sys == nil || r.Node == nil || r.Device == nil || r.Mdl == nil || r.Rcp == nil || r.Data == nil {
			t.Errorf("%s: unresolved entries", name)
		}
		if len(r.Points()) == 0 {
			t.Errorf("%s: empty sweep", name)
		}
	}
}

// TestSeedExperiments checks that a scenario exists for every experiment in
// the seeds, as issue 2 lists them.
func TestSeedExperiments(t *testing.T) {
	want := []string{
		"zinrai-200h-resnet50-mlperf-v0.6", "zinrai-200h-resnet50-mlperf-v0.7",
		"zinrai-200h-ssd-mlperf-v0.7", "zinrai-200h-maskrcnn-mlperf-v0.7",
		"zinrai-200h-transformer-mlperf-v0.7", "zinrai-200h-gnmt-mlperf-v0.7",
		"tsubame3-resnet50-caffe2-default", "tsubame3-resnet50-caffe2-staged", "tsubame3-resnet50-caffe2-verbs",
		"tsubame3-resnet50-tensorflow-ps", "tsubame3-resnet50-chainermn",
		"dgx-h100-resnet50-mlperf-v3.0",
		"ipu-pod16-efficientnet-b4", "ipu-pod64-efficientnet-b4", "ipu-pod128-efficientnet-b4", "ipu-pod256-efficientnet-b4",
		"seed003-resnet50-2gpu-nop2p",
	}
	have := map[string]bool{}
	for _, n := range Names() {
		have[n] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("no shipped scenario %q", w)
		}
	}
}

func TestPointsTSUBAME(t *testing.T) {
	r, err := Load("tsubame3-resnet50-caffe2-verbs", Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Seed 001: global batch = nodes x 4 GPUs x 32.
	want := []Point{
		{Devices: 1, Nodes: 1, DevicesPerNode: 1, Replicas: 1, BatchPerDevice: 32, GlobalBatch: 32},
		{Devices: 4, Nodes: 1, DevicesPerNode: 4, Replicas: 4, BatchPerDevice: 32, GlobalBatch: 128},
		{Devices: 32, Nodes: 8, DevicesPerNode: 4, Replicas: 32, BatchPerDevice: 32, GlobalBatch: 1024},
		{Devices: 128, Nodes: 32, DevicesPerNode: 4, Replicas: 128, BatchPerDevice: 32, GlobalBatch: 4096},
	}
	got := r.Points()
	if len(got) != len(want) {
		t.Fatalf("points = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("point %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if r.Parallelism.Bucket != 25*(1<<20) || r.Input.Prefetch != 2 || r.Seed != 1 {
		t.Errorf("defaults: bucket %v prefetch %d seed %d", r.Parallelism.Bucket, r.Input.Prefetch, r.Seed)
	}
}

func TestInlineSystem(t *testing.T) {
	r, err := Load("seed003-resnet50-2gpu-nop2p", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Node.Link.PeerToPeer || r.Node.Devices != 2 || r.Calibration.V0 != 258.1 {
		t.Errorf("inline node or calibration not applied: %+v %+v", r.Node.Link, r.Calibration)
	}
	// The inline entries do not leak into other scenarios' catalogues.
	other, err := Load("tsubame3-resnet50-caffe2-verbs", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := other.Catalog.Systems["workstation-2gpu-nop2p"]; ok {
		t.Error("inline system leaked into another scenario")
	}
}

func TestUnknownScenario(t *testing.T) {
	_, err := Load("tsubame3-resnet50-caffe2-verb", Options{})
	want := `unknown scenario "tsubame3-resnet50-caffe2-verb"; did you mean "tsubame3-resnet50-caffe2-verbs"`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
	_, err = Load("no/such/file.yaml", Options{})
	if err == nil || !strings.Contains(err.Error(), "no/such/file.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

// TestErrors pins the messages for bad scenario files in testdata/errors.
// Regenerate with go test ./scenarios -run TestErrors -update.
func TestErrors(t *testing.T) {
	files, _ := filepath.Glob("testdata/errors/*.yaml")
	if len(files) < 10 {
		t.Fatalf("only %d error cases", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := Load(f, Options{})
			if err == nil {
				t.Fatal("loaded without error")
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(f, ".yaml") + ".golden"
			if *update {
				os.WriteFile(golden, []byte(got), 0o644)
				return
			}
			want, _ := os.ReadFile(golden)
			if got != string(want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, n := range []string{"tsubame3-resnet50-caffe2-verbs", "seed003-resnet50-2gpu-nop2p", "ipu-pod16-efficientnet-b4"} {
		b, _ := shipped.ReadFile("shipped/" + n + ".yaml")
		f.Add(b)
	}
	f.Add([]byte("name: x\ncalibration: {<<, {a: 1}}\n")) // v3.0.1 of the YAML decoder panicked
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Parse(bytes.NewReader(b), "fuzz.yaml", Options{})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		for _, p := range r.Points() {
			if p.Devices <= 0 || p.GlobalBatch <= 0 || p.Nodes <= 0 || p.Nodes > r.Sys.MaxNodes {
				t.Fatalf("accepted an impossible point %+v", p)
			}
		}
	})
}

// TestDocExample parses the example scenario in docs/scenarios.md, so the
// documentation cannot drift from the loader.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/scenarios.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	if !ok {
		t.Fatal("no yaml block in docs/scenarios.md")
	}
	src, _, _ := strings.Cut(rest, "```")
	r, err := Parse(strings.NewReader(src), "docs/scenarios.md", Options{})
	if err != nil {
		t.Fatal(err)
	}
	pts := r.Points()
	if len(pts) != 5 || pts[4].Nodes != 16 || pts[4].GlobalBatch != 128*64 {
		t.Errorf("points = %+v", pts)
	}
}

// TestCalibrationFile checks that a scenario takes v0 and t from a file
// written by `scaleplan fit --out`, choosing the one-device entry.
func TestCalibrationFile(t *testing.T) {
	dir := t.TempDir()
	cal := "throughput:\n" +
		"  - {model: resnet50, device: P100, devices: 2, v0: 380, t: 90 ms, r2: 0.99, points: 6}\n" +
		"  - {model: resnet50, device: P100, devices: 1, v0: 200, t: 40 ms, r2: 0.99, points: 6}\n" +
		"  - {model: gnmt, device: P100, devices: 1, v0: 90, t: 10 ms, r2: 0.99, points: 6}\n"
	os.WriteFile(filepath.Join(dir, "calib.yaml"), []byte(cal), 0o644)
	sc := "name: c\nsystem: tsubame3\nrecipe: tsubame3-resnet50\ncalibration:\n  file: calib.yaml\n"
	path := filepath.Join(dir, "s.yaml")
	os.WriteFile(path, []byte(sc), 0o644)
	r, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Calibration; c.V0 != 200 || c.T != 0.040 || c.Devices != 1 {
		t.Errorf("calibration = %+v, want v0 200, t 40 ms on 1 device", c)
	}
	os.WriteFile(filepath.Join(dir, "calib.yaml"), []byte("throughput:\n  - {model: gnmt, devices: 1, v0: 90, t: 10 ms, r2: 0.9, points: 3}\n"), 0o644)
	_, err = Load(path, Options{})
	if err == nil || !strings.Contains(err.Error(), `line 5: calibration.file: calib.yaml has no throughput entry for model "resnet50"`) {
		t.Errorf("missing entry: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "calib.yaml"), []byte("throughput:\n  - {model: resnet50, device: P100, devices: 1, v0: 1.8e7, v0_unbounded: true, v0_lower: 805500, t: 10 ms, r2: 1, points: 4, batches: [16, 128]}\n"), 0o644)
	_, err = Load(path, Options{})
	if err == nil || !strings.Contains(err.Error(), `line 5: calibration.file: calib.yaml: the entry for model "resnet50" on 1 P100 did not bound v0 (v0_unbounded: its step time did not grow with the batch over 16–128)`) {
		t.Errorf("unbounded v0: %v", err)
	}
}

// TestOverrides: a problem with a value the command line put in names the
// flag, not the line of the value it replaced; other problems keep their
// lines.
func TestOverrides(t *testing.T) {
	opt := Options{
		Edit: func(s *Scenario) {
			s.Sweep.Devices = []int{7}
			s.Parallelism.Transport = "tcp"
		},
		Overrides: map[string]string{"sweep.devices": "--devices", "parallelism.transport": "--transport"},
	}
	_, err := Load("tsubame3-resnet50-caffe2-verbs", opt)
	if err == nil {
		t.Fatal("7 devices over tcp on tsubame3: no error")
	}
	msg := err.Error()
	for _, want := range []string{
		"--devices (sweep.devices[0]): 7 devices do not fill whole nodes of 4",
		`--transport (parallelism.transport): system "tsubame3": unknown transport "tcp"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "line ") {
		t.Errorf("error %q names a line of the file for a value from the command line", msg)
	}
	// The same edit without Overrides points at the file's lines.
	opt.Overrides = nil
	if _, err := Load("tsubame3-resnet50-caffe2-verbs", opt); err == nil || !strings.Contains(err.Error(), "line ") {
		t.Errorf("without overrides: %v, want file lines", err)
	}
	// A path that only starts like an overridden one is not attributed.
	ps := config.Problems{List: []config.Problem{{Path: "sweep.devicesx", Msg: "m"}, {Path: "sweep.devices[2]", Msg: "m"}}}
	Options{Overrides: map[string]string{"sweep.devices": "--devices"}}.attribute(&ps)
	if ps.List[0].Path != "sweep.devicesx" || ps.List[1].Path != "--devices (sweep.devices[2])" || ps.List[1].Line >= 0 {
		t.Errorf("attributed %+v", ps.List)
	}
}

// TestPlacement: a placement gives one point whose nodes hold its
// devices, Build passes it to the simulator, and a bad placement is named
// with its YAML path.
func TestPlacement(t *testing.T) {
	edit := func(pl []int, devices []int) func(*Scenario) {
		return func(s *Scenario) {
			s.Parallelism.Placement, s.Sweep.Devices, s.Parallelism.AllReduce = pl, devices, "ring"
		}
	}
	r, err := Load("tsubame3-resnet50-caffe2-verbs", Options{Edit: edit([]int{1, 2, 3, 4}, []int{10})})
	if err != nil {
		t.Fatal(err)
	}
	pts := r.Points()
	if len(pts) == 0 || pts[0].Devices != 10 || pts[0].Nodes != 4 || pts[0].DevicesPerNode != 4 {
		t.Fatalf("points %+v", pts)
	}
	c, err := r.Build(pts[0])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Placement, []int{1, 2, 3, 4}) || c.Ranks() != 10 {
		t.Errorf("sim placement %v, %d devices", c.Placement, c.Ranks())
	}
	if _, err := r.Build(Point{Devices: 8, Nodes: 2, DevicesPerNode: 4, Replicas: 8, BatchPerDevice: 32, GlobalBatch: 256}); err == nil || !strings.Contains(err.Error(), "do not match parallelism.placement [1 2 3 4]") {
		t.Errorf("a point of 8 devices with placement 1+2+3+4: %v", err)
	}
	for _, tc := range []struct {
		pl, devices []int
		want        string
	}{
		{[]int{1, 5}, []int{6}, "parallelism.placement[1]: must be within 1 to 4 devices, got 5"},
		{[]int{1, 2}, []int{4}, "sweep.devices: must be the placement's 3 devices alone"},
	} {
		_, err := Load("tsubame3-resnet50-caffe2-verbs", Options{Edit: edit(tc.pl, tc.devices)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("placement %v, devices %v: %v, want %q", tc.pl, tc.devices, err, tc.want)
		}
	}
}
