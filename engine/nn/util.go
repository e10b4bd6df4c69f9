package nn

import "scaleplan/engine/tensor"

// Work sizes for tensor.Parallel: the number of elements one task handles.
// Chunk boundaries depend only on these constants and the shapes, so the
// results of every reduction are independent of the number of threads.
const (
	elemGrain = 1 << 15 // elementwise loops
	rowGrain  = 1 << 13 // row reductions: elements per task
)

// grow returns (*buf)[:n], reallocating *buf if its capacity is short.
// The contents are unspecified.
func grow(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	return (*buf)[:n]
}

// grow64 is grow for float64 scratch buffers.
func grow64(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	return (*buf)[:n]
}

// fillRows sets each of the rows rows of the row-major matrix dst to row.
func fillRows(dst, row []float32, rows int) {
	cols := len(row)
	tensor.Parallel(rows, max(1, elemGrain/max(1, cols)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			copy(dst[i*cols:(i+1)*cols], row)
		}
	})
}

// addColSums adds the column sums of the rows×cols row-major matrix x to
// dst:
//
//	dst[j] += Σ_i x[i*cols+j]
//
// Rows are summed in float32 within fixed chunks and the chunk sums in
// float64, in chunk order. scratch is reused across calls.
func addColSums(dst, x []float32, rows, cols int, scratch *[]float32) {
	if rows == 0 || cols == 0 {
		return
	}
	grain := max(1, rowGrain/cols)
	nc := tensor.Chunks(rows, grain)
	part := grow(scratch, nc*cols)
	tensor.Parallel(rows, grain, func(lo, hi int) {
		p := part[(lo/grain)*cols : (lo/grain+1)*cols]
		copy(p, x[lo*cols:(lo+1)*cols])
		for i := lo + 1; i < hi; i++ {
			tensor.AddScaled(p, 1, x[i*cols:(i+1)*cols])
		}
	})
	for j := range cols {
		var s float64
		for c := range nc {
			s += float64(part[c*cols+j])
		}
		dst[j] += float32(s)
	}
}
