// Command mlperfepochs extracts the epochs to target of MLPerf Training
// submissions against their global batch, from the public results
// repositories (github.com/mlcommons/training_results_vX.Y), and fits the
// epochs-to-target law to them (docs/mlperf-epochs.md).
//
//	go run ./scripts/mlperfepochs extract -out internal/mlperfepochs \
//	    v3.1=/tmp/training_results_v3.1@d06288b2bd675a9d88e0e6181f5bb5626b71ec19 ...
//	go run ./scripts/mlperfepochs fit -data internal/mlperfepochs \
//	    -calibration scenarios/calibrations/mlperf-epochs.yaml -charts docs/images -table docs/mlperf-epochs-table.md
//
// extract writes one table per benchmark (resnet, bert, ssd, retinanet,
// maskrcnn), a row per submission (round, submitter, system, global
// batch, optimizer) with the mean, spread and range of its runs' epochs
// to target and the repository, commit and path of its logs. fit fits
// E(B) = E_min·(1 + B/B_noise) per benchmark and optimizer family with a
// leave-one-round-out evaluation, and writes a calibration, charts and a
// Markdown table.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mlperfepochs:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("want a command: extract or fit")
	}
	switch args[0] {
	case "extract":
		return runExtract(args[1:], stdout)
	case "fit":
		return runFit(args[1:], stdout)
	}
	return fmt.Errorf("command %q: want extract or fit", args[0])
}

func runExtract(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("extract", flag.ContinueOnError)
	out := fs.String("out", "internal/mlperfepochs", "directory of the tables")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var srcs []source
	for _, a := range fs.Args() {
		s, err := parseSource(a)
		if err != nil {
			return err
		}
		srcs = append(srcs, s)
	}
	if len(srcs) == 0 {
		return fmt.Errorf("extract: want at least one ROUND=DIR@COMMIT")
	}
	slices.SortStableFunc(srcs, func(a, b source) int { return compareRounds(a.Round, b.Round) })
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for _, b := range benchmarks {
		var all []*Submission
		for _, s := range srcs {
			subs, err := extract(s, b)
			if err != nil {
				return err
			}
			all = append(all, subs...)
		}
		p := filepath.Join(*out, b.Name+".csv")
		if err := writeFileWith(p, func(w io.Writer) error { return writeCSV(w, all) }); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %d submissions\n", p, len(all))
	}
	return nil
}

// compareRounds orders "v0.6" before "v0.7" before "v1.0" before "v4.1".
func compareRounds(a, b string) int {
	var am, an, bm, bn int
	fmt.Sscanf(strings.TrimPrefix(a, "v"), "%d.%d", &am, &an)
	fmt.Sscanf(strings.TrimPrefix(b, "v"), "%d.%d", &bm, &bn)
	if am != bm {
		return am - bm
	}
	if an != bn {
		return an - bn
	}
	return strings.Compare(a, b)
}

func writeFileWith(p string, write func(io.Writer) error) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
