package tensor

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks the kernel to back the whole 2 MiB pages inside s with
// transparent huge pages (madvise MADV_HUGEPAGE), where the system leaves
// that to each program ("madvise" in
// /sys/kernel/mm/transparent_hugepage/enabled). s must not have been
// written yet: pages already touched keep their 4 KiB pages. Errors are
// ignored; the advice changes speed, never results.
func adviseHuge(s []float32) {
	const huge = 2 << 20
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	lo := (p + huge - 1) &^ (huge - 1)
	hi := (p + uintptr(len(s))*4) &^ (huge - 1)
	if len(s)*4 < huge || hi <= lo {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*4)
	syscall.Madvise(b[lo-p:hi-p], syscall.MADV_HUGEPAGE)
}
