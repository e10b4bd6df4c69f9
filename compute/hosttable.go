package compute

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"scaleplan/internal/units"
)

// hostQuantity is one quantity of a host table: its name, the HostCosts
// field it sets (nil: written for the record, not used by the model) and
// whether a table must give it.
type hostQuantity struct {
	name     string
	field    func(*HostCosts) *units.Seconds
	required bool
}

// hostQuantities are the quantities scripts/torchhost.py writes, in its
// order.
var hostQuantities = []hostQuantity{
	{"loop", nil, false},
	{"dispatch", func(h *HostCosts) *units.Seconds { return &h.CPUOp }, false},
	{"autograd_record", func(h *HostCosts) *units.Seconds { return &h.AutogradRecord }, true},
	{"module_call", func(h *HostCosts) *units.Seconds { return &h.ModuleCall }, true},
	{"autocast", nil, false},
	{"foreach_call", nil, false},
	{"foreach_tensor_cpu", nil, false},
	{"sgd_step", nil, false},
	{"sgd_tensor", func(h *HostCosts) *units.Seconds { return &h.SGDTensor }, true},
	{"sgd_foreach_calls", nil, false},
	{"adam_step", nil, false},
	{"adam_tensor", func(h *HostCosts) *units.Seconds { return &h.AdamTensor }, true},
	{"adam_foreach_calls", nil, false},
	{"scaler_unscale", nil, false},
	{"scaler_tensor", func(h *HostCosts) *units.Seconds { return &h.ScalerTensor }, true},
	{"cuda_op", func(h *HostCosts) *units.Seconds { return &h.Kernel }, false},
	{"cuda_sync", func(h *HostCosts) *units.Seconds { return &h.Sync }, false},
	{"cuda_event", func(h *HostCosts) *units.Seconds { return &h.Event }, false},
}

// Limits of a host table: its lines, their length, and the largest cost
// it may give, microseconds (a second per operator is no host's). Most of
// its figures are differences of timings (autograd's record, a module
// call, the costs per tensor), which the timings' noise can leave a
// little below 0: down to −hostNoise µs such a figure counts as 0.
const (
	maxHostLines     = 1000
	maxHostLineBytes = 4096
	maxHostCost      = 1e6
	hostNoise        = 1.0
)

// ReadHostFile reads the host table at path (ReadHostTable), its errors
// prefixed with the path.
func ReadHostFile(path string) (HostCosts, error) {
	f, err := os.Open(path)
	if err != nil {
		return HostCosts{}, err
	}
	defer f.Close()
	h, err := ReadHostTable(f)
	if err != nil {
		return HostCosts{}, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// ReadHostTable reads a table of eager PyTorch's host costs as
// scripts/torchhost.py writes it: lines starting with # are comments, then
// the header "quantity,value" and one "name,value" line per quantity,
// microseconds. The CPU quantities are required (dispatch, a CPU
// operator's call, sets HostCosts.CPUOp where given); cuda_op, cuda_sync
// and cuda_event, which the script measures on a host with a CUDA device,
// set HostCosts.Kernel, Sync and Event (left 0, the published figures or
// none, where the table has none). An unknown or repeated quantity, a value that is not
// a number from 0 to 10^6 µs where the model uses it (down to −1 µs, the
// timings' noise, counts as 0), or a missing required one is an error
// naming its line.
func ReadHostTable(r io.Reader) (HostCosts, error) {
	var h HostCosts
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxHostLineBytes)
	line, header := 0, false
	for sc.Scan() {
		line++
		if line > maxHostLines {
			return HostCosts{}, fmt.Errorf("more than %d lines: not a host table", maxHostLines)
		}
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if !header {
			if text != "quantity,value" {
				return HostCosts{}, fmt.Errorf("line %d: %q: want the header quantity,value (scripts/torchhost.py's table)", line, cutQuote(text))
			}
			header = true
			continue
		}
		name, val, ok := strings.Cut(text, ",")
		if !ok {
			return HostCosts{}, fmt.Errorf("line %d: %q: want quantity,value", line, cutQuote(text))
		}
		if seen[name] {
			return HostCosts{}, fmt.Errorf("line %d: %s given twice", line, name)
		}
		seen[name] = true
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return HostCosts{}, fmt.Errorf("line %d: %s %q: want a number of microseconds", line, cutQuote(name), cutQuote(val))
		}
		if err := h.set(name, v); err != nil {
			return HostCosts{}, fmt.Errorf("line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return HostCosts{}, fmt.Errorf("line %d: longer than %d bytes: not a host table", line+1, maxHostLineBytes)
		}
		return HostCosts{}, err
	}
	if !header {
		return HostCosts{}, errors.New("no header quantity,value: not a host table (scripts/torchhost.py writes one)")
	}
	if err := missingQuantities(seen); err != nil {
		return HostCosts{}, err
	}
	return h, nil
}

// HostCostsFrom returns the host costs of quantities, microseconds by name
// as a host table gives them (a bench log header's machine.host_costs):
// the quantities, ranges and required ones of ReadHostTable, an error
// naming the quantity.
func HostCostsFrom(quantities map[string]float64) (HostCosts, error) {
	var h HostCosts
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(quantities)) {
		if err := h.set(name, quantities[name]); err != nil {
			return HostCosts{}, err
		}
		seen[name] = true
	}
	if err := missingQuantities(seen); err != nil {
		return HostCosts{}, err
	}
	return h, nil
}

// set sets the field of quantity name to v microseconds: an error for an
// unknown name, a value that is not a finite number, or one outside 0 to
// maxHostCost where the model uses it.
func (h *HostCosts) set(name string, v float64) error {
	i := slices.IndexFunc(hostQuantities, func(q hostQuantity) bool { return q.name == name })
	if i < 0 {
		return fmt.Errorf("unknown quantity %q: want one of %s", cutQuote(name), hostNames())
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s %v: want a number of microseconds", name, v)
	}
	q := hostQuantities[i]
	if q.field == nil {
		return nil
	}
	if v < -hostNoise || v > maxHostCost {
		return fmt.Errorf("%s %g µs: want 0 to %g µs", name, v, float64(maxHostCost))
	}
	*q.field(h) = units.Seconds(max(v, 0)) * units.Microsecond
	return nil
}

// missingQuantities returns an error naming the required quantities not
// in seen, nil when none is missing.
func missingQuantities(seen map[string]bool) error {
	var missing []string
	for _, q := range hostQuantities {
		if q.required && !seen[q.name] {
			missing = append(missing, q.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	return nil
}

// hostNames lists the quantities a host table may give.
func hostNames() string {
	names := make([]string, len(hostQuantities))
	for i, q := range hostQuantities {
		names[i] = q.name
	}
	return strings.Join(names, ", ")
}

// cutQuote returns s cut to 40 bytes for a message.
func cutQuote(s string) string {
	if len(s) <= 40 {
		return s
	}
	return s[:40] + "…"
}
