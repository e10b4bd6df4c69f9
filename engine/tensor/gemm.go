package tensor

import "gonum.org/v1/gonum/blas"

// Gemm computes the general matrix product
//
//	C = alpha * op(A) * op(B) + beta * C
//
// for row-major matrices, where op(A) is m×k, op(B) is k×n and C is m×n;
// op(X) is X, or Xᵀ when the corresponding trans flag is set. lda, ldb and
// ldc are the row strides of a, b and c as stored (so lda >= k when A is
// not transposed and lda >= m when it is). With beta = 0 the prior contents
// of c are ignored, NaNs included. The product runs on the BLAS sgemm of the
// backend named by Backend; no operand is copied or transposed in memory.
//
// Large products run on Threads() cores: under the openblas backend Gemm
// splits C into one block of rows (or columns, if C is wider than tall)
// per thread and runs a single-threaded OpenBLAS call on each block
// concurrently; under gonum it computes C in tiles of 64×192, one gonum
// call each, spread over the threads. Results are reproducible for a given
// number of threads; under openblas they may differ in the last bits
// between thread counts, as OpenBLAS picks its kernels by block size, while
// gonum's tiles give the same bits on any number of threads, and the same
// as GemmSerial.
//
// Gemm panics if a dimension is negative, a leading dimension is too small
// or a slice is too short for its dimensions.
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemm(true, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// GemmSerial is Gemm without splitting the product over goroutines, for
// use inside the parallel loops of layers that already keep every core
// busy: OpenBLAS, or gonum tile by tile, runs on the calling goroutine
// alone.
func GemmSerial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemm(false, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemm checks the arguments and runs the product, split over goroutines
// if split is set and the backend wants it.
func gemm(split, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(badGemmDims)
	}
	ra, ca := m, k
	if transA {
		ra, ca = k, m
	}
	rb, cb := k, n
	if transB {
		rb, cb = n, k
	}
	if lda < max(1, ca) || ldb < max(1, cb) || ldc < max(1, n) {
		panic(badLeading)
	}
	if m == 0 || n == 0 {
		return
	}
	if len(c) < (m-1)*ldc+n {
		panic(badGemm)
	}
	if k == 0 || alpha == 0 {
		scaleRows(m, n, beta, c, ldc)
		return
	}
	if len(a) < (ra-1)*lda+ca || len(b) < (rb-1)*ldb+cb {
		panic(badGemm)
	}
	tA, tB := blas.NoTrans, blas.NoTrans
	if transA {
		tA = blas.Trans
	}
	if transB {
		tB = blas.Trans
	}
	if tileGemm {
		gemmTiles(split, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	if !split || float64(m)*float64(n)*float64(k) < minSplitWork {
		impl.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	// Split C into Threads() blocks of rows (or of columns, if C is
	// wider than tall) and run a single-threaded sgemm on each
	// concurrently. Each call packs the whole of the other operand, so
	// the split is along the dimension that keeps that repacking
	// smallest, and into no more blocks than there are threads.
	p := Threads()
	if m >= n {
		Parallel(m, blockSize(m, p), func(lo, hi int) {
			aoff := lo * lda
			if transA {
				aoff = lo
			}
			impl.Sgemm(tA, tB, hi-lo, n, k, alpha, a[aoff:], lda, b, ldb, beta, c[lo*ldc:], ldc)
		})
		return
	}
	Parallel(n, blockSize(n, p), func(lo, hi int) {
		boff := lo
		if transB {
			boff = lo * ldb
		}
		impl.Sgemm(tA, tB, m, hi-lo, k, alpha, a, lda, b[boff:], ldb, beta, c[lo:], ldc)
	})
}

// The tiles of C that gemmTiles computes with one call each.
const tileRows, tileCols = 64, 192

// gemmTiles computes C in tiles of tileRows × tileCols with one sgemm call
// each: on Threads() goroutines if split is set and the product is large,
// else one after another on the calling goroutine. The tiles do not depend
// on the number of threads, and each is computed the same way on any
// goroutine, so the result is the same bit for bit whatever the thread
// count, and with or without split.
func gemmTiles(split bool, tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	cols := (n + tileCols - 1) / tileCols
	tiles := (m + tileRows - 1) / tileRows * cols
	run := func(lo, hi int) {
		for t := lo; t < hi; t++ {
			i0, j0 := t/cols*tileRows, t%cols*tileCols
			ao, bo := i0*lda, j0
			if tA == blas.Trans {
				ao = i0
			}
			if tB == blas.Trans {
				bo = j0 * ldb
			}
			impl.Sgemm(tA, tB, min(tileRows, m-i0), min(tileCols, n-j0), k, alpha, a[ao:], lda, b[bo:], ldb, beta, c[i0*ldc+j0:], ldc)
		}
	}
	if !split || float64(m)*float64(n)*float64(k) < minSplitWork {
		run(0, tiles)
		return
	}
	Parallel(tiles, 1, run)
}

// blockSize returns the size of the blocks that split d rows or columns
// over p threads: about d/p, rounded up to a multiple of 16.
func blockSize(d, p int) int {
	g := (d + p - 1) / p
	return (g + 15) / 16 * 16
}

// Products of fewer than minSplitWork multiply-adds run as one call.
const minSplitWork = 1 << 18

// scaleRows sets the m×n matrix c to beta*c, treating beta = 0 as a store
// of zeros.
func scaleRows(m, n int, beta float32, c []float32, ldc int) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		switch beta {
		case 0:
			clear(row)
		case 1:
		default:
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

// MatMul computes the matrix product
//
//	dst = op(a) * op(b)
//
// of two-dimensional tensors, with op(x) = xᵀ when the corresponding trans
// flag is set. dst is resized to m×n (see T.Resize); it must not share
// storage with a or b. MatMul panics if an operand is not two-dimensional
// or the inner dimensions differ.
func MatMul(dst, a, b *T, transA, transB bool) {
	if a.Rank() != 2 || b.Rank() != 2 {
		panic(badMatrix)
	}
	m, k := a.Shape[0], a.Shape[1]
	if transA {
		m, k = k, m
	}
	kb, n := b.Shape[0], b.Shape[1]
	if transB {
		kb, n = n, kb
	}
	if k != kb {
		panic(badMatMul)
	}
	dst.Resize(m, n)
	Gemm(transA, transB, m, n, k, 1, a.Data, max(1, a.Shape[1]), b.Data, max(1, b.Shape[1]), 0, dst.Data, max(1, n))
}
