package logs

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"scaleplan/internal/benchlog"
)

// ErrRepeated is returned, wrapped, by ReadFiles for a file named twice.
var ErrRepeated = errors.New("its records would count twice")

// ReadFiles reads the logs named, in order, calling each (if not nil) on
// every log as soon as it is read. A file named twice, in any spelling
// that cleans to one path, is an error wrapping ErrRepeated, given
// before any file is read; a file that cannot be read is ReadFile's
// error.
func ReadFiles(names []string, each func(*Log)) ([]*Log, error) {
	seen := map[string]string{}
	for _, name := range names {
		if prev, ok := seen[filepath.Clean(name)]; ok {
			return nil, fmt.Errorf("%s is given twice (also as %s): %w", name, prev, ErrRepeated)
		}
		seen[filepath.Clean(name)] = name
	}
	var lgs []*Log
	for _, name := range names {
		lg, err := ReadFile(name)
		if err != nil {
			return nil, err
		}
		if each != nil {
			each(lg)
		}
		lgs = append(lgs, lg)
	}
	return lgs, nil
}

// Rename renames the devices of the records of logs: a name alone
// becomes the device of the records whose log says only GPU or CPU (or
// nothing, Unnamed); FROM=TO pairs, separated by commas, rename each
// FROM (ignoring case) to its TO. It remembers what it changed and
// which devices it saw, so that Check can refuse a spec that changed
// nothing. The zero Rename (and a nil one) renames nothing.
type Rename struct {
	spec string            // spec without "=": the device of unnamed records
	to   map[string]string // lower-case FROM → TO; nil without pairs
	from map[string]string // lower-case FROM → FROM as given
	used map[string]bool   // FROMs (or spec) that renamed a record
	seen map[string]bool   // devices the records named, as they did
}

// ParseRename parses a rename spec, a device NAME or FROM=TO pairs
// separated by commas; "" renames nothing.
func ParseRename(spec string) (*Rename, error) {
	d := &Rename{spec: spec, used: map[string]bool{}, seen: map[string]bool{}}
	if spec == "" || !strings.Contains(spec, "=") {
		return d, nil
	}
	d.to, d.from = map[string]string{}, map[string]string{}
	for _, pair := range strings.Split(spec, ",") {
		from, name, ok := strings.Cut(pair, "=")
		from, name = strings.TrimSpace(from), strings.TrimSpace(name)
		if !ok || from == "" || name == "" || strings.Contains(name, "=") {
			return nil, fmt.Errorf("%q: want a device NAME, or FROM=TO pairs separated by commas, such as 'V100=v100-sxm2-16gb'", spec)
		}
		d.to[strings.ToLower(from)], d.from[strings.ToLower(from)] = name, from
	}
	return d, nil
}

// renamed returns what device becomes and the key of d.used it counts
// under; the key is "" when d leaves device as it is.
func (d *Rename) renamed(device string) (string, string) {
	switch {
	case d.to != nil:
		if name, ok := d.to[strings.ToLower(device)]; ok {
			return name, strings.ToLower(device)
		}
	case d.spec != "" && Unnamed(device):
		return d.spec, d.spec
	}
	return device, ""
}

// Apply renames the devices of lg's records, and of its runs' platforms
// (but MLPerf's, which name systems).
func (d *Rename) Apply(lg *Log) {
	if d == nil || d.spec == "" {
		return
	}
	for i := range lg.Records {
		r := &lg.Records[i]
		d.seen[r.Device] = true
		if name, key := d.renamed(r.Device); key != "" {
			d.used[key] = true
			r.Device = name
		}
	}
	if lg.Format == MLPerf || lg.Format == MLPerfV06 {
		return // MLPerf's platforms are systems' names, left as logged
	}
	for i := range lg.Runs {
		// A run's platform is "NxKIND" where its log gave a device kind
		// (torchvision, Hugging Face Trainer, Megatron-LM, torchtitan; "?"
		// where it gave none): it names the kind as the records now do.
		r := &lg.Runs[i]
		n, kind, ok := strings.Cut(r.Device, "x")
		if !ok || n == "" || strings.Trim(n, "0123456789") != "" {
			continue
		}
		if kind == "?" {
			kind = ""
		}
		if name, key := d.renamed(kind); key != "" {
			r.Device = n + "x" + name
		}
	}
}

// Check returns an error if the spec renamed no record of the logs
// applied to, or one of its FROMs none: a misspelt device would change
// nothing and say nothing.
func (d *Rename) Check() error {
	if d == nil {
		return nil
	}
	delete(d.seen, "") // records of no device (steps to target) are not worth naming
	devices := slices.Sorted(maps.Keys(d.seen))
	switch {
	case d.spec == "" || len(d.seen) == 0:
		return nil
	case d.to == nil && !d.used[d.spec]:
		return fmt.Errorf("%q: every record names its device (%s); rename one with FROM=TO", d.spec, strings.Join(devices, ", "))
	}
	for _, from := range slices.Sorted(maps.Keys(d.to)) {
		if !d.used[from] {
			return fmt.Errorf("%q: no record is on device %q (the records' devices: %s)", d.spec, d.from[from], strings.Join(devices, ", "))
		}
	}
	return nil
}

// Unnamed reports whether a log named device only by its kind (GPU, CPU)
// or not at all: what a Rename of a name alone names.
func Unnamed(device string) bool { return device == "" || device == "GPU" || device == "CPU" }

// NameModel sets the model of every record (but headers and links) and
// every run of lgs that names none to name, and returns how many it set.
func NameModel(lgs []*Log, name string) int {
	named := 0
	for _, lg := range lgs {
		for i := range lg.Records {
			if r := &lg.Records[i]; r.Model == "" && r.Kind != benchlog.KindHeader && r.Kind != benchlog.KindLink {
				r.Model = name
				named++
			}
		}
		for i := range lg.Runs {
			if r := &lg.Runs[i]; r.Model == "" {
				r.Model = name
				named++
			}
		}
	}
	return named
}

// Evaluated reports whether a run of lgs has evaluations (Run.Evals):
// only such runs, of logs that evaluate without naming a target, take
// one from fit.Options.Target.
func Evaluated(lgs []*Log) bool {
	for _, lg := range lgs {
		for _, r := range lg.Runs {
			if len(r.Evals) > 0 {
				return true
			}
		}
	}
	return false
}
