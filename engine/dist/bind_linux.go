package dist

import (
	"fmt"
	"math/bits"
	"runtime"
	"syscall"
	"unsafe"
)

// cpuMask is a CPU set as sched_getaffinity(2) and sched_setaffinity(2)
// take it: bit c of word c/64 for CPU c, 1024 CPUs.
type cpuMask [16]uint64

// getAffinity returns the CPU set of the calling thread.
func getAffinity() (cpuMask, error) {
	var m cpuMask
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m))); e != 0 {
		return m, e
	}
	return m, nil
}

// setAffinity sets the CPU set of the calling thread.
func setAffinity(m cpuMask) error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m))); e != 0 {
		return e
	}
	return nil
}

// nth returns the mask of the k-th CPU (counted from 0, modulo their
// number) in m, and false if m is empty.
func (m cpuMask) nth(k int) (cpuMask, bool) {
	n := 0
	for _, w := range m {
		n += bits.OnesCount64(w)
	}
	if n == 0 {
		return cpuMask{}, false
	}
	k %= n
	for i, w := range m {
		if c := bits.OnesCount64(w); k >= c {
			k -= c
			continue
		}
		for ; k > 0; k-- {
			w &= w - 1 // drop the lowest CPU
		}
		var one cpuMask
		one[i] = w & -w
		return one, true
	}
	return cpuMask{}, false
}

// bindThread locks the calling goroutine to its OS thread and binds the
// thread to the k-th CPU (modulo their number) of those it may run on.
// The returned function restores the thread's CPU set and unlocks it.
func bindThread(k int) (release func(), err error) {
	runtime.LockOSThread()
	all, err := getAffinity()
	if err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("reading the CPU affinity: %w", err)
	}
	one, ok := all.nth(k)
	if !ok {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("no CPU in the affinity set")
	}
	if err := setAffinity(one); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("binding to a CPU: %w", err)
	}
	return func() {
		// If the set cannot be restored, keep the thread locked so that
		// it dies with the goroutine rather than serve others on one CPU.
		if setAffinity(all) == nil {
			runtime.UnlockOSThread()
		}
	}, nil
}
