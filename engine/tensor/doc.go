// Package tensor provides the float32 tensors and the matrix product of
// scaleplan's reference training engine.
//
// # Tensors
//
// A T is a shape and a row-major []float32: the last dimension varies
// fastest. Tensors are plain values that share storage freely; Reshape and
// FromData make views, Resize reuses a buffer across steps whose batch size
// changes, and nothing is copied behind the caller's back.
//
// # Matrix product
//
// Gemm is the BLAS sgemm on row-major operands,
//
//	C = alpha * op(A) * op(B) + beta * C,   op(X) = X or Xᵀ
//
// with explicit leading dimensions, so that layers multiply sub-blocks and
// transposed views without copying. MatMul is the same on two-dimensional
// tensors. Both delegate to a well-kept BLAS rather than a kernel of our
// own, chosen at build time:
//
//	go build ./...                 gonum's pure-Go sgemm (Backend() == "gonum")
//	go build -tags openblas ./...  OpenBLAS through cgo   (Backend() == "openblas")
//
// The default needs no C toolchain and reaches 20 to 30 GFLOP/s on two cores;
// OpenBLAS is six to eight times faster but needs cgo and the system's
// libopenblas (Debian: libopenblas-dev). OpenBLAS picks its CPU kernels
// when the library loads, from OPENBLAS_CORETYPE if set; on CPUs it does
// not recognise it can pick a slower generic set, so set the variable for
// the process (for example OPENBLAS_CORETYPE=SkylakeX on AVX-512 Xeons)
// and check BackendDetail, which names the chosen core. docs/engine.md has
// measurements.
//
// # Threads
//
// Under the openblas backend OpenBLAS's own threads are turned off: Gemm
// splits a large product into one block per thread and calls the
// single-threaded OpenBLAS on each block from its own goroutine, and
// GemmSerial runs a product on the calling goroutine alone, for use inside
// parallel loops that already keep every core busy. On machines with few
// cores this avoids OpenBLAS's spin-waiting threads competing with the Go
// loops between products. Under the gonum backend Gemm computes C in
// tiles of 64×192, one gonum call each, on Threads() goroutines (GemmSerial
// one tile after another): gonum's sgemm runs such a tile on the calling
// goroutine, while left to split a larger product itself it cuts it into
// 64×64 blocks on goroutines of its own, which measured slower on one core
// and no faster on two for the weight gradients. SetThreads sets the
// number of goroutines (default GOMAXPROCS).
//
// # Parallel loops
//
// Parallel runs a loop body over fixed-size chunks of an index range on
// Threads() goroutines: the caller and helper goroutines that spin
// briefly between loops rather than park, because waking a parked one
// costs about 0.1 ms on a virtual machine's idle core. Because chunk boundaries do not depend on the
// number of threads, reductions that keep one partial result per chunk
// and combine them in order are bit-reproducible on any machine.
// ParallelWorkers also passes a worker index for per-worker scratch space.
// AddScaled is the vector update dst += alpha·s (SIMD through gonum's
// assembly).
//
// # Memory
//
// New storage comes from Alloc, which on Linux advises the kernel to back
// the whole 2 MiB pages of a large slice with transparent huge pages
// (madvise MADV_HUGEPAGE; most distributions leave huge pages to the
// programs that ask). The products stream through operands of a few MB
// whose rows lie pages apart, and with 4 KiB pages they miss the TLB more;
// docs/performance.md has the measurement.
package tensor
