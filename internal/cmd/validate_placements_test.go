package cmd

import "testing"

// TestValidateMeasuredPlacements compares the Pollux artifact's ResNet-50
// table (108 placements of g4dn.12xlarge nodes, 8 batches each) with the
// simulator, calibrated on its one-GPU rows (a golden file; validate's
// TestComparePlacementsSynthetic checks the comparison on a table of known
// parameters), and checks what it refuses.
func TestValidateMeasuredPlacements(t *testing.T) {
	const imagenet = "../../testdata/measurements/pollux-g4dn-imagenet.csv"
	out, stderr, code := runCLI("validate", "--measured", imagenet, "--system", "aws-g4dn", "--model", "resnet50", "--precision", "fp32")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkGolden(t, "validate-placements.golden", out)
	checkContains(t, "stderr", stderr, "read as placements (placement table (placement, local_bsz, step_time, sync_time)): 864 placement rows")
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"validate", "--measured", imagenet, "--model", "resnet50"}, exitUsage, "name the system it ran on with --system"},
		{[]string{"validate", "--measured", imagenet, "--system", "aws-g4dn"}, exitUsage, "name its model with --model"},
		{[]string{"validate", "--measured", imagenet, "--system", "aws-g4dn", "--model", "resnet50", "--calibration", "published"}, exitUsage, "is calibrated on its own rows of one device"},
		{[]string{"validate", "--measured", imagenet, "--system", "aws-g4dn", "--model", "resnet50", "--precision", "fp32", "--max-error", "1"}, exitRuntime, "% of the step time exceeds --max-error 1%"},
	} {
		_, stderr, code := runCLI(c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, c.code, stderr)
		}
		checkContains(t, "stderr", stderr, c.msg)
	}
}
