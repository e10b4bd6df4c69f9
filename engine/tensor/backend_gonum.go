//go:build !openblas

package tensor

import (
	"fmt"
	"runtime"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// impl is the BLAS that Gemm calls: gonum's pure-Go implementation.
var impl blas.Float32 = gonum.Implementation{}

// tileGemm makes Gemm compute C in tiles of tileRows × tileCols, one gonum
// call each (see gemmTiles). gonum's sgemm cuts every product of four or
// more 64×64 blocks of C into such blocks, with the sum over k in chunks
// of 64, and runs the blocks on up to GOMAXPROCS goroutines of its own. On
// the MLP's products that made the weight gradients (Aᵀ·B) no faster on two
// cores than on one, and a tile of 64×192 (three blocks, which gonum runs
// on the calling goroutine, the sum over k in one pass) is faster than the
// same work in 64×64 blocks even on one core (docs/performance.md).
const tileGemm = true

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
