package cmd

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateProfile checks validate --profile against the profile file
// itself: the measured norms and products are the sums of its batch norm
// and product operators' self device time, the step is its step, and the
// carried step is the step times the device-time ratio; and that a
// profile without its bench log, an unknown --carry-to device, --carry-to
// alone and --profile with --measured are usage or input errors naming
// what is wrong.
func TestValidateProfile(t *testing.T) {
	const pf = "../../testdata/measurements/h200-2026-11-30-profile/resnet50-tf32-prof.profile.json"
	out, stderr, code := runCLI("validate", "--profile", pf, "--carry-to", "h100-sxm5-80gb", "--format", "json")
	if code != 0 {
		t.Fatalf("validate --profile: exit %d: %s", code, stderr)
	}
	var got struct {
		Profiles []map[string]any `json:"profiles"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Profiles) != 1 {
		t.Fatalf("validate --profile: %v, %d rows:\n%s", err, len(got.Profiles), out)
	}
	row := got.Profiles[0]
	data, err := os.ReadFile(pf)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Profiles []struct {
			StepTime float64 `json:"step_time_s"`
			Ops      []struct {
				Name       string  `json:"name"`
				SelfDevice float64 `json:"self_device_s"`
			} `json:"ops"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	var norms, products float64
	for _, o := range file.Profiles[0].Ops {
		switch o.Name {
		case "aten::cudnn_batch_norm", "aten::cudnn_batch_norm_backward":
			norms += o.SelfDevice
		case "aten::cudnn_convolution", "aten::convolution_backward", "aten::mm", "aten::addmm":
			products += o.SelfDevice
		}
	}
	near := func(key string, want, rel float64) {
		t.Helper()
		v, ok := row[key].(float64)
		if !ok || math.Abs(v-want) > 1e-5+rel*math.Abs(want) {
			t.Errorf("%s = %v, want %.6g", key, row[key], want)
		}
	}
	near("norms_measured_s", norms, 1e-4)
	near("products_measured_s", products, 1e-4)
	near("step_s", file.Profiles[0].StepTime, 1e-4)
	ratio, _ := row["device_time_ratio"].(float64)
	// The ratio is printed to three decimals: half a unit of the last of
	// 1.2 is 4e-4 of it.
	near("carried_step_s", file.Profiles[0].StepTime*ratio, 5e-4)
	if row["carried_to"] != "h100-sxm5-80gb" || !(ratio > 1) {
		t.Errorf("carried to %v at %v: want h100-sxm5-80gb, a ratio above 1", row["carried_to"], ratio)
	}

	dir := t.TempDir()
	alone := filepath.Join(dir, "alone.profile.json")
	if err := os.WriteFile(alone, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--profile", alone}, "alone.jsonl"},
		{[]string{"--profile", pf, "--carry-to", "h1000"}, "h100-sxm5-80gb"},
		{[]string{"--carry-to", "h100-sxm5-80gb"}, "--carry-to applies to --profile"},
		{[]string{"--profile", pf, "--measured", pf}, "are exclusive"},
	} {
		_, stderr, code := runCLI(append([]string{"validate"}, tc.args...)...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("validate %s: exit %d, %q: want an error naming %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}
