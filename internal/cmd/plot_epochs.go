package cmd

import (
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/internal/mlperfepochs"
	"scaleplan/plots"
)

// epochsCharts draws `scaleplan plot epochs`: the MLPerf submissions of
// --benchmark against global batch with the law fitted to each optimizer
// family (or --optimizer's), as scripts/mlperfepochs draws them, saying
// on stderr what each group holds and what was fitted.
func epochsCharts(c *cli.Context, o *plotOptions, args []string) ([]*plots.Chart, error) {
	if len(args) > 0 {
		return nil, usagef("plot epochs: unexpected argument %q (the submissions come from --epochs FILE or the built-in table)", args[0])
	}
	valid := strings.Join(mlperfepochs.Names(), ", ")
	if o.benchmark == "" {
		return nil, usagef("plot epochs: no --benchmark given (valid: %s)", valid)
	}
	if _, ok := mlperfepochs.Subjects[o.benchmark]; !ok {
		return nil, usagef("plot epochs: unknown benchmark %q (valid: %s)", o.benchmark, valid)
	}
	rows, src, err := readEpochsTable(o.benchmark, o.epochs)
	if err != nil {
		return nil, fmt.Errorf("plot epochs: %w", err)
	}
	groups, err := mlperfepochs.Analyse(o.benchmark, rows)
	if err != nil {
		return nil, fmt.Errorf("plot epochs: %s: %w", src, err)
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("plot epochs: %s holds no closed-division submission", src)
	}
	groups, err = pickOptimizer(groups, o.optimizer, src)
	if err != nil {
		return nil, err
	}
	var out []*plots.Chart
	for _, g := range groups {
		describeEpochsGroup(c.App.ErrWriter, g)
		ch, err := plots.Epochs(plots.EpochsFromGroup(g))
		if err != nil {
			return nil, fmt.Errorf("plot epochs: %s %s: %w", g.Bench, g.Optimizer, err)
		}
		out = append(out, ch)
	}
	return out, nil
}

// readEpochsTable reads the table of bench from file, or the built-in one
// when file is "", and returns its rows and its name for messages.
func readEpochsTable(bench, file string) ([]mlperfepochs.Row, string, error) {
	if file == "" {
		data, err := mlperfepochs.Read(bench)
		if err != nil {
			return nil, "", err
		}
		name := path.Join(mlperfepochs.Dir, bench+".csv") + " (built in)"
		rows, err := mlperfepochs.ReadRows(strings.NewReader(string(data)), name)
		return rows, name, err
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, "", fmt.Errorf("--epochs: %w", err)
	}
	defer f.Close()
	rows, err := mlperfepochs.ReadRows(f, file)
	return rows, file, err
}

// pickOptimizer keeps the group of optimizer's family, or every group
// when optimizer is "".
func pickOptimizer(groups []*mlperfepochs.Group, optimizer, src string) ([]*mlperfepochs.Group, error) {
	if optimizer == "" {
		return groups, nil
	}
	var names []string
	for _, g := range groups {
		if g.Optimizer == mlperfepochs.OptimizerFamily(optimizer) {
			return []*mlperfepochs.Group{g}, nil
		}
		names = append(names, g.Optimizer)
	}
	return nil, usagef("plot epochs: optimizer %q: %s has none of its submissions (valid: %s)", optimizer, src, strings.Join(names, ", "))
}

// describeEpochsGroup writes a line on the group: its submissions and
// batches, and the fitted E_min and B_noise with B_noise's interval,
// or why it was not fitted.
func describeEpochsGroup(w io.Writer, g *mlperfepochs.Group) {
	bs := mlperfepochs.Distinct(g.Batches())
	fmt.Fprintf(w, "plot: epochs of %s %s: %d submissions, %d batches %s to %s", g.Bench, g.Optimizer, len(g.Rows), len(bs), num4(bs[0]), num4(bs[len(bs)-1]))
	if g.Fit == nil {
		fmt.Fprintf(w, ": not fitted (want %d distinct batches), points only\n", mlperfepochs.MinBatches)
		return
	}
	f := g.Fit.Steps
	fmt.Fprintf(w, "; E_min %s %s, B_noise %s", num4(g.Fit.EMin), g.Subject.Unit(), num4(f.BNoise))
	if iv := f.BNoiseInterval; !math.IsNaN(iv[0]) {
		fmt.Fprintf(w, " [%s, %s] (%g %%)", num4(iv[0]), num4(iv[1]), 100*f.Level)
	}
	fmt.Fprintf(w, ", %d of %d points fitted\n", f.Used, len(g.Rows))
}

// num4 is v to 4 significant digits, or rounded to a whole number from
// 10,000 up (a batch, B_noise, BERT's samples), never in e-notation.
func num4(v float64) string {
	if math.Abs(v) >= 1e4 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
