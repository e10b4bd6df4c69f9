package dist

import (
	"runtime"
	"testing"
)

func TestCPUMaskNth(t *testing.T) {
	var m cpuMask
	for _, c := range []int{1, 3, 64, 70} {
		m[c/64] |= 1 << (c % 64)
	}
	for k, want := range map[int]int{0: 1, 1: 3, 2: 64, 3: 70, 4: 1, 5: 3, 10: 64} {
		got, ok := m.nth(k)
		var one cpuMask
		one[want/64] = 1 << (want % 64)
		if !ok || got != one {
			t.Errorf("nth(%d) = %v, %v; want CPU %d", k, got, ok, want)
		}
	}
	if _, ok := (cpuMask{}).nth(0); ok {
		t.Error("nth of an empty set: ok")
	}
}

// bindThread leaves the thread on one CPU of its set, and its release
// restores the whole set.
func TestBindThread(t *testing.T) {
	runtime.LockOSThread() // keep this goroutine's thread across release
	defer runtime.UnlockOSThread()
	all, err := getAffinity()
	if err != nil {
		t.Skip("no affinity here:", err)
	}
	for k := range 3 {
		release, err := bindThread(k)
		if err != nil {
			t.Skip("binding refused here:", err)
		}
		got, err := getAffinity()
		want, _ := all.nth(k)
		if err != nil || got != want {
			t.Errorf("bound to CPU %d of the set: affinity %v, %v; want %v", k, got, err, want)
		}
		release()
		if got, err := getAffinity(); err != nil || got != all {
			t.Errorf("after release: affinity %v, %v; want %v", got, err, all)
		}
	}
}
