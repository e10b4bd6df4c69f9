package cmd

// The logs fit, plot and validate --measured read: their flags (--device,
// --model, --target), reading them, and what is said of each.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/fit/logs"
	"scaleplan/internal/tables"
	"scaleplan/model"
	"scaleplan/scenarios"
)

// logFormats names the logs fit reads, for the messages of fit and plot
// given none.
const logFormats = "bench logs, CSV, MLPerf, Horovod, tf_cnn_benchmarks, torchvision train.py, Hugging Face Trainer, Megatron-LM, DeepSpeed or torchtitan output, or Lightning's metrics.csv"

// readLogs reads the logs named (logs.ReadFiles), says what it read
// through report, and renames their devices (deviceRenamer), refusing a
// --device that renamed nothing.
func readLogs(names []string, report func(*logs.Log), rename *deviceRename) ([]*logs.Log, error) {
	lgs, err := logs.ReadFiles(names, func(lg *logs.Log) {
		report(lg)
		rename.Apply(lg)
	})
	var pe *fs.PathError
	switch {
	case errors.Is(err, logs.ErrRepeated):
		return nil, usageError{err}
	case errors.Is(err, fs.ErrNotExist) && errors.As(err, &pe) && slices.Contains(scenarios.Names(), pe.Path):
		return nil, fmt.Errorf("%w (%s is a shipped scenario; logs are read here: `scaleplan plot scaling|efficiency|breakdown|timeline` draws scenarios)", err, pe.Path)
	case err != nil:
		return nil, err
	}
	if err := rename.Check(); err != nil {
		return nil, usagef("%s: --device %w", rename.cmd, err)
	}
	return lgs, nil
}

// reportLog says on w which reader read a log and what it could not
// (tables.LogRead), each line after cmd.
func reportLog(w io.Writer, cmd string, lg *logs.Log) {
	printLines(w, cmd, tables.LogRead(lg))
}

// printLines prints each of lines on w after cmd and ": ".
func printLines(w io.Writer, cmd string, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(w, "%s: %s\n", cmd, l)
	}
}

// targetFlag is --target of fit and plot.
func targetFlag() cli.Flag {
	return &cli.StringFlag{Name: "target", Usage: "validation accuracy `ACC` (0.759, or 75.9 as a percentage) for the runs whose logs evaluate without naming a target (torchvision, Hugging Face Trainer, Lightning): each gives its steps to reach it"}
}

// targetUsed returns a usage error for a --target that no run of logs
// uses: only runs whose logs evaluate without naming a target have one
// (logs.Run.Evals), and a target given to other logs would do nothing.
func targetUsed(cmd string, target float64, lgs []*logs.Log) error {
	if target == 0 || logs.Evaluated(lgs) {
		return nil
	}
	return usagef("%s: --target applies to runs whose logs evaluate without naming a target (torchvision's train.py, the Hugging Face Trainer's eval_accuracy, Lightning's val_acc); none of these logs has one", cmd)
}

// parseTarget reads --target: a fraction in (0, 1], or a percentage in
// (1, 100]; "" is 0, none.
func parseTarget(cmd, s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	switch {
	case err != nil || !(v > 0) || v > 100:
		return 0, usagef("%s: --target %q: want an accuracy such as 0.759 or 75.9", cmd, s)
	case v > 1:
		v /= 100
	}
	return v, nil
}

// deviceFlag is --device of fit and plot.
func deviceFlag() cli.Flag {
	return &cli.StringFlag{Name: "device", Usage: "device kind `NAME` for logs that only say GPU or CPU, or nothing (Horovod, tf_cnn_benchmarks, torchvision, Hugging Face Trainer, Megatron-LM, DeepSpeed, Lightning); or FROM=TO[,FROM=TO...] to rename the devices a log names (e.g. 'V100=v100-sxm2-16gb')"}
}

// deviceRename is what --device does to the records of the logs read
// (logs.Rename), with the command it is of for its messages.
type deviceRename struct {
	cmd string
	*logs.Rename
}

// deviceRenamer parses --device spec of cmd; an empty spec changes nothing.
func deviceRenamer(cmd, spec string) (*deviceRename, error) {
	r, err := logs.ParseRename(spec)
	if err != nil {
		return nil, usagef("%s: --device %w", cmd, err)
	}
	return &deviceRename{cmd, r}, nil
}

// modelFlag is --model of fit and validate --measured.
func modelFlag() cli.Flag {
	return &cli.StringFlag{Name: "model", Usage: "model profile `NAME` of the records whose log names no model (Lightning, DeepSpeed, Megatron-LM), so that what is fitted to them is of that model"}
}

// nameModel sets the model of every record and run of logs that names
// none to name (logs.NameModel). It returns a usage error for a name the profiles lack
// and for logs whose records all name their model, as --device does for
// logs that all name their device.
func nameModel(cmd, name string, lgs []*logs.Log, prof *model.Profiles) error {
	if name == "" {
		return nil
	}
	if _, err := prof.Model(name); err != nil {
		return usagef("%s: --model: %v", cmd, err)
	}
	if logs.NameModel(lgs, name) == 0 {
		return usagef("%s: --model %s: every record of these logs names its model", cmd, name)
	}
	return nil
}
