package cmd

import "testing"

// BenchmarkValidateEngineReplay rebuilds the report of the committed
// validate --engine run (six batches, two and four workers, two
// transports, five rounds) from its log: the calibration, the 24
// simulations and the table, everything validate --engine computes after
// its measurements.
func BenchmarkValidateEngineReplay(b *testing.B) {
	for b.Loop() {
		if _, stderr, code := runCLI("validate", "--engine", "--engine-from", measurements+"/validate-engine-mlp-amd-replay.jsonl"); code != exitOK {
			b.Fatalf("exit %d: %s", code, stderr)
		}
	}
}
