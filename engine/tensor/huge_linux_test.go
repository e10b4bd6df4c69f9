package tensor

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// The kernel records the advice in the flags of the mapping that holds a
// large slice ("hg" in /proc/self/smaps' VmFlags), whatever the system's
// huge page mode; a small slice is left alone.
func TestAllocAdvisesHugePages(t *testing.T) {
	big := Alloc(3 << 20) // 12 MiB: at least five whole 2 MiB pages
	if len(big) != 3<<20 || big[0] != 0 || big[len(big)-1] != 0 {
		t.Fatalf("Alloc(%d): %d values, first %v, last %v", 3<<20, len(big), big[0], big[len(big)-1])
	}
	mid := uintptr(unsafe.Pointer(&big[len(big)/2]))
	if flags := vmFlags(t, mid); !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the mapping of a 12 MiB slice has VmFlags %q, without hg (MADV_HUGEPAGE)", flags)
	}
}

// vmFlags returns the VmFlags of the mapping of this process that holds
// address a.
func vmFlags(t *testing.T, a uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := mappingRange(line); ok {
			in = lo <= a && a < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:"))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("no mapping holds %#x", a)
	return ""
}

// mappingRange parses the header line of an smaps entry, "lo-hi perms ...".
func mappingRange(line string) (lo, hi uintptr, ok bool) {
	r, _, found := strings.Cut(line, " ")
	if !found {
		return 0, 0, false
	}
	l, h, found := strings.Cut(r, "-")
	if !found {
		return 0, 0, false
	}
	a, err1 := strconv.ParseUint(l, 16, 64)
	b, err2 := strconv.ParseUint(h, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(a), uintptr(b), true
}
