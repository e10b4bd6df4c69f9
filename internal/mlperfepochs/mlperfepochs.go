// Package mlperfepochs holds the epochs-to-target tables of MLPerf
// Training submissions that scripts/mlperfepochs extracts from the public
// results repositories (github.com/mlcommons/training_results_vX.Y; this
// directory's README.md has the commits, columns and licence), embedded so
// that a built binary carries them: validate's time-to-train cases fit
// their epochs law to them wherever scaleplan runs (docs/mlperf-epochs.md,
// docs/validation-mlperf.md).
package mlperfepochs

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// Dir is the directory of the tables, relative to the repository root:
// where scripts/mlperfepochs extract writes them and fit reads them.
const Dir = "internal/mlperfepochs"

//go:embed *.csv
var tables embed.FS

// FS returns the embedded tables, one file NAME.csv per benchmark.
func FS() fs.FS { return tables }

// Names returns the names of the embedded tables without ".csv" (bert,
// maskrcnn, resnet, retinanet, ssd), sorted.
func Names() []string {
	ents, err := tables.ReadDir(".")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), ".csv"))
	}
	slices.Sort(names)
	return names
}

// Read returns the embedded table of benchmark name ("resnet").
func Read(name string) ([]byte, error) {
	if !slices.Contains(Names(), name) {
		return nil, fmt.Errorf("mlperf epochs table %q: not embedded (want one of %s)", name, strings.Join(Names(), ", "))
	}
	return tables.ReadFile(name + ".csv")
}
