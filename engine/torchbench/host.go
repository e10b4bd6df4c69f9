package torchbench

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"scaleplan/internal/procout"
)

// hostScript is torchhost.py, the host's cost per operator of eager
// PyTorch (scripts/torchhost.py is a link to it).
//
//go:embed torchhost.py
var hostScript []byte

// HostDevices are the values of HostOptions.Device.
var HostDevices = []string{"auto", "cpu", "cuda"}

// HostOptions configures HostTable.
type HostOptions struct {
	// Python is the interpreter to try first (FindPython).
	Python string
	// Device is auto (CUDA where torch sees a device), cpu or cuda
	// (HostDevices); "" is auto.
	Device string
	// Rounds is the script's --rounds: the medians of which the table
	// keeps the least; 0 is the script's default (9).
	Rounds int
}

// HostTable runs the embedded torchhost.py with opt on the interpreter
// FindPython finds and returns its table (CSV of microseconds, headed by
// comment lines): the host's cost per operator of eager PyTorch, and on a
// CUDA device its small operator's dispatch and launch, a
// synchronisation and a timing event. The script's errors name themselves, its last line
// quoted.
func HostTable(ctx context.Context, opt HostOptions) ([]byte, error) {
	dev := opt.Device
	if dev == "" {
		dev = "auto"
	}
	if !slices.Contains(HostDevices, dev) {
		return nil, fmt.Errorf("torchbench: host device %q: want one of %s", dev, strings.Join(HostDevices, ", "))
	}
	if opt.Rounds < 0 || opt.Rounds > 100 {
		return nil, fmt.Errorf("torchbench: host rounds %d: want 1 to 100, or 0 for the script's 9", opt.Rounds)
	}
	python, err := FindPython(opt.Python)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "torchhost-")
	if err != nil {
		return nil, fmt.Errorf("torchbench: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "torchhost.py")
	if err := os.WriteFile(path, hostScript, 0o644); err != nil {
		return nil, fmt.Errorf("torchbench: %w", err)
	}
	args := []string{path, "--device", dev}
	if opt.Rounds > 0 {
		args = append(args, "--rounds", strconv.Itoa(opt.Rounds))
	}
	cmd := exec.CommandContext(ctx, python, args...)
	// One thread and passive waits, as the script's timings assume.
	cmd.Env = append(os.Environ(), "OMP_WAIT_POLICY=PASSIVE", "OMP_NUM_THREADS=1")
	var out bytes.Buffer
	tail := &procout.Tail{Max: 4096}
	cmd.Stdout, cmd.Stderr = &out, tail
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("torchbench: host table: %w", ctx.Err())
		}
		return nil, fmt.Errorf("torchbench: %s torchhost.py --device %s: %w: %s", filepath.Base(python), dev, err, lastLine(tail.String()))
	}
	if out.Len() == 0 {
		return nil, errors.New("torchbench: torchhost.py wrote no table")
	}
	return out.Bytes(), nil
}
