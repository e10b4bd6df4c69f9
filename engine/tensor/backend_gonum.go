//go:build !openblas

package tensor

import (
	"fmt"
	"runtime"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// impl is the BLAS that Gemm calls: gonum's pure-Go implementation, which
// splits large products over up to GOMAXPROCS goroutines.
var impl blas.Float32 = gonum.Implementation{}

// splitGemm is false: gonum's sgemm splits large products itself.
const splitGemm = false

// Backend returns the name of the BLAS behind Gemm: "gonum" for the default
// pure-Go build, "openblas" for a build with -tags openblas.
func Backend() string { return "gonum" }

// BackendDetail returns a one-line description of the BLAS behind Gemm for
// logs: "gonum (pure Go, N goroutines)" with N = GOMAXPROCS.
func BackendDetail() string {
	return fmt.Sprintf("gonum (pure Go, %d goroutines)", runtime.GOMAXPROCS(0))
}

// CoreName returns the CPU kernel set OpenBLAS selected at load time, such
// as "SkylakeX" or "Haswell", or "" under the gonum backend. OpenBLAS reads
// OPENBLAS_CORETYPE from the environment before any Go code runs, so a
// wrong choice can only be fixed by setting that variable for the process;
// see docs/engine.md.
func CoreName() string { return "" }
