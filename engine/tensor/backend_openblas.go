//go:build openblas

package tensor

/*
#cgo LDFLAGS: -lopenblas
char *openblas_get_config(void);
char *openblas_get_corename(void);
void openblas_set_num_threads(int);
*/
import "C"

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
)

// impl is the BLAS that Gemm calls: OpenBLAS through gonum's cgo binding.
var impl blas.Float32 = netlib.Implementation{}

// tileGemm is false: Gemm splits large products into one block per
// goroutine, each calling OpenBLAS on its own thread, which blocks and
// packs the operands itself. OpenBLAS's own threads are turned off: on a
// machine with few cores their spin-waiting competes with the Go loops
// around every product, and layers call GemmSerial from their own
// parallel loops.
const tileGemm = false

func init() { C.openblas_set_num_threads(1) }

// Backend returns the name of the BLAS behind Gemm: "gonum" for the default
// pure-Go build, "openblas" for a build with -tags openblas.
func Backend() string { return "openblas" }

// BackendDetail returns a one-line description of the BLAS behind Gemm for
// logs: under the openblas tag the OpenBLAS build configuration, the kernel
// core it selected and the number of goroutines Gemm splits over, such as
// "openblas (OpenBLAS 0.3.21 DYNAMIC_ARCH ...; core SkylakeX; 2 goroutines)".
func BackendDetail() string {
	return fmt.Sprintf("openblas (%s; core %s; %d goroutines)",
		C.GoString(C.openblas_get_config()), CoreName(), Threads())
}

// CoreName returns the CPU kernel set OpenBLAS selected at load time, such
// as "SkylakeX" or "Haswell", or "" under the gonum backend. OpenBLAS reads
// OPENBLAS_CORETYPE from the environment before any Go code runs, so a
// wrong choice can only be fixed by setting that variable for the process;
// see docs/engine.md.
func CoreName() string { return C.GoString(C.openblas_get_corename()) }
