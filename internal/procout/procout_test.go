package procout

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

func TestTail(t *testing.T) {
	for _, tc := range []struct {
		max    int
		writes []string
		want   string
	}{
		{5, []string{"abc"}, "abc"},
		{5, []string{"abc", "defg"}, "cdefg"},
		{5, []string{"0123456789"}, "56789"},
		{0, []string{"abc"}, ""},
		{-1, []string{"abc"}, ""},
	} {
		tl := &Tail{Max: tc.max}
		for _, w := range tc.writes {
			if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
				t.Errorf("Write(%q) = %d, %v", w, n, err)
			}
		}
		if got := tl.String(); got != tc.want {
			t.Errorf("max %d, writes %q: kept %q, want %q", tc.max, tc.writes, got, tc.want)
		}
	}
}

// Concurrent writers through Locked never interleave within a write.
func TestLocked(t *testing.T) {
	var b bytes.Buffer
	l := &Locked{W: &b}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			line := strings.Repeat(string(rune('a'+i)), 100) + "\n"
			for range 50 {
				l.Write([]byte(line))
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 400 {
		t.Fatalf("%d lines, want 400", len(lines))
	}
	for _, s := range lines {
		if s != strings.Repeat(s[:1], 100) {
			t.Fatalf("interleaved line %q", s)
		}
	}
}
