package cmd

import (
	"fmt"
	"math"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/internal/tables"
	"scaleplan/plan"
	"scaleplan/predict"
	"scaleplan/sim"
	"scaleplan/validate"
)

// exclusiveModes is the usage error of validate given more than one of
// its modes.
const exclusiveModes = "validate: --measured, --profile, --engine, --cases and --llm are exclusive"

// validateCommand is `scaleplan validate`.
func validateCommand() *cli.Command {
	return &cli.Command{
		Name:      "validate",
		Usage:     "predictions against published measurements, with error %",
		ArgsUsage: " ",
		Description: "Runs validation cases, each a published figure (a time to train, samples/s, a step\n" +
			"or epoch time, or a fitted v0 or t) and the scenario configuration that predicts it,\n" +
			"and prints predicted against published with the error, then the mean absolute error\n" +
			"over the independent cases: those not used to calibrate (calibrates: true) and not\n" +
			"used to choose a parameter (tuned). A bound (\"< 2 h\") holds or not. Without --cases it\n" +
			"runs the built-in cases: every figure of the seeds that a scenario can predict and\n" +
			"published MLPerf Training results of catalogue systems (docs/validation.md).\n" +
			"--max-error makes it exit 1 when the mean absolute error is larger, a bound does not\n" +
			"hold or a case fails, for CI.\n\n" +
			"Examples:\n" +
			"   scaleplan validate\n" +
			"   scaleplan validate --max-error 30\n" +
			"   scaleplan validate --cases mycases.yaml --format csv\n\n" +
			"With --engine it closes the calibration loop on this machine instead: it measures\n" +
			"the reference engine with one worker at each --engine-batch, for each count W of\n" +
			"--engine-workers on the cores each of the W will have and beside W - 1\n" +
			"independent copies of itself (counts with more workers than cores: that many\n" +
			"workers in step over each transport, which meet once a step and exchange nothing\n" +
			"else; --engine-calibration each gives them the measurement of a worker per core,\n" +
			"one measures one worker for all, --engine-threads its cores), fits v0 and t to\n" +
			"each measurement, takes the spread of its steps (none for workers in step, which\n" +
			"waited for the slowest), probes the in-process and TCP links, simulates\n" +
			"--engine-workers workers sharing this machine's cores, each step waiting for the\n" +
			"slowest of them, measures them, and prints predicted against measured samples/s\n" +
			"(docs/validation.md).\n" +
			"--max-error then bounds its mean error at batch >= 32.\n" +
			"Every configuration is measured in --engine-rounds alternating rounds (4 with the\n" +
			"pure-Go build, 12 with OpenBLAS, whose rounds take a third of the time), after\n" +
			"--engine-warm-rounds (default 1) set aside while the process warms up.\n" +
			"On a machine of two CPUs every measurement is made while they share a cache, as\n" +
			"a probe before and after it says (--engine-core-guard; see `scaleplan bench\n" +
			"throughput --help`), and the report says how often it waited or measured again.\n\n" +
			"   OPENBLAS_CORETYPE=SkylakeX scaleplan validate --engine\n\n" +
			"--engine-out writes what the run measured, its link probes included, and\n" +
			"--engine-from rebuilds the report of a run from that log with this build's\n" +
			"simulator, measuring nothing.\n\n" +
			"   scaleplan validate --engine --engine-from run.jsonl\n\n" +
			"With --measured it compares logs (any format fit reads) with the catalogue instead:\n" +
			"each measurement of one device (scaleplan bench, engine/torchbench on a GPU) against\n" +
			"the simulator's samples/s for one device of that kind from the roofline alone (no\n" +
			"calibration), and each model and precision's largest batch that ran and first\n" +
			"out-of-memory against the memory model's largest batch (docs/validation.md).\n" +
			"Where one device of two kinds ran the same model, precision and variant, a table\n" +
			"compares the kinds: the speed of one over the other at the largest batch both ran,\n" +
			"measured and predicted.\n" +
			"With --system, measurements of several devices (Horovod, torchvision, the Hugging\n" +
			"Face Trainer on a node or a cluster) are predicted on whole nodes of that system,\n" +
			"with its links and its default transports (--transport, --intra-transport name\n" +
			"others), and synthetic input; without it they are left out. --precision names the\n" +
			"precision where a log does not.\n" +
			"An nccl-tests log's tests are predicted size by size on --system's links, and a\n" +
			"table gives their time error by band of message sizes, where the collective\n" +
			"model runs too fast or too slow (docs/validation-collectives.md).\n" +
			"With --calibration (a fit --out file, or published), a measurement whose model,\n" +
			"device and precision the file measured is predicted by its law instead, and one\n" +
			"the law was fitted to is marked and left out of the error.\n" +
			"--max-error then bounds the mean absolute error of samples/s.\n\n" +
			"   scaleplan validate --measured testdata/measurements/h200-2026-11-26/resnet50.jsonl\n" +
			"   scaleplan validate --measured horovod.log --device GPU=v100-sxm2-16gb --precision fp32 --system dgx1\n" +
			"   scaleplan validate --measured node.log --measured cluster.log --system mycluster --calibration calib.yaml",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "cases", Usage: "validation case `FILE` (YAML; docs/validation.md); default the built-in cases"},
			&cli.Float64Flag{Name: "max-error", Usage: "exit 1 if the mean absolute error exceeds `PCT` percent"},
			&cli.IntFlag{Name: "steps", Value: sim.DefaultSteps, Usage: "optimizer steps to simulate per configuration, `N` ≥ 2"},
			&cli.BoolFlag{Name: "llm", Usage: "published LLM training runs (Megatron-LM, BLOOM, Llama 3) against plan --llm's step model instead of the cases"},
			measuredFlag(),
			formatFlag(),
		}, append(append(measuredFlags(), profileFlags()...), validateEngineFlags()...)...),
		Action: runValidate,
	}
}

func runValidate(c *cli.Context) error {
	format := c.String("format")
	if err := checkFormat(format); err != nil {
		return err
	}
	if c.NArg() > 0 {
		return usagef("validate takes no argument, got %q; give a case file with --cases", c.Args().First())
	}
	if err := checkOutputs("validate", flagPaths(c.String, "engine-out", "plot"), commandInputs(c, "", nil)); err != nil {
		return err
	}
	measured := c.IsSet("measured")
	for _, f := range measuredFlags() {
		if name := f.Names()[0]; c.IsSet(name) && !measured {
			return usagef("validate: --%s applies to --measured logs; give it with --measured", name)
		}
	}
	if c.IsSet("carry-to") && !c.IsSet("profile") {
		return usagef("validate: --carry-to applies to --profile; give it with --profile")
	}
	if c.IsSet("profile") {
		if c.IsSet("cases") || measured || c.IsSet("llm") || c.Bool("engine") {
			return usagef(exclusiveModes)
		}
		return runValidateProfiles(c, format)
	}
	if c.Bool("engine") {
		if c.IsSet("cases") || measured || c.IsSet("llm") {
			return usagef(exclusiveModes)
		}
		if c.IsSet("steps") {
			return usagef("validate: --steps applies to the published cases; --engine simulates the engine's own configurations")
		}
		return runValidateEngine(c)
	}
	for _, f := range validateEngineFlags() {
		if name := f.Names()[0]; name != "engine" && c.IsSet(name) {
			return usagef("validate: --%s applies to --engine; give it with --engine", name)
		}
	}
	if n := c.Int("steps"); n < 2 || n > sim.MaxSteps {
		return usagef("validate: --steps %d: want 2 to %d", n, sim.MaxSteps)
	}
	maxErr := c.Float64("max-error")
	if c.IsSet("max-error") && !(maxErr >= 0 && maxErr < math.Inf(1)) {
		return usagef("validate: --max-error %v: want a percentage >= 0", maxErr)
	}
	if c.Bool("llm") {
		if c.IsSet("cases") || measured || c.IsSet("steps") {
			return usagef("%s; --steps applies to the cases", exclusiveModes)
		}
		return runValidateLLM(c, format, maxErr)
	}
	if measured {
		if c.IsSet("cases") {
			return usagef(exclusiveModes)
		}
		return runValidateMeasured(c, maxErr)
	}
	return runValidateCases(c, format, maxErr)
}

// runValidateCases is `validate [--cases FILE]`: the cases against their
// predictions, and --max-error (maxErr, in percent) applied to them.
func runValidateCases(c *cli.Context, format string, maxErr float64) error {
	cases := validate.BuiltinCases()
	if f := c.String("cases"); f != "" {
		var err error
		if cases, err = validate.ReadCasesFile(f); err != nil {
			return err
		}
	}
	rep := validate.CompareCases(cases, validate.Options{Scenario: scenarioOptions(c), Predict: predict.Options{Steps: c.Int("steps")}})
	ts, notes, lines := tables.Validation(rep, format)
	if err := tables.WriteReport(c.App.Writer, format, ts, notes, lines); err != nil {
		return err
	}
	if c.IsSet("max-error") && rep.Exceeds(maxErr/100) {
		var why []string
		if rep.MAE > maxErr/100 {
			why = append(why, fmt.Sprintf("mean absolute error %.1f%% exceeds --max-error %g%%", 100*rep.MAE, maxErr))
		}
		if rep.BoundsHeld < rep.Bounds {
			why = append(why, fmt.Sprintf("%d of %d bounds do not hold", rep.Bounds-rep.BoundsHeld, rep.Bounds))
		}
		if rep.Failed > 0 {
			why = append(why, fmt.Sprintf("%d cases failed", rep.Failed))
		}
		return fmt.Errorf("validate: %s", strings.Join(why, "; "))
	}
	return nil
}

// runValidateLLM is `validate --llm`: the published LLM runs against
// plan --llm's step model, and --max-error (maxErr, in percent) applied
// to their mean absolute error.
func runValidateLLM(c *cli.Context, format string, maxErr float64) error {
	v, err := plan.ValidateLLM(nil)
	if err != nil {
		return err
	}
	if err := tables.LLMValidation(c.App.Writer, format, v); err != nil {
		return err
	}
	if c.IsSet("max-error") && v.MAE > maxErr/100 {
		return fmt.Errorf("validate --llm: mean absolute error %.1f%% exceeds --max-error %g%%", 100*v.MAE, maxErr)
	}
	return nil
}
